// "Spend Limit Policy" in JavaScript: the twin of example-plugins/rust/spend-limit (same
// config, caps, rolling per-context budget through the host's atomic `budget.reserve`, messages and codes).
import { definePlugin, Stage, allow, block, host, facts } from '@hak/guest';

const FIELDS = ['maxHbarPerRecipient', 'maxHbarPerTransaction', 'dailyHbarBudget', 'tokens', 'budgetWindowSeconds'];
const TOKEN_FIELDS = ['maxPerRecipient', 'maxPerTransaction', 'dailyBudget'];

/** Decimal text with at most `decimals` places → BigInt units, or undefined. */
function decimalUnits(text, decimals) {
  const m = /^(\d*)(?:\.(\d*))?$/.exec(text);
  if (!m || (m[1] === '' && (m[2] ?? '') === '')) return undefined;
  const frac = m[2] ?? '';
  if (frac.length > decimals) return undefined;
  return BigInt(m[1] || '0') * 10n ** BigInt(decimals) + BigInt(frac || '0') * 10n ** BigInt(decimals - frac.length);
}

function cap(field, v, decimals) {
  if (v === undefined) return undefined;
  let text;
  if (typeof v === 'string') text = v.trim();
  else if (typeof v === 'number') text = String(v);
  else throw `invalid config: ${field}: ${JSON.stringify(v)} is not an amount`;
  const units = decimalUnits(text, decimals);
  if (units === undefined) {
    throw `invalid config: ${field}: ${JSON.stringify(text)} is not a non-negative amount with at most ${decimals} decimals`;
  }
  return units;
}

function hbarText(tinybars) {
  const whole = tinybars / 100000000n;
  const frac = tinybars % 100000000n;
  if (frac === 0n) return `${whole} HBAR`;
  return `${whole}.${frac.toString().padStart(8, '0').replace(/0+$/, '')} HBAR`;
}
const amountText = (asset, units) => (asset === 'hbar' ? hbarText(units) : `${units} units of ${asset}`);
const assetKey = (a) => (a.kind === 'hbar' ? 'hbar' : a.kind === 'token' ? a.id : undefined);

/**
 * The movements of each capped asset: `{assets}` in order, `{groups}` from asset to movements.
 * Indexed loops and a key list rather than `for…of`, spreads, array destructuring and a sort
 * callback: each of those runs the engine's own JavaScript (iterators, the sort) in its
 * interpreter, on every call.
 */
function byAsset(state, ms) {
  const keys = [];
  const out = new Map();
  for (let i = 0; i < ms.length; i++) {
    const m = ms[i];
    const key = assetKey(m.asset);
    if (key === undefined || !state.caps.has(key)) continue;
    const list = out.get(key);
    if (list === undefined) {
      keys.push(key);
      out.set(key, [m]);
    } else {
      list.push(m);
    }
  }
  // Code-unit order, as `a < b` orders strings.
  if (keys.length > 1) keys.sort();
  return { assets: keys, groups: out };
}

export default definePlugin({
  describe(config) {
    for (const key of Object.keys(config)) {
      if (!FIELDS.includes(key)) throw `invalid config: unknown field \`${key}\``;
    }
    const caps = new Map();
    const hbar = {
      perRecipient: cap('maxHbarPerRecipient', config.maxHbarPerRecipient, 8),
      perTransaction: cap('maxHbarPerTransaction', config.maxHbarPerTransaction, 8),
      budget: cap('dailyHbarBudget', config.dailyHbarBudget, 8),
    };
    caps.set('hbar', hbar);
    for (const [id, t] of Object.entries(config.tokens ?? {})) {
      if (!facts.isEntityId(id)) throw `invalid config: tokens.${id}: not a token id (0.0.x)`;
      for (const key of Object.keys(t)) {
        if (!TOKEN_FIELDS.includes(key)) throw `invalid config: unknown field \`${key}\``;
      }
      caps.set(id, {
        perRecipient: cap(`tokens.${id}.maxPerRecipient`, t.maxPerRecipient, 0),
        perTransaction: cap(`tokens.${id}.maxPerTransaction`, t.maxPerTransaction, 0),
        budget: cap(`tokens.${id}.dailyBudget`, t.dailyBudget, 0),
      });
    }
    const any = (c) => c.perRecipient !== undefined || c.perTransaction !== undefined || c.budget !== undefined;
    if (![...caps.values()].some(any)) {
      throw 'invalid config: set at least one cap (maxHbarPerRecipient, maxHbarPerTransaction, dailyHbarBudget or tokens)';
    }
    const windowSeconds = config.budgetWindowSeconds ?? 86400;
    if (!(windowSeconds >= 1 && windowSeconds <= 366 * 86400)) throw 'invalid config: budgetWindowSeconds: must be 1–31622400';
    return {
      name: 'Spend Limit Policy',
      description: 'Caps value per recipient, per transaction and per rolling day',
      relevantTools: facts.VALUE_TOOLS,
      policyStages: [Stage.POST_PARAMS_NORMALIZATION],
      state: { caps, windowSeconds },
    };
  },
  policy: {
    postParamsNormalization(input, state) {
      const { assets, groups } = byAsset(state, input.movements);
      for (let a = 0; a < assets.length; a++) {
        const asset = assets[a];
        const ms = groups.get(asset);
        const caps = state.caps.get(asset);
        let total = 0n;
        for (let i = 0; i < ms.length; i++) {
          const m = ms[i];
          total += m.amount;
          if (caps.perRecipient !== undefined && m.amount > caps.perRecipient) {
            const to = m.to ?? 'a new account';
            return block(`${amountText(asset, m.amount)} to ${to} exceeds the per-recipient limit of ${amountText(asset, caps.perRecipient)}`, {
              code: 'SPEND_LIMIT_RECIPIENT',
              details: { asset, recipient: m.to ?? null, amount: m.amount.toString(), limit: caps.perRecipient.toString() },
            });
          }
        }
        if (caps.perTransaction !== undefined && total > caps.perTransaction) {
          return block(`${amountText(asset, total)} in one call exceeds the per-transaction limit of ${amountText(asset, caps.perTransaction)}`, {
            code: 'SPEND_LIMIT_TRANSACTION',
            details: { asset, amount: total.toString(), limit: caps.perTransaction.toString() },
          });
        }
        if (caps.budget !== undefined) {
          // One atomic step: the host commits it if the transaction applies (or may have).
          const overBudget = (sum) => block(
            `${amountText(asset, total)} would exceed the budget of ${amountText(asset, caps.budget)} per ${state.windowSeconds} s (${amountText(asset, sum)} already spent)`,
            { code: 'SPEND_LIMIT_BUDGET', details: { asset, amount: total.toString(), spent: sum.toString(), budget: caps.budget.toString() } },
          );
          const U64_MAX = (1n << 64n) - 1n;
          if (total > U64_MAX) return overBudget(0n);
          const limit = caps.budget > U64_MAX ? U64_MAX : caps.budget;
          const r = host.reserve(`spent:${asset}`, total, limit, state.windowSeconds);
          if (r.overLimit !== undefined) return overBudget(r.overLimit);
          if (r.unavailable !== undefined) {
            return block(`the budget cannot be checked: ${r.unavailable}`, { code: 'SPEND_LIMIT_UNAVAILABLE', details: { asset } });
          }
        }
      }
      return allow;
    },
  },
});
