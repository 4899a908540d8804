// Synchronous exports for componentize-js 0.23's generated bindings (used by build.js).
//
// componentize-js generates every export as an `async function` that `await`s the plugin's
// function and lifts and lowers around it, and its engine drives the event loop until that
// promise settles. A hak stage function is synchronous (it returns a verdict: see
// src/index.d.ts), so each call paid for an async frame, a promise job and its resumption,
// plus a `_debugLog` call building an object literal at each step (a no-op unless
// JCO_DEBUG is set): a quarter of a warm JS policy's time (docs/BENCHMARKS.md). This rewrites
// each export into a plain function that calls the plugin, lowers its answer and returns one
// already-settled promise (the engine still expects a promise), and makes `_debugLog`'s
// arguments unevaluated. Nothing else changes: lifting, lowering and error payloads are the
// generated code's own.
//
// The rewrite is textual, so it checks the shape it expects in every export (one `await`
// of the plugin's function, a final `return`) and refuses to build otherwise, naming the
// export: a newer componentize-js must be looked at, not silently half-rewritten.

const EXPORT = /^async function (export_[\w$]+)\(/gm;

/** The bindings text with synchronous exports; throws if an export has an unexpected shape. */
export function syncExports(bindings) {
  const starts = [...bindings.matchAll(EXPORT)];
  if (starts.length === 0) {
    throw new Error('componentize-js bindings: no `async function export_…` found (has the generator changed?)');
  }
  let out = '';
  let at = 0;
  for (const start of starts) {
    const name = start[1];
    const end = bindings.indexOf('\n}\n', start.index);
    if (end < 0) throw new Error(`componentize-js bindings: ${name} has no end`);
    out += bindings.slice(at, start.index);
    out += rewriteExport(name, bindings.slice(start.index, end + 2));
    at = end + 2;
  }
  out += bindings.slice(at);
  const anchor = 'delete globalThis.$bindings;';
  if (!out.includes(anchor)) {
    throw new Error(`componentize-js bindings: \`${anchor}\` not found (has the generator changed?)`);
  }
  // One settled promise for every call: the engine only waits for it to settle.
  out = out.replace(anchor, `${anchor}\nconst $hakSettled = Promise.resolve();`);
  // `_debugLog(…)` statements stay, with their arguments never evaluated.
  return out.replace(/(^|[;{}\s])_debugLog\(/g, '$1void 0 && _debugLog(');
}

function rewriteExport(name, text) {
  const fail = (what) => {
    throw new Error(`componentize-js bindings: ${name}: ${what} (has the generator changed?)`);
  };
  let body = text.replace(/^async function /, 'function ');
  const awaits = body.match(/ = await [\w$]+\(/g) ?? [];
  if (awaits.length !== 1 || (body.match(/\bawait\b/g) ?? []).length !== 1) {
    fail(`expected exactly one \`await\` of the plugin's function, found ${(body.match(/\bawait\b/g) ?? []).length}`);
  }
  body = body.replace(/ = await ([\w$]+)\(/, ' = $1(');
  // The last statement returns; it now returns a settled promise.
  const last = body.match(/\n {2}return( [^;\n]+)?;\n\}\n?$/);
  if (!last) fail('its last statement is not a `return`');
  const settled = last[1] === undefined ? '$hakSettled' : `Promise.resolve(${last[1].trim()})`;
  return body.slice(0, last.index) + `\n  return ${settled};\n}` + (body.endsWith('\n') ? '\n' : '');
}
