// Native unit tests of a JS plugin, without a host (`hak-js-test my-plugin.test.js`, on
// node's own test runner): the host imports are in-memory fakes (a scratchpad, a settable
// clock, budgets, the log and submitted topic messages), `input()` builds a stage input with
// the facts a host would state, and `load()` calls a plugin's exports the way the host does.
//
//   import { test } from 'node:test';
//   import assert from 'node:assert/strict';
//   import plugin from './my-policy.js';
//   import { load, input, reset } from '@hak/guest/testing';
//   test('blocks a large transfer', () => {
//     reset();
//     const p = load(plugin, { maxTinybars: '100' });
//     const verdict = p.run(input('transfer_hbar_tool', 'post-params-normalization').withCredit('hbar', '0.0.2001', 101n));
//     assert.equal(verdict.tag, 'block');
//   });
import { fakes } from './testing/fake-host.js';

/** Forget the scratchpad, clock, budgets, log and topic messages. */
export function reset() {
  fakes.state.clear();
  fakes.nowMs = undefined;
  fakes.spent.clear();
  fakes.logs.length = 0;
  fakes.topicMessages.length = 0;
  fakes.rate = undefined;
}
/** Fix what the host clock answers (`host.nowUnixMs()`; `Date` stays the machine's). */
export function setNowUnixMs(ms) { fakes.nowMs = Number(ms); }

// What `host.exchangeRate()` answers: `{hbarEquivalent, centEquivalent, expirationSeconds?}`,
// or `{error: 'why'}` (default: throws, as for a plugin not granted `rates`).
export function setExchangeRate(rate) { fakes.rate = rate; }
/** What the plugin logged: `[{level, message}]`. */
export function logs() { return fakes.logs.map((l) => ({ ...l })); }
/** The scratchpad as the plugin left it, as a plain object. */
export function state() { return Object.fromEntries(fakes.state); }
/** What is reserved under `key` (a BigInt). */
export function spent(key) { return fakes.spent.get(key) ?? 0n; }
/** What the plugin submitted: `[{topicId, message}]`. */
export function topicMessages() { return fakes.topicMessages.map((m) => ({ ...m })); }

const TOOL_TYPES = { query: 'query', transaction: 'transaction', other: 'other' };

/**
 * A stage input for `method` at `stage`, built up with the facts a host would state. Its tool
 * type is 'query' for a method whose name says query, else 'transaction': pass `{toolType}`
 * for others (`get_pending_airdrop_tool` is a query).
 */
export function input(method, stage, { toolType = method.includes('query') ? 'query' : 'transaction' } = {}) {
  return new InputBuilder(method, stage, TOOL_TYPES[toolType] ?? 'transaction');
}

class InputBuilder {
  constructor(method, stage, toolType) {
    this.raw = {
      stage,
      method,
      toolType,
      params: JSON.stringify({ context: { accountId: '0.0.1001', mode: 'autonomous' }, rawParams: {} }),
      facts: stage === 'pre-tool-execution' ? undefined : { movements: [], source: undefined, tokens: [], changes: [], memo: undefined, scheduled: false },
    };
  }
  facts() {
    if (!this.raw.facts) throw new Error('pre-tool-execution has no facts');
    return this.raw.facts;
  }
  /** The params object (`{context, rawParams, normalisedParams?, …}`). */
  withParams(params) { this.raw.params = JSON.stringify(params); return this; }
  /** `amount` of `kind` ('hbar', 'token' or 'nft'; `id` the token) credited to `to`. */
  withCredit(kind, to, amount, { id, via = 'transfer' } = {}) {
    const asset = kind === 'hbar' ? { tag: 'hbar' } : { tag: kind, val: id };
    this.facts().movements.push({ asset, to, amount: BigInt(amount), via });
    return this;
  }
  withSource(account) { this.facts().source = account; return this; }
  withToken(id) { this.facts().tokens.push(id); return this; }
  withChange(kind, id) { this.facts().changes.push({ kind, id }); return this; }
  withMemo(memo) { this.facts().memo = memo; return this; }
  scheduled() { this.facts().scheduled = true; return this; }
}

const POLICY = {
  'pre-tool-execution': 'shouldBlockPreToolExecution',
  'post-params-normalization': 'shouldBlockPostParamsNormalization',
  'post-core-action': 'shouldBlockPostCoreAction',
  'post-secondary-action': 'shouldBlockPostSecondaryAction',
};
const HOOK = {
  'pre-tool-execution': 'preToolExecution',
  'post-params-normalization': 'postParamsNormalization',
  'post-core-action': 'postCoreAction',
  'post-secondary-action': 'postToolExecution',
};

/**
 * Describe `plugin` (a `definePlugin(…)` value) with `config` as the host would; throws the
 * plugin's message when it refuses the config. `run(input)` calls its policy at the input's
 * stage (a verdict: `{tag: 'allow'}`, `{tag: 'block', val}`, `{tag: 'needs-approval', val}`),
 * `hook(input)` its hook (`{tag: 'proceed'}` or `{tag: 'replace', val}`); both throw what the
 * host would see as the plugin's error.
 */
export function load(plugin, config = {}) {
  const info = unwrap(() => plugin.plugin.describe(JSON.stringify(config)));
  const raw = (i) => (i instanceof InputBuilder ? i.raw : i);
  return {
    info,
    run: (i) => unwrap(() => plugin.policy[POLICY[raw(i).stage]](raw(i))),
    hook: (i) => unwrap(() => plugin.hooks[HOOK[raw(i).stage]](raw(i))),
  };
}

function unwrap(call) {
  try {
    return call();
  } catch (e) {
    throw new Error(e?.payload ?? e?.message ?? String(e));
  }
}
