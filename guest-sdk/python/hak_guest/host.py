"""What every plugin may ask the host (``host``, ``budget``) and what a granted capability lets
it do (``hedera``) or read (``rates``). Inside a component these are the contract's imports; in a native test run
they are the fakes of ``hak_guest.testing``."""

from typing import Optional

try:  # inside a component (componentize-py generates ``wit_world``)
    from wit_world.imports import budget as _budget
    from wit_world.imports import hedera as _hedera
    from wit_world.imports import host as _host
    from wit_world.imports import rates as _rates
    from wit_world.imports import types as _types
    from componentize_py_types import Err as _Err

    _LEVELS = {
        "trace": _types.LogLevel.TRACE,
        "debug": _types.LogLevel.DEBUG,
        "info": _types.LogLevel.INFO,
        "warn": _types.LogLevel.WARN,
        "error": _types.LogLevel.ERROR,
    }
    IN_COMPONENT = True
except ImportError:  # a native test run
    from . import testing as _fake

    IN_COMPONENT = False


class OverLimit(Exception):
    """``budget.reserve`` would pass its limit; ``spent`` is what the window already holds."""

    def __init__(self, spent: int):
        super().__init__(f"over the limit ({spent} already spent or reserved)")
        self.spent = spent


class Unavailable(Exception):
    """The state store could not answer: a policy must block (never fail open)."""


def log(level: str, message: str) -> None:
    """``level``: trace, debug, info, warn or error."""
    if IN_COMPONENT:
        _host.log(_LEVELS.get(level, _types.LogLevel.INFO), str(message))
    else:
        _fake.log(level, str(message))


def info(message: str) -> None:
    log("info", message)


def warn(message: str) -> None:
    log("warn", message)


def state_get(key: str) -> Optional[str]:
    return _host.state_get(key) if IN_COMPONENT else _fake.state_get(key)


def state_set(key: str, value: str) -> None:
    """Raises ``ValueError`` when the plugin's state cap would be passed."""
    if not IN_COMPONENT:
        return _fake.state_set(key, value)
    try:
        _host.state_set(key, value)
    except _Err as e:
        raise ValueError(e.value) from None


def state_delete(key: str) -> None:
    _host.state_delete(key) if IN_COMPONENT else _fake.state_delete(key)


def now_unix_ms() -> int:
    return _host.now_unix_ms() if IN_COMPONENT else _fake.now_unix_ms()


def reserve(key: str, amount: int, limit: int, window_seconds: int) -> int:
    """Reserve ``amount`` under ``key`` if the window's total stays within ``limit``; the total.
    Raises ``OverLimit`` or ``Unavailable``. The host settles the reservation by the call's
    outcome (kept when its transaction applied or its bytes were handed out)."""
    if not IN_COMPONENT:
        return _fake.reserve(key, amount, limit, window_seconds)
    try:
        return _budget.reserve(key, amount, limit, window_seconds)
    except _Err as e:
        if isinstance(e.value, _budget.ReserveError_OverLimit):
            raise OverLimit(e.value.value) from None
        raise Unavailable(e.value.value) from None


def spent(key: str, window_seconds: int) -> int:
    if not IN_COMPONENT:
        return _fake.spent(key, window_seconds)
    try:
        return _budget.spent(key, window_seconds)
    except _Err as e:
        raise Unavailable(e.value) from None


def submit_topic_message(topic_id: str, message: str) -> str:
    """Capability ``hedera:submit-topic-message``; the transaction id. Raises ``RuntimeError``."""
    if not IN_COMPONENT:
        return _fake.submit_topic_message(topic_id, message)
    try:
        return _hedera.submit_topic_message(topic_id, message)
    except _Err as e:
        raise RuntimeError(e.value) from None


def create_topic(memo: str) -> str:
    """Capability ``hedera:create-topic``; the new topic's id. Raises ``RuntimeError``."""
    if not IN_COMPONENT:
        return _fake.create_topic(memo)
    try:
        return _hedera.create_topic(memo)
    except _Err as e:
        raise RuntimeError(e.value) from None


class ExchangeRate:
    """``cent_equivalent`` US cents buy ``hbar_equivalent`` HBAR until ``expiration_seconds``."""

    def __init__(self, hbar_equivalent: int, cent_equivalent: int, expiration_seconds: int):
        self.hbar_equivalent = hbar_equivalent
        self.cent_equivalent = cent_equivalent
        self.expiration_seconds = expiration_seconds


def exchange_rate() -> ExchangeRate:
    """Capability ``rates`` (contract 0.2.2): the network's HBAR exchange rate in force. Raises
    ``RuntimeError`` with the host's reason when there is none (a policy counting in dollars
    must then block)."""
    if not IN_COMPONENT:
        return _fake.exchange_rate()
    try:
        r = _rates.current()
    except _Err as e:
        raise RuntimeError(e.value) from None
    return ExchangeRate(r.hbar_equivalent, r.cent_equivalent, r.expiration_seconds)
