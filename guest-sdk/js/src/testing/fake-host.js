// The host imports (`hedera:agent-kit/{host,hedera,budget,rates}@0.2.2`) as in-memory fakes, for
// plugin tests run natively by `hak-js-test` (which bundles this module in their place). The
// shapes are the component bindings' own: options as undefined, results thrown as errors
// with a `payload`, u64 as BigInt. `fakes` is the state `../testing.js` reads and resets.

export const fakes = {
  state: new Map(),
  nowMs: undefined,
  spent: new Map(),
  logs: [],
  topicMessages: [],
  // What rates.current answers: a rate, or {error} (undefined: not granted).
  rate: undefined,
};

function hostError(payload) {
  const e = new Error(typeof payload === 'string' ? payload : payload.tag);
  e.payload = payload;
  return e;
}

// host
export function log(level, message) { fakes.logs.push({ level, message }); }
export function stateGet(key) { return fakes.state.get(key); }
export function stateSet(key, value) { fakes.state.set(key, value); }
export function stateDelete(key) { fakes.state.delete(key); }
export function nowUnixMs() { return BigInt(fakes.nowMs ?? Date.now()); }

// hedera
export function submitTopicMessage(topicId, message) {
  if (!/^\d{1,20}\.\d{1,20}\.\d{1,20}$/.test(topicId)) throw hostError(`invalid topic id ${JSON.stringify(topicId)}`);
  fakes.topicMessages.push({ topicId, message });
  return `0.0.2@1700000000.${String(fakes.topicMessages.length).padStart(9, '0')}`;
}
export function createTopic() { throw hostError('create-topic: no network in a native test'); }

// budget: every reservation counts (as if each call's transaction applied); no windows.
export function reserve(key, amount, limit) {
  const spent = fakes.spent.get(key) ?? 0n;
  if (spent + amount > limit) throw hostError({ tag: 'over-limit', val: spent });
  fakes.spent.set(key, spent + amount);
  return spent + amount;
}
export function spent(key) { return fakes.spent.get(key) ?? 0n; }

// rates
export function current() {
  if (fakes.rate === undefined) throw hostError('capability rates is not granted (testing.setExchangeRate)');
  if (fakes.rate.error !== undefined) throw hostError(fakes.rate.error);
  return { ...fakes.rate, expirationSeconds: BigInt(fakes.rate.expirationSeconds ?? 2n ** 63n) };
}
