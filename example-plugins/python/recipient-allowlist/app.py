""""Recipient Allowlist Policy" in Python: the twin of example-plugins/rust/recipient-allowlist
(same config, verdicts, messages and codes). Value and allowances go only to allowlisted
accounts; a new account (no id yet) is allowed unless allowNewAccounts is false.

Config: {"accounts": ["0.0.1002"], "allowNewAccounts": true}.
"""

import json

from hak_guest import AbstractPolicy, Block, register
from hak_guest.exports import Events, Hooks, Inputs, Plugin, Policy  # noqa: F401 (the component's exports)
from hak_guest.facts import VALUE_TOOLS, is_entity_id


class RecipientAllowlistPolicy(AbstractPolicy):
    def __init__(self, config: dict):
        for key in config:
            if key not in ("accounts", "allowNewAccounts"):
                raise ValueError(f"invalid config: unknown field `{key}`")
        accounts = config.get("accounts")
        if not isinstance(accounts, list):
            raise ValueError("invalid config: missing field `accounts`")
        for i, account in enumerate(accounts):
            if not is_entity_id(account):
                raise ValueError(f"invalid config: accounts.{i}: {json.dumps(account)} is not an account id (0.0.x)")
        self.accounts = set(accounts)
        self.allow_new = config.get("allowNewAccounts", True)

    @property
    def name(self) -> str:
        return "Recipient Allowlist Policy"

    @property
    def description(self) -> str:
        return "Value and allowances may only go to allowlisted accounts"

    @property
    def relevant_tools(self) -> list:
        return VALUE_TOOLS

    @property
    def reads(self) -> dict:
        return {"*": ["facts"]}

    async def should_block_post_params_normalization(self, context, params, method):
        for m in params.facts.movements:
            ok = self.allow_new if m.to is None else m.to in self.accounts
            if not ok:
                return Block(
                    f"{m.to or 'a new account'} is not an allowlisted recipient",
                    "RECIPIENT_NOT_ALLOWED",
                    {"recipient": m.to},
                )
        return False


register(RecipientAllowlistPolicy)
