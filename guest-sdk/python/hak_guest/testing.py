"""Fakes of the host imports for native unit tests (``python3 -m unittest``), and stage inputs
to call a plugin with: ``load(factory, config)`` describes it, ``call(plugin, method, stage,
params, facts)`` runs one stage the way the component would."""

from typing import Dict, List, Optional, Tuple

_state: Dict[str, str] = {}
_spent: Dict[str, int] = {}
_logs: List[Tuple[str, str]] = []
_topic_messages: List[Tuple[str, str]] = []
_now_ms = [1_700_000_000_000]
# What ``host.exchange_rate()`` answers: (hbar, cents) or the reason there is none.
_rate: List[object] = ["capability rates is not granted (testing.set_exchange_rate)"]


def reset() -> None:
    """Forget the scratchpad, budgets, log, topic messages, the fake clock and rate."""
    _state.clear()
    _spent.clear()
    _logs.clear()
    _topic_messages.clear()
    _now_ms[0] = 1_700_000_000_000
    _rate[0] = "capability rates is not granted (testing.set_exchange_rate)"


def logs() -> List[Tuple[str, str]]:
    return list(_logs)


def set_now_unix_ms(ms: int) -> None:
    _now_ms[0] = ms


def log(level: str, message: str) -> None:
    _logs.append((level, message))


def state_get(key: str) -> Optional[str]:
    return _state.get(key)


def state_set(key: str, value: str) -> None:
    _state[key] = value


def state_delete(key: str) -> None:
    _state.pop(key, None)


def now_unix_ms() -> int:
    return _now_ms[0]


def reserve(key: str, amount: int, limit: int, window_seconds: int) -> int:
    from .host import OverLimit

    total = _spent.get(key, 0) + amount
    if total > limit:
        raise OverLimit(_spent.get(key, 0))
    _spent[key] = total
    return total


def spent(key: str, window_seconds: int) -> int:
    return _spent.get(key, 0)


def submit_topic_message(topic_id: str, message: str) -> str:
    _topic_messages.append((topic_id, message))
    return f"0.0.1001@{len(_topic_messages)}.0"


def create_topic(memo: str) -> str:
    return "0.0.9999"


def topic_messages() -> List[Tuple[str, str]]:
    return list(_topic_messages)


def set_exchange_rate(rate) -> None:
    """What ``host.exchange_rate()`` answers: ``(hbar_equivalent, cent_equivalent)``, or a string,
    the reason there is none."""
    _rate[0] = rate


def exchange_rate():
    from .host import ExchangeRate

    if isinstance(_rate[0], str):
        raise RuntimeError(_rate[0])
    hbars, cents = _rate[0]
    return ExchangeRate(hbars, cents, 2**63)
