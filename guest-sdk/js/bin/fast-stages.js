// Fast stage exports for componentize-js 0.23's generated bindings (used by build.js, after
// sync-exports.js).
//
// A stage export (the four `hooks` and four `policy` functions) lifts its `stage-input` record
// in generated JavaScript that StarlingMonkey interprets: every field read calls
// `dataView($memory)` (two getters and a comparison) and names top-level bindings of the
// bindings script, which the interpreter looks up by name each time. For a plugin that reads
// no facts (the host sends `facts: none`) that lifting was a third of a warm JS policy's
// time. This rewrite gives each stage export a path that reads the record through one cached
// `DataView` and closure-held bindings:
// - stage, method, tool type and params are read here, and handed to the SDK's `$hakDirect`
//   entry of the plugin's function when it has one (src/index.js: no record object in
//   between) with the facts, if stated, read here too straight into the SDK's shapes (the
//   record's layout is the generated lifting's, checked by its digest at build); a plugin made
//   without the SDK gets the generated record: without facts built here, with facts by the
//   generated function (renamed `…$lifted`), its lifting reading the view, the decoder and
//   `$dealloc` from locals set once rather than by name per field;
// - the answer `ok(allow)` / `ok(proceed)` (the variant's case 0, no payload) is written
//   here (two bytes); any other answer — a block, a replacement, an error — goes through the
//   generated lowering (kept as `…$lower`).
// The record's layout, the enums' cases and the lowering's shape are read from the generated
// text, and any difference from what this expects refuses the build, naming the export: a
// newer componentize-js must be looked at, not half-rewritten.
//
// Reading through a view made once per call is sound because the host lowers the record and
// its strings, and componentize-js allocates the return area, before the call: all of them
// lie below the memory's size when the call starts, which the view covers even if the guest's
// allocator grows the memory meanwhile (wasm memory grows in place). The view is made again
// before the answer is written.

import { createHash } from 'node:crypto';

// The generated lifting of `stage-input.facts` (componentize-js 0.23, contract 0.2.2), its
// whitespace collapsed: the layout `facts` below reads. Any other text refuses the build.
const FACTS_LIFTING_SHA256 = '82ca6b8078cdbfacc49a8988a245e8aaa90069d4033025a07c9c3607e80ea35c';

const STAGE_EXPORT = /^function (export_(?:hooks|policy)_0_2_2\$[\w$]+)\(arg0, arg1\) \{\n/gm;
const ANCHOR = 'const TEXT_ENCODER_UTF8 = new TextEncoder();';

/** The bindings with fast stage exports; throws if an export has an unexpected shape. */
export function fastStageExports(bindings) {
  const starts = [...bindings.matchAll(STAGE_EXPORT)];
  if (starts.length !== 8) {
    throw new Error(`componentize-js bindings: expected 8 stage exports (hooks, policy), found ${starts.length} (has the generator changed?)`);
  }
  let out = '';
  let at = 0;
  let enums;
  for (const start of starts) {
    const name = start[1];
    const end = bindings.indexOf('\n}\n', start.index);
    if (end < 0) throw new Error(`componentize-js bindings: ${name} has no end`);
    const text = bindings.slice(start.index, end + 3);
    const shape = readShape(name, text);
    const key = JSON.stringify([shape.stages, shape.toolTypes]);
    if (enums !== undefined && enums !== key) fail(name, 'its stage or tool-type cases differ from the other exports\'');
    enums = key;
    out += bindings.slice(at, start.index);
    out += localised(text.replace(`function ${name}(`, `function ${name}$lifted(`), shape.liftEnd);
    out += `function ${name}$lower(ret, arg1) {${shape.lowering}\n}\n`;
    out += `function ${name}(arg0, arg1) {\n  return $hakStage(arg0, arg1, ${shape.callee}, '${shape.first}', ${name}$lower, ${name}$lifted);\n}\n`;
    at = end + 3;
  }
  out += bindings.slice(at);
  out = fastJudge(out);
  if (!out.includes(ANCHOR)) {
    throw new Error(`componentize-js bindings: \`${ANCHOR}\` not found (has the generator changed?)`);
  }
  const [stages, toolTypes] = JSON.parse(enums);
  return out.replace(ANCHOR, `${ANCHOR}\n${runtime(stages, toolTypes)}`);
}

/**
 * `hak:fast/judge`'s export (when the world has it): its arguments are lifted as generated
 * (flat values, no record), its answer written as for the stage exports.
 */
function fastJudge(bindings) {
  const name = 'export_judge_0_1_0$shouldBlock';
  const head = `function ${name}(arg0, arg1, arg2, arg3, arg4, arg5, arg6) {\n`;
  const start = bindings.indexOf(head);
  if (start < 0) return bindings;
  const end = bindings.indexOf('\n}\n', start);
  if (end < 0) throw new Error(`componentize-js bindings: ${name} has no end`);
  const text = bindings.slice(start, end + 3);
  const answer = readAnswer(name, text, /([\w$]+)\(enum0, enum1, arg2 >>> 0, variant3\)/, 'arg6');
  const fast = `function ${name}$lower(ret, arg6) {${answer.lowering}\n}\n`
    + text.slice(0, answer.liftEnd)
    + `let out;\n  try {\n    out = ${answer.expression};\n  } catch (e) {\n`
    + `    ${name}$lower({ tag: 'err', val: getErrorPayload(e) }, arg6);\n    return $hakSettled;\n  }\n`
    + `  return $hakAnswer(out, arg6, '${answer.first}', ${name}$lower);\n}\n`;
  return bindings.slice(0, start) + fast + bindings.slice(end + 3);
}

function fail(name, what) {
  throw new Error(`componentize-js bindings: ${name}: ${what} (has the generator changed?)`);
}

/** What the fast path needs from one generated stage export, checked against its text. */
function readShape(name, text) {
  const expect = (snippet, what) => {
    if (!text.includes(snippet)) fail(name, `${what} is not read as expected`);
  };
  const cases = (variable, what) => {
    const open = text.indexOf(`let ${variable};\n  switch (`);
    if (open < 0) fail(name, `no switch for ${what}`);
    const close = text.indexOf('\n  }\n', open);
    const found = [...text.slice(open, close).matchAll(/case (\d+): \{\n\s*\w+ = '([\w-]+)';/g)];
    if (found.length === 0 || found.some((m, i) => Number(m[1]) !== i)) fail(name, `the cases of ${what} are not 0, 1, …`);
    return found.map((m) => m[2]);
  };
  const string = (ptr, len, offset, what) => {
    expect(`var ${ptr} = dataView($memory).getUint32(arg0 + ${offset}, true);\n  var ${len} = dataView($memory).getUint32(arg0 + ${offset + 4}, true);`, what);
    expect(`TEXT_DECODER_UTF8.decode(new Uint8Array($memory.buffer, ${ptr}, ${len}));\n  if (${len} !== 0) $dealloc(${ptr}, ${len}, 1);`, what);
  };
  expect('let enum0;\n  switch (dataView($memory).getUint8(arg0 + 0, true)) {', 'the stage');
  const stages = cases('enum0', 'the stage');
  string('ptr1', 'len1', 4, 'the method');
  expect('let enum2;\n  switch (dataView($memory).getUint8(arg0 + 12, true)) {', 'the tool type');
  const toolTypes = cases('enum2', 'the tool type');
  string('ptr3', 'len3', 16, 'the params');
  const factsAt = text.indexOf('let variant21;\n  if (dataView($memory).getUint8(arg0 + 24, true)) {');
  const factsEnd = text.indexOf('} else {\n    variant21 = undefined;\n  }', factsAt);
  if (factsAt < 0 || factsEnd < 0) fail(name, 'the facts are not read as expected');
  const lifting = text.slice(factsAt, factsEnd).replace(/\s+/g, ' ');
  if (createHash('sha256').update(lifting).digest('hex') !== FACTS_LIFTING_SHA256) {
    fail(name, 'the facts are lifted from another layout than the one fast-stages.js reads');
  }
  const answer = readAnswer(name, text, /([\w$]+)\(\{\n\s*stage: enum0,\n\s*method: result1,\n\s*toolType: enum2,\n\s*params: result3,\n\s*facts: variant21,\n\s*\}\)/, 'arg1');
  return { stages, toolTypes, ...answer, callee: answer.call[1] };
}

/**
 * How a generated export calls the plugin's function (`call`, a pattern of the call
 * expression) and lowers its answer into the return area `area`: the call's match, where the
 * call statement starts (`liftEnd`: all before it is lifting), the lowering, and the name of
 * the answer's first case (written as byte 0 with no payload).
 */
function readAnswer(name, text, call, area) {
  const called = text.match(new RegExp(`let ret;\\n\\s*\\n?\\s*try \\{\\n\\s*const hostRet(\\d+) = (${call.source});\\n\\s*ret = hostRet\\1 !== null && typeof hostRet\\1 === 'object' && \\(hostRet\\1\\.tag === 'ok' \\|\\| hostRet\\1\\.tag === 'err'\\)\\n\\s*\\? hostRet\\1\\n\\s*: \\{ tag: 'ok', val: hostRet\\1\\};\\n\\s*\\} catch \\(e\\) \\{\\n\\s*ret = \\{ tag: 'err', val: getErrorPayload\\(e\\) \\};\\n\\s*\\}\\n`));
  if (!called) fail(name, 'the plugin\'s function is not called as expected');
  const lowerAt = text.search(/\n {2}var variant\d+ = ret;\n/);
  const returnAt = text.lastIndexOf('\n  return ');
  if (lowerAt < 0 || returnAt < lowerAt || lowerAt < called.index) fail(name, 'its answer is not lowered from `ret`');
  const lowering = text.slice(lowerAt, returnAt);
  if (!new RegExp(`case 'ok': \\{\\n\\s*const e = variant\\d+\\.val;\\n\\s*dataView\\(\\$memory\\)\\.setInt8\\(${area} \\+ 0, 0, true\\);`).test(lowering)) {
    fail(name, '`ok` is not written as byte 0 at the return area');
  }
  const first = lowering.match(new RegExp(`case '([\\w-]+)': \\{\\n\\s*dataView\\(\\$memory\\)\\.setInt8\\(${area} \\+ 4, 0, true\\);\\n\\s*break;\\n`));
  if (!first) fail(name, 'its answer\'s first case is not written as byte 0 with no payload');
  const expression = called[2];
  return { call: expression.match(call), expression, lowering, first: first[1], liftEnd: called.index };
}

/**
 * The generated lifting (everything before the plugin's function is called) with its view of
 * the memory, its decoder and its `$dealloc` read once into locals instead of by name per
 * field; the lowering after it is left as generated (it allocates, so it must see the memory
 * as it is then).
 */
function localised(text, liftEnd) {
  const open = text.indexOf('{\n') + 2;
  const lifting = text
    .slice(open, liftEnd)
    .replaceAll('dataView($memory)', '$hakView')
    .replaceAll('$memory.buffer', '$hakBuffer')
    .replaceAll('TEXT_DECODER_UTF8.', '$hakDecoder.')
    .replaceAll('$dealloc(', '$hakFree(')
    // A u64 read as signed, made a BigInt and wrapped to 64 bits unsigned: read unsigned.
    .replace(/BigInt\.asUintN\(64, BigInt\(\$hakView\.getBigInt64\(([^()]+), true\)\)\)/g, '$hakView.getBigUint64($1, true)');
  const locals = '  const $hakView = dataView($memory), $hakBuffer = $hakView.buffer, $hakDecoder = TEXT_DECODER_UTF8, $hakFree = $dealloc;\n';
  return text.slice(0, open) + locals + lifting + text.slice(liftEnd);
}

/** The shared fast path, its bindings held in a closure (no lookups by name per call). */
function runtime(stages, toolTypes) {
  return `const [$hakStage, $hakAnswer] = (() => {
  const memory = $memory, dealloc = $dealloc, decoder = TEXT_DECODER_UTF8, settled = $hakSettled;
  const stages = ${JSON.stringify(stages)};
  const toolTypes = ${JSON.stringify(toolTypes)};
  let buffer, view;
  const refresh = () => {
    const current = memory.buffer;
    if (current !== buffer) {
      buffer = current;
      view = new DataView(current);
    }
  };
  const string = (at) => {
    const ptr = view.getUint32(at, true);
    const len = view.getUint32(at + 4, true);
    if (len === 0) return '';
    const text = decoder.decode(new Uint8Array(buffer, ptr, len));
    dealloc(ptr, len, 1);
    return text;
  };
  // As generated: an answer tagged \`ok\` or \`err\` is the result, anything else is
  // \`ok(answer)\`; \`ok(first case)\` is written here, everything else by the generated lowering.
  const answer = (out, area, first, lower) => {
    if (out !== null && typeof out === 'object') {
      const tag = out.tag;
      if (tag === first) {
        refresh();
        view.setUint8(area, 0);
        view.setUint8(area + 4, 0);
        return settled;
      }
      if (tag === 'ok' || tag === 'err') {
        lower(out, area);
        return settled;
      }
    }
    lower({ tag: 'ok', val: out }, area);
    return settled;
  };
  const optional = (at) => (view.getUint8(at) !== 0 ? string(at + 4) : undefined);
  const list = (at, align) => {
    const base = view.getUint32(at, true);
    if (base % align !== 0) throw new TypeError(\`list pointer [\${base}] is not aligned to \${align}\`);
    return base;
  };
  const release = (base, bytes, align) => {
    if (bytes !== 0) dealloc(base, bytes, align);
  };
  // The facts record in the SDK's shapes (src/facts.js \`fromHost\`: movements and changes
  // frozen, the whole frozen), read straight from the record's layout (checked at build).
  const facts = (arg0) => {
    const movementsAt = list(arg0 + 28, 8);
    const movementsLen = view.getUint32(arg0 + 32, true);
    const movements = [];
    for (let i = 0; i < movementsLen; i++) {
      const at = movementsAt + i * 40;
      const tag = view.getUint8(at);
      if (tag > 2) throw new TypeError(\`invalid asset tag \${tag}\`);
      const asset = tag === 0 ? { kind: 'hbar' } : { kind: tag === 1 ? 'token' : 'nft', id: string(at + 4) };
      const to = optional(at + 12);
      const via = view.getUint8(at + 32) === 0 ? 'transfer' : 'allowance';
      movements.push(Object.freeze({ asset, to, amount: view.getBigUint64(at + 24, true), via }));
    }
    release(movementsAt, movementsLen * 40, 8);
    const source = optional(arg0 + 36);
    const tokensAt = list(arg0 + 48, 4);
    const tokensLen = view.getUint32(arg0 + 52, true);
    const tokens = [];
    for (let i = 0; i < tokensLen; i++) tokens.push(string(tokensAt + i * 8));
    release(tokensAt, tokensLen * 8, 4);
    const changesAt = list(arg0 + 56, 4);
    const changesLen = view.getUint32(arg0 + 60, true);
    const changes = [];
    for (let i = 0; i < changesLen; i++) {
      const at = changesAt + i * 16;
      changes.push(Object.freeze({ kind: string(at), id: string(at + 8) }));
    }
    release(changesAt, changesLen * 16, 4);
    const memo = optional(arg0 + 64);
    return Object.freeze({ movements, source, tokens, changes, memo, scheduled: view.getUint8(arg0 + 76) !== 0 });
  };
  const stage = (arg0, arg1, fn, first, lower, lifted) => {
    refresh();
    const direct = fn.$hakDirect;
    const stated = view.getUint8(arg0 + 24) !== 0;
    // Facts for a plugin made without the SDK: the record as componentize-js lifts it.
    if (stated && direct === undefined) return lifted(arg0, arg1);
    const stage = stages[view.getUint8(arg0)];
    const method = string(arg0 + 4);
    const toolType = toolTypes[view.getUint8(arg0 + 12)];
    const params = string(arg0 + 16);
    let out;
    try {
      out = direct !== undefined
        ? direct(stage, method, toolType, params, stated ? facts(arg0) : undefined)
        : fn({ stage, method, toolType, params, facts: undefined });
    } catch (e) {
      lower({ tag: 'err', val: getErrorPayload(e) }, arg1);
      return settled;
    }
    return answer(out, arg1, first, lower);
  };
  return [stage, answer];
})();`;
}
