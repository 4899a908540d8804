""""Max Recipients Policy": the kit's MaxRecipientsPolicy in Python, the twin of
example-plugins/rust/max-recipients (same config, verdicts, messages and codes).

Config: {"maxRecipients": 2, "additionalTools": ["my_tool"],
"customCounts": {"my_tool": {"field": "payouts", "amountField": "amount"}, "other": {"count": 3}}}.
The EVM tools (transfer_erc20_tool, transfer_erc721_tool, mint_erc721_tool), listed in
additionalTools, count the recipients of the host's facts.
"""

import json
import re

from hak_guest import AbstractPolicy, Block, host, register
from hak_guest.exports import Events, Hooks, Inputs, Plugin, Policy  # noqa: F401 (the component's exports)

DEFAULT_TOOLS = [
    "transfer_hbar_tool",
    "transfer_hbar_with_allowance_tool",
    "airdrop_fungible_token_tool",
    "transfer_fungible_token_tool",
    "transfer_fungible_token_with_allowance_tool",
    "transfer_non_fungible_token_with_allowance_tool",
    "transfer_non_fungible_token_tool",
]
FACT_COUNTED = ["transfer_erc20_tool", "transfer_erc721_tool", "mint_erc721_tool"]
FIELDS = {
    "transfer_hbar_tool": "hbarTransfers",
    "transfer_hbar_with_allowance_tool": "hbarTransfers",
    "airdrop_fungible_token_tool": "tokenTransfers",
    "transfer_fungible_token_tool": "tokenTransfers",
    "transfer_fungible_token_with_allowance_tool": "tokenTransfers",
    "transfer_non_fungible_token_tool": "transfers",
    "transfer_non_fungible_token_with_allowance_tool": "transfers",
}
_INTEGER = re.compile(r"[+-]?[0-9]+")
_I128 = 2**127  # amounts are 128-bit signed; computed once, not per amount


def is_positive(value) -> bool:
    """An amount (a decimal string or a JSON number) above zero; anything else is an error."""
    if isinstance(value, bool):
        raise ValueError(f"bad amount {json.dumps(value)}")
    if isinstance(value, (int, float)):
        return value > 0
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        n = int(value)
        if -_I128 <= n < _I128:
            return n > 0
    raise ValueError(f"bad amount {json.dumps(value)}")


class MaxRecipientsPolicy(AbstractPolicy):
    def __init__(self, config: dict):
        for key in sorted(config):
            if key not in ("maxRecipients", "additionalTools", "customCounts"):
                raise ValueError(f"MaxRecipientsPolicy: invalid config: unknown field `{key}`")
        m = config.get("maxRecipients")
        if isinstance(m, bool) or not isinstance(m, int) or m <= 0:
            raise ValueError(
                f"MaxRecipientsPolicy: 'maxRecipients' must be a positive integer. Received: {json.dumps(m)}"
            )
        self.max = m
        self.custom = dict(config.get("customCounts") or {})
        for tool, rule in self.custom.items():
            if ("field" in rule) == ("count" in rule):
                raise ValueError(
                    f"MaxRecipientsPolicy: customCounts.{tool} needs exactly one of 'field' or 'count'"
                )
        self.tools = DEFAULT_TOOLS + list(config.get("additionalTools") or [])

    @property
    def name(self) -> str:
        return "Max Recipients Policy"

    @property
    def description(self) -> str:
        return f"Limits the maximum number of recipients to {self.max}"

    @property
    def relevant_tools(self) -> list:
        return self.tools

    @property
    def reads(self) -> dict:
        table = {tool: ([] if "count" in rule else ["params"]) for tool, rule in self.custom.items()}
        table.update({tool: ["facts"] for tool in FACT_COUNTED})
        table["*"] = ["params"]
        return table

    async def should_block_post_params_normalization(self, context, params, method):
        if method in self.custom:
            count = self.count_with_rule(self.custom[method], params)
        elif method in FACT_COUNTED:
            count = len(params.facts.movements)
        else:
            count = self.count_builtin(method, params)
        if count > self.max:
            host.warn(
                f"MaxRecipientsPolicy: {method} tool call rejected, expected max {self.max} recipients, got {count}"
            )
            return Block(
                f"{count} recipients exceed the maximum of {self.max}",
                "MAX_RECIPIENTS_EXCEEDED",
                {"recipientCount": count, "maxRecipients": self.max},
            )
        return False

    @staticmethod
    def count_builtin(method: str, params) -> int:
        field = FIELDS.get(method)
        if field is None:
            raise ValueError(
                f"MaxRecipientsPolicy: Unhandled tool '{method}'. Provide a custom strategy in the constructor."
            )
        normalised = params.normalized_params
        if not isinstance(normalised, dict):
            raise ValueError(f"cannot read stage params for {method}: no normalisedParams")
        entries = normalised.get(field)
        if entries is None:
            return 0
        if not isinstance(entries, list):
            raise ValueError(f"cannot read normalisedParams for {method}: {field} is not a list")
        count = 0
        for entry in entries:
            if not isinstance(entry, dict):
                raise ValueError(f"cannot read normalisedParams for {method}: an entry of {field} is not an object")
            amount = entry.get("amount")
            # The kit's _isRecipient: no amount (an NFT) counts; otherwise it must be > 0.
            count += 1 if amount is None or is_positive(amount) else 0
        return count

    @staticmethod
    def count_with_rule(rule: dict, params) -> int:
        if "count" in rule:
            return int(rule["count"])
        at = params.normalized_params
        for key in rule["field"].split("."):
            at = at.get(key) if isinstance(at, dict) else None
        if not isinstance(at, list):
            return 0
        amount_field = rule.get("amountField")
        if amount_field is None:
            return len(at)

        def counts(item) -> bool:
            value = item.get(amount_field) if isinstance(item, dict) else None
            if value is None:
                return True
            try:
                return is_positive(value)
            except ValueError:
                return False

        return sum(1 for item in at if counts(item))


register(MaxRecipientsPolicy)
