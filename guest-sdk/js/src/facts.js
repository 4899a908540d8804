// What a tool call does, as the host states it (contract 0.2.0 `facts`): read from the stage
// input's typed record, not from the params JSON, so policies agree with the host and across
// languages. Amounts are BigInt; "all of it" (a deleted account's balance, every serial) is ALL.

/** u64 max: "all of it". */
export const ALL = (1n << 64n) - 1n;

const asset = (a) => (a.tag === 'hbar' ? { kind: 'hbar' } : { kind: a.tag, id: a.val });

/**
 * The host's facts record in plain JS shapes:
 * `{movements: [{asset: {kind: 'hbar'|'token'|'nft', id?}, to, amount: BigInt, via: 'transfer'|'allowance'}],
 *   source, tokens, changes: [{kind, id}], memo, scheduled}`; `undefined` before normalisation.
 */
export function fromHost(raw) {
  if (raw === undefined || raw === null) return undefined;
  return Object.freeze({
    movements: raw.movements.map((m) => Object.freeze({ asset: asset(m.asset), to: m.to ?? undefined, amount: BigInt(m.amount), via: m.via })),
    source: raw.source ?? undefined,
    tokens: [...raw.tokens],
    changes: raw.changes.map((c) => Object.freeze({ kind: c.kind, id: c.id })),
    memo: raw.memo ?? undefined,
    scheduled: raw.scheduled,
  });
}

/** Tools that move value or grant allowances (the Rust SDK's `VALUE_TOOLS`). */
export const VALUE_TOOLS = Object.freeze([
  'transfer_hbar_tool', 'transfer_hbar_with_allowance_tool', 'transfer_fungible_token_tool',
  'transfer_fungible_token_with_allowance_tool', 'airdrop_fungible_token_tool',
  'transfer_non_fungible_token_tool', 'transfer_non_fungible_token_with_allowance_tool',
  'approve_hbar_allowance_tool', 'delete_hbar_allowance_tool', 'approve_token_allowance_tool',
  'delete_token_allowance_tool', 'approve_nft_allowance_tool', 'create_account_tool',
  'delete_account_tool', 'delete_non_fungible_token_allowance_tool',
  // ERC-20/721 through their contracts (the token is the contract's id).
  'transfer_erc20_tool', 'transfer_erc721_tool', 'mint_erc721_tool',
  // Signing a schedule may execute it: its facts are what the scheduled body moves.
  'sign_schedule_transaction_tool',
  // A new treasury receives the old treasury's whole balance of the token (all of it).
  'update_token_tool',
]);

/** Whether `s` is an entity id `shard.realm.num`. */
export function isEntityId(s) {
  return typeof s === 'string' && /^\d{1,20}\.\d{1,20}\.\d{1,20}$/.test(s);
}

export const facts = Object.freeze({ ALL, VALUE_TOOLS, isEntityId });
