"""What policies that ask "who gets what" share: the tools that move value or grant allowances
(the Rust SDK's ``VALUE_TOOLS``) and the entity-id check."""

import re

#: Tools that move value or grant allowances; their facts list the movements.
VALUE_TOOLS = [
    "transfer_hbar_tool",
    "transfer_hbar_with_allowance_tool",
    "transfer_fungible_token_tool",
    "transfer_fungible_token_with_allowance_tool",
    "airdrop_fungible_token_tool",
    "transfer_non_fungible_token_tool",
    "transfer_non_fungible_token_with_allowance_tool",
    "approve_hbar_allowance_tool",
    "delete_hbar_allowance_tool",
    "approve_token_allowance_tool",
    "delete_token_allowance_tool",
    "approve_nft_allowance_tool",
    "create_account_tool",
    "delete_account_tool",
    "delete_non_fungible_token_allowance_tool",
    # ERC-20/721 through their contracts (the token is the contract's id).
    "transfer_erc20_tool",
    "transfer_erc721_tool",
    "mint_erc721_tool",
    # Signing a schedule may execute it: its facts are what the scheduled body moves.
    "sign_schedule_transaction_tool",
    # A new treasury receives the old treasury's whole balance of the token (all of it).
    "update_token_tool",
]

_ENTITY = re.compile(r"[0-9]{1,20}\.[0-9]{1,20}\.[0-9]{1,20}")


def is_entity_id(value) -> bool:
    """Whether ``value`` is an entity id ``shard.realm.num``."""
    return isinstance(value, str) and _ENTITY.fullmatch(value) is not None
