// What a tool call moves to whom, from its normalised params: the JS twin of the Rust SDK's
// `hak_guest::facts` (same tools, same rules), so policies agree across languages. Amounts are
// BigInt (64-bit values arrive as decimal strings).

const list = (v) => (Array.isArray(v) ? v : []);
const text = (v) => (typeof v === 'string' ? v : undefined);
const amount = (v) => {
  if (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) return BigInt(v.trim());
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  return undefined;
};
const U64_MAX = (1n << 64n) - 1n;

function credits(out, entries, asset) {
  for (const e of list(entries)) {
    const a = amount(e && e.amount);
    if (a !== undefined && a > 0n) out.push({ asset, to: text(e.accountId), amount: a, via: 'transfer' });
  }
}

/** `[{asset: {kind: 'hbar'|'token'|'nft', id?}, to, amount: BigInt, via: 'transfer'|'allowance'}]` */
export function movements(method, n) {
  const out = [];
  if (n === null || typeof n !== 'object' || Array.isArray(n)) return out;
  const token = () => text(n.tokenId) ?? '';
  switch (method) {
    case 'transfer_hbar_tool':
    case 'transfer_hbar_with_allowance_tool':
      credits(out, n.hbarTransfers, { kind: 'hbar' });
      break;
    case 'transfer_fungible_token_tool':
    case 'transfer_fungible_token_with_allowance_tool':
    case 'airdrop_fungible_token_tool':
      credits(out, n.tokenTransfers, { kind: 'token', id: token() });
      break;
    case 'transfer_non_fungible_token_tool':
    case 'transfer_non_fungible_token_with_allowance_tool':
      for (const r of list(n.recipients)) out.push({ asset: { kind: 'nft', id: token() }, to: text(r && r.recipientId), amount: 1n, via: 'transfer' });
      break;
    case 'approve_hbar_allowance_tool':
    case 'delete_hbar_allowance_tool':
      for (const a of list(n.hbarApprovals)) {
        const v = amount(a && a.amount) ?? 0n;
        out.push({ asset: { kind: 'hbar' }, to: text(a && a.spenderAccountId), amount: v > 0n ? v : 0n, via: 'allowance' });
      }
      break;
    case 'approve_token_allowance_tool':
    case 'delete_token_allowance_tool':
      for (const a of list(n.tokenApprovals)) {
        const v = amount(a && a.amount) ?? 0n;
        out.push({ asset: { kind: 'token', id: text(a && a.tokenId) ?? '' }, to: text(a && a.spenderAccountId), amount: v > 0n ? v : 0n, via: 'allowance' });
      }
      break;
    case 'approve_nft_allowance_tool': {
      const count = n.allSerials === true ? U64_MAX : BigInt(list(n.serialNumbers).length);
      out.push({ asset: { kind: 'nft', id: token() }, to: text(n.spenderAccountId), amount: count, via: 'allowance' });
      break;
    }
    case 'create_account_tool': {
      const a = amount(n.initialBalance);
      if (a !== undefined && a > 0n) out.push({ asset: { kind: 'hbar' }, to: undefined, amount: a, via: 'transfer' });
      break;
    }
    case 'delete_account_tool':
      out.push({ asset: { kind: 'hbar' }, to: text(n.transferAccountId), amount: U64_MAX, via: 'transfer' });
      break;
    default:
  }
  return out;
}

/** Tools that move value or grant allowances (the Rust SDK's `VALUE_TOOLS`). */
export const VALUE_TOOLS = Object.freeze([
  'transfer_hbar_tool', 'transfer_hbar_with_allowance_tool', 'transfer_fungible_token_tool',
  'transfer_fungible_token_with_allowance_tool', 'airdrop_fungible_token_tool',
  'transfer_non_fungible_token_tool', 'transfer_non_fungible_token_with_allowance_tool',
  'approve_hbar_allowance_tool', 'delete_hbar_allowance_tool', 'approve_token_allowance_tool',
  'delete_token_allowance_tool', 'approve_nft_allowance_tool', 'create_account_tool',
  'delete_account_tool', 'delete_non_fungible_token_allowance_tool',
]);

/** Whether `s` is an entity id `shard.realm.num`. */
export function isEntityId(s) {
  return typeof s === 'string' && /^\d{1,20}\.\d{1,20}\.\d{1,20}$/.test(s);
}

export const facts = Object.freeze({ movements, VALUE_TOOLS, isEntityId });
