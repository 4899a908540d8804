""""Spend Limit Policy" in Python: the twin of example-plugins/rust/spend-limit (same config,
caps, rolling per-context budget through the host's atomic budget.reserve, messages and codes).

Config: {"maxHbarPerRecipient": 10, "maxHbarPerTransaction": "25.5", "dailyHbarBudget": 100,
"tokens": {"0.0.5005": {"maxPerRecipient": 1000, "maxPerTransaction": 1500, "dailyBudget": 5000}},
"budgetWindowSeconds": 86400}. HBAR caps in HBAR (up to 8 decimals), token caps in base units.
"""

import json
import re

from hak_guest import AbstractPolicy, Block, host, register
from hak_guest.exports import Events, Hooks, Inputs, Plugin, Policy  # noqa: F401 (the component's exports)
from hak_guest.facts import VALUE_TOOLS, is_entity_id

FIELDS = ("maxHbarPerRecipient", "maxHbarPerTransaction", "dailyHbarBudget", "tokens", "budgetWindowSeconds")
TOKEN_FIELDS = ("maxPerRecipient", "maxPerTransaction", "dailyBudget")
U64_MAX = 2**64 - 1
_DECIMAL = re.compile(r"([0-9]*)(?:\.([0-9]*))?")


def decimal_units(text: str, decimals: int):
    """Decimal text with at most ``decimals`` places -> integer units, or None."""
    m = _DECIMAL.fullmatch(text)
    if m is None or (m.group(1) == "" and (m.group(2) or "") == ""):
        return None
    frac = m.group(2) or ""
    if len(frac) > decimals:
        return None
    return int(m.group(1) or "0") * 10**decimals + int(frac or "0") * 10 ** (decimals - len(frac))


def cap(field: str, value, decimals: int):
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        # As JavaScript writes a number: an integral float without its ".0".
        text = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    else:
        raise ValueError(f"invalid config: {field}: {json.dumps(value)} is not an amount")
    units = decimal_units(text, decimals)
    if units is None:
        raise ValueError(
            f"invalid config: {field}: {json.dumps(text)} is not a non-negative amount with at most {decimals} decimals"
        )
    return units


def hbar_text(tinybars: int) -> str:
    whole, frac = divmod(tinybars, 100_000_000)
    if frac == 0:
        return f"{whole} HBAR"
    return f"{whole}.{str(frac).rjust(8, '0').rstrip('0')} HBAR"


def amount_text(asset: str, units: int) -> str:
    return hbar_text(units) if asset == "hbar" else f"{units} units of {asset}"


class SpendLimitPolicy(AbstractPolicy):
    def __init__(self, config: dict):
        for key in config:
            if key not in FIELDS:
                raise ValueError(f"invalid config: unknown field `{key}`")
        self.caps = {
            "hbar": {
                "per_recipient": cap("maxHbarPerRecipient", config.get("maxHbarPerRecipient"), 8),
                "per_transaction": cap("maxHbarPerTransaction", config.get("maxHbarPerTransaction"), 8),
                "budget": cap("dailyHbarBudget", config.get("dailyHbarBudget"), 8),
            }
        }
        for token, t in (config.get("tokens") or {}).items():
            if not is_entity_id(token):
                raise ValueError(f"invalid config: tokens.{token}: not a token id (0.0.x)")
            for key in t:
                if key not in TOKEN_FIELDS:
                    raise ValueError(f"invalid config: unknown field `{key}`")
            self.caps[token] = {
                "per_recipient": cap(f"tokens.{token}.maxPerRecipient", t.get("maxPerRecipient"), 0),
                "per_transaction": cap(f"tokens.{token}.maxPerTransaction", t.get("maxPerTransaction"), 0),
                "budget": cap(f"tokens.{token}.dailyBudget", t.get("dailyBudget"), 0),
            }
        if not any(v is not None for c in self.caps.values() for v in c.values()):
            raise ValueError(
                "invalid config: set at least one cap (maxHbarPerRecipient, maxHbarPerTransaction, dailyHbarBudget or tokens)"
            )
        window = config.get("budgetWindowSeconds", 86400)
        if not (1 <= window <= 366 * 86400):
            raise ValueError("invalid config: budgetWindowSeconds: must be 1–31622400")
        self.window = int(window)

    @property
    def name(self) -> str:
        return "Spend Limit Policy"

    @property
    def description(self) -> str:
        return "Caps value per recipient, per transaction and per rolling day"

    @property
    def relevant_tools(self) -> list:
        return VALUE_TOOLS

    @property
    def reads(self) -> dict:
        return {"*": ["facts"]}

    def by_asset(self, movements):
        out = {}
        for m in movements:
            key = "hbar" if m.asset.kind == "hbar" else m.asset.token_id if m.asset.kind == "token" else None
            if key is not None and key in self.caps:
                out.setdefault(key, []).append(m)
        return sorted(out.items())

    async def should_block_post_params_normalization(self, context, params, method):
        for asset, ms in self.by_asset(params.facts.movements):
            caps = self.caps[asset]
            total = 0
            for m in ms:
                total += m.amount
                if caps["per_recipient"] is not None and m.amount > caps["per_recipient"]:
                    return Block(
                        f"{amount_text(asset, m.amount)} to {m.to or 'a new account'} exceeds the per-recipient limit of {amount_text(asset, caps['per_recipient'])}",
                        "SPEND_LIMIT_RECIPIENT",
                        {"asset": asset, "recipient": m.to, "amount": str(m.amount), "limit": str(caps["per_recipient"])},
                    )
            if caps["per_transaction"] is not None and total > caps["per_transaction"]:
                return Block(
                    f"{amount_text(asset, total)} in one call exceeds the per-transaction limit of {amount_text(asset, caps['per_transaction'])}",
                    "SPEND_LIMIT_TRANSACTION",
                    {"asset": asset, "amount": str(total), "limit": str(caps["per_transaction"])},
                )
            if caps["budget"] is not None:

                def over_budget(spent: int) -> Block:
                    return Block(
                        f"{amount_text(asset, total)} would exceed the budget of {amount_text(asset, caps['budget'])} per {self.window} s ({amount_text(asset, spent)} already spent)",
                        "SPEND_LIMIT_BUDGET",
                        {"asset": asset, "amount": str(total), "spent": str(spent), "budget": str(caps["budget"])},
                    )

                if total > U64_MAX:
                    return over_budget(0)
                # One atomic step: the host commits it if the transaction applies (or may have).
                try:
                    host.reserve(f"spent:{asset}", total, min(caps["budget"], U64_MAX), self.window)
                except host.OverLimit as e:
                    return over_budget(e.spent)
                except host.Unavailable as e:
                    return Block(f"the budget cannot be checked: {e}", "SPEND_LIMIT_UNAVAILABLE", {"asset": asset})
        return False


register(SpendLimitPolicy)
