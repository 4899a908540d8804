// hak guest SDK for JavaScript. A plugin module does
//   export default definePlugin({ describe(config) {…}, policy: {…}, hooks: {…}, onToolFailure })
// and `hak-js-build plugin.js -o plugin.wasm` makes it a component of the world
// `hedera:agent-kit/agent-plugin@0.2.2` importing nothing of WASI but the clocks and random
// (`Date`, `Math.random`). Every stage has a default
// (proceed / allow); the host only calls the stages `describe` declares.
import * as hostApi from 'hedera:agent-kit/host@0.2.2';
import * as hederaApi from 'hedera:agent-kit/hedera@0.2.2';
import * as budgetApi from 'hedera:agent-kit/budget@0.2.2';
import * as ratesApi from 'hedera:agent-kit/rates@0.2.2';
import { fromHost } from './facts.js';

export { facts } from './facts.js';

/** The four hookable stages, with the names `describe` uses. */
export const Stage = Object.freeze({
  PRE_TOOL_EXECUTION: 'pre-tool-execution',
  POST_PARAMS_NORMALIZATION: 'post-params-normalization',
  POST_CORE_ACTION: 'post-core-action',
  POST_SECONDARY_ACTION: 'post-secondary-action',
});

/** Allow the call. */
export const allow = Object.freeze({ tag: 'allow' });
/** Let the call proceed unchanged (hooks). */
export const proceed = Object.freeze({ tag: 'proceed' });

/** Block the call: `block("too many", {code: "X", details: {n: 3}})`. */
export function block(message, { code, details } = {}) {
  return {
    tag: 'block',
    val: {
      message: String(message),
      code: code === undefined ? undefined : String(code),
      detailsJson: details === undefined ? undefined : JSON.stringify(details),
    },
  };
}

/**
 * Ask a human (contract 0.2.0): the call parks until an approver approves it (the chain goes
 * on) or denies it, or `timeoutSeconds` pass (0: the host's default), which blocks it.
 * `needsApproval("over 100 HBAR", {code: "LARGE", details: {total: "1"}, timeoutSeconds: 300})`.
 */
export function needsApproval(message, { code, details, timeoutSeconds = 0 } = {}) {
  return {
    tag: 'needs-approval',
    val: {
      message: String(message),
      code: code === undefined ? undefined : String(code),
      detailsJson: details === undefined ? undefined : JSON.stringify(details),
      timeoutSeconds: Number(timeoutSeconds) >>> 0,
    },
  };
}

/** Replace the stage's editable value (hooks): `replace(newNormalisedParams)`. */
export function replace(value) {
  return { tag: 'replace', val: typeof value === 'string' ? value : JSON.stringify(value) };
}

/** Thin wrappers over the host imports. */
export const host = Object.freeze({
  log: (level, message) => hostApi.log(level, String(message)),
  info: (message) => hostApi.log('info', String(message)),
  warn: (message) => hostApi.log('warn', String(message)),
  stateGet: (key) => hostApi.stateGet(key) ?? undefined,
  /** Throws the host's message when the scratchpad is full. */
  stateSet: (key, value) => hostApi.stateSet(key, value),
  stateDelete: (key) => hostApi.stateDelete(key),
  nowUnixMs: () => Number(hostApi.nowUnixMs()),
  submitTopicMessage: (topicId, message) => hederaApi.submitTopicMessage(topicId, message),
  createTopic: (memo) => hederaApi.createTopic(memo),
  /**
   * Reserve `amount` under `key` against `limit` in a rolling window, atomically (contract
   * 0.1.2 `budget`); the host commits or releases it by the call's outcome. Amounts are
   * bigints (numbers are converted). Returns `{ok: true, total}`, `{ok: false, overLimit: spent}`
   * or `{ok: false, unavailable: reason}` (then a policy must block).
   */
  reserve: (key, amount, limit, windowSeconds) => {
    try {
      return { ok: true, total: budgetApi.reserve(key, BigInt(amount), BigInt(limit), windowSeconds) };
    } catch (e) {
      const error = e?.payload ?? e;
      if (error?.tag === 'over-limit') return { ok: false, overLimit: error.val };
      return { ok: false, unavailable: String(error?.val ?? error) };
    }
  },
  /** What is spent or reserved under `key` in the window (a bigint); throws if the store cannot answer. */
  spent: (key, windowSeconds) => budgetApi.spent(key, windowSeconds),
  /**
   * Capability `rates` (contract 0.2.2): the network's HBAR exchange rate in force,
   * `{hbarEquivalent, centEquivalent, expirationSeconds}` (the last a bigint); throws the
   * host's message when there is none (then a policy counting in dollars must block).
   */
  exchangeRate: () => {
    try {
      return ratesApi.current();
    } catch (e) {
      throw new Error(String(e?.payload ?? e?.message ?? e));
    }
  },
});

/** At post-params-normalization the host writes normalisedParams first, rawParams next. */
const NORMALISED_FIRST = '{"normalisedParams":';
const RAW_NEXT = ',"rawParams":';

/**
 * normalisedParams read alone when the host wrote it first (about half of the stage JSON, and
 * JSON.parse is most of what reading it costs), else `undefined`. The slice runs from its
 * opening brace to the first `,"rawParams":` after it, which is the one the host wrote after
 * it or one inside it; cut inside, the slice misses the closing brace of its first one and
 * cannot parse (the whole text is parsed then), so a parsed slice is exactly the value.
 */
function normalisedFirst(text) {
  if (!text.startsWith(NORMALISED_FIRST)) return undefined;
  const end = text.indexOf(RAW_NEXT, NORMALISED_FIRST.length);
  if (end < 0) return undefined;
  try {
    return JSON.parse(text.slice(NORMALISED_FIRST.length, end));
  } catch {
    return undefined;
  }
}

/**
 * One stage call's input: the host's facts (typed, from post-params-normalization on) and the
 * params JSON, parsed once, on first use (normalisedParams alone when it comes first).
 */
export class StageInput {
  constructor(raw) {
    this.stage = raw.stage;
    this.method = raw.method;
    this.toolType = raw.toolType;
    this.paramsJson = raw.params;
    this._rawFacts = raw.facts;
    // `_params`, `_normalised` and `_facts` are added on first use: each property set here
    // is paid on every call, read or not.
  }
  /** What the call does, as the host states it (`undefined` at pre-tool-execution). */
  get facts() {
    if (this._facts === undefined && this._rawFacts != null) this._facts = fromHost(this._rawFacts);
    return this._facts;
  }
  /** Who gets what: `facts.movements`, or `[]` before normalisation. */
  get movements() { return this.facts?.movements ?? []; }
  /** Every existing token the call names. */
  get tokens() { return this.facts?.tokens ?? []; }
  /** `{context, rawParams, normalisedParams?, coreActionResult?, toolResult?}` */
  get params() {
    if (this._params === undefined) this._params = JSON.parse(this.paramsJson);
    return this._params;
  }
  get context() { return this.params.context; }
  get rawParams() { return this.params.rawParams; }
  get normalisedParams() {
    if (this._params !== undefined) return this._params.normalisedParams;
    if (this._normalised === undefined) this._normalised = normalisedFirst(this.paramsJson) ?? null;
    return this._normalised ?? this.params.normalisedParams;
  }
  get coreActionResult() { return this.params.coreActionResult; }
  get toolResult() { return this.params.toolResult; }
  get isQuery() { return this.toolType === 'query'; }
  /** The params object when this call is of `method` (typed per tool in index.d.ts), else undefined. */
  paramsFor(method) { return this.method === method ? this.params : undefined; }
}

/**
 * A stage input from its fields (the build's fast path and `judge`): `facts` already in the
 * shapes `fromHost` makes, or undefined.
 */
function fieldsInput(stage, method, toolType, paramsJson, facts) {
  const input = Object.create(StageInput.prototype);
  input.stage = stage;
  input.method = method;
  input.toolType = toolType;
  input.paramsJson = paramsJson;
  input._rawFacts = undefined;
  if (facts !== undefined) input._facts = facts;
  return input;
}

const HOOKS = {
  preToolExecution: 'preToolExecution',
  postParamsNormalization: 'postParamsNormalization',
  postCoreAction: 'postCoreAction',
  postToolExecution: 'postToolExecution',
};
/** The policy function `judge` calls for each stage. */
const JUDGED = {
  'pre-tool-execution': 'preToolExecution',
  'post-params-normalization': 'postParamsNormalization',
  'post-core-action': 'postCoreAction',
  'post-secondary-action': 'postSecondaryAction',
};
const POLICIES = {
  shouldBlockPreToolExecution: 'preToolExecution',
  shouldBlockPostParamsNormalization: 'postParamsNormalization',
  shouldBlockPostCoreAction: 'postCoreAction',
  shouldBlockPostSecondaryAction: 'postSecondaryAction',
};

/**
 * `describe`'s `reads` (contract 0.2.1 `inputs`) as the host asks for it: an object from a tool
 * method (or `'*'`, every other tool) to the parts of the stage input the plugin reads there,
 * `['params']`, `['facts']`, both or `[]`. The host lowers only those into the plugin (the
 * others arrive as `paramsJson === ''` and no facts): most of a stage call's cost.
 */
function readsTable(byTool) {
  if (byTool === null || typeof byTool !== 'object' || Array.isArray(byTool)) {
    throw new Error('describe: `reads` must be an object from a tool (or "*") to a list of "params" / "facts"');
  }
  return Object.entries(byTool).map(([tool, parts]) => {
    if (!Array.isArray(parts) || parts.some((p) => p !== 'params' && p !== 'facts')) {
      throw new Error(`describe: reads[${JSON.stringify(tool)}] must list "params" and/or "facts"`);
    }
    return { tool, reads: { params: parts.includes('params'), facts: parts.includes('facts') } };
  });
}

/** An error the host sees as the plugin's `err(message)`. */
function fail(error) {
  const message = typeof error === 'string' ? error : (error && error.message) || String(error);
  const e = new Error(message);
  e.payload = message;
  throw e;
}

/**
 * Build the component's exports. `describe(config)` validates the operator's config (an
 * object) and returns `{name, description, relevantTools, hookStages, policyStages, state,
 * reads?}` (`reads`: what the plugin reads of the stage input per tool, e.g.
 * `{'*': ['params']}`; absent: everything); throw to refuse the config. `state` is handed to every stage function as its second
 * argument. Stage functions get a `StageInput`; policies return `allow` or `block(…)`,
 * hooks `proceed` or `replace(…)`; throwing fails the call with that message.
 */
export function definePlugin({ describe, hooks = {}, policy = {}, onToolFailure }) {
  let state;
  let reads = [{ tool: '*', reads: { params: true, facts: true } }];
  const answer = (fn, fallback, input) => {
    let out;
    try {
      out = fn(input, state);
    } catch (e) {
      fail(e);
    }
    // Exports are synchronous (bin/sync-exports.js): a promise is not a verdict.
    if (out && typeof out.then === 'function') {
      fail('a stage function must return its verdict, not a promise (it may not be async)');
    }
    return out === undefined ? fallback : out;
  };
  const wrap = (fn, fallback) => {
    if (!fn) {
      const none = () => fallback;
      none.$hakDirect = none;
      return none;
    }
    const exported = (raw) => answer(fn, fallback, new StageInput(raw));
    // The build's fast path (bin/fast-stages.js) calls this with the fields, and the facts
    // (when stated) already in `fromHost`'s shapes.
    exported.$hakDirect = (stage, method, toolType, paramsJson, facts) =>
      answer(fn, fallback, fieldsInput(stage, method, toolType, paramsJson, facts));
    return exported;
  };
  const hookExports = {};
  for (const [exported, name] of Object.entries(HOOKS)) hookExports[exported] = wrap(hooks[name], proceed);
  const policyExports = {};
  for (const [exported, name] of Object.entries(POLICIES)) policyExports[exported] = wrap(policy[name], allow);
  // The relevant tools as `describe` returned them: `judge` names a tool by its index there.
  let tools = [];
  return {
    plugin: {
      describe(configJson) {
        let info;
        try {
          info = describe(JSON.parse(configJson));
          if (info && typeof info.then === 'function') {
            throw 'describe must return the description, not a promise (it may not be async)';
          }
          if (info.reads !== undefined) reads = readsTable(info.reads);
        } catch (e) {
          fail(e);
        }
        state = info.state;
        tools = [...(info.relevantTools ?? [])];
        return {
          name: String(info.name),
          description: String(info.description ?? ''),
          relevantTools: tools,
          hookStages: [...(info.hookStages ?? [])],
          policyStages: [...(info.policyStages ?? [])],
        };
      },
    },
    hooks: hookExports,
    policy: policyExports,
    // `hak:fast/judge` (wit/ext/judge.wit): the host calls this instead of `policy` for a tool
    // named in relevantTools whose facts the plugin does not read; the same stage functions
    // answer, with the same input.
    judge: {
      shouldBlock(stage, toolType, tool, params) {
        const fn = policy[JUDGED[stage]];
        if (!fn) return allow;
        const method = tools[tool];
        if (method === undefined) fail(`judge: no relevant tool at index ${tool}`);
        return answer(fn, allow, fieldsInput(stage, method, toolType, params ?? ''));
      },
    },
    inputs: {
      reads() {
        return reads;
      },
    },
    events: {
      onToolFailure(json) {
        if (!onToolFailure) return;
        try {
          onToolFailure(JSON.parse(json), state);
        } catch (e) {
          hostApi.log('warn', `onToolFailure: ${e && e.message ? e.message : e}`);
        }
      },
    },
  };
}
