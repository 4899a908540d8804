#!/usr/bin/env node
// hak-js-build <plugin.js> -o <plugin.wasm>: bundle a plugin module (its `export default
// definePlugin(...)`, the SDK, anything it imports) with esbuild, then make a component of
// `hak:fast/fast-plugin` (`hedera:agent-kit/agent-plugin@0.2.2` and the `hak:fast/judge`
// extension, wit/ext/judge.wit) with componentize-js 0.23. The SDK answers `judge` from the
// plugin's policy functions; a module without a `judge` export gets one here that does the
// same through its `policy` export (so a plugin made without the SDK builds and is judged
// as before). Every WASI feature is
// disabled but the clocks and random (so `Date` and `Math.random` read the host's clock and
// random source at call time, not values frozen when the component was built); the host
// links those, bounded (no sleep outlasts a call's deadline). Its generated bindings get
// synchronous exports (sync-exports.js): stage functions are synchronous, and an async
// export per call cost a quarter of a warm JS policy's time; and its stage exports read the
// record, facts too, through one cached view (fast-stages.js): that lifting was a third.
import { build } from 'esbuild';
import { componentize } from '@bytecodealliance/componentize-js';
import { mkdtempSync, mkdirSync, readdirSync, copyFileSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir, homedir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { syncExports } from './sync-exports.js';
import { fastStageExports } from './fast-stages.js';

// componentize() takes no hook for its bindings; the splicer it calls them from is one shared
// module object (the same file `src/componentize.js` imports), so its `spliceBindings` is
// wrapped here, before the first build.
const componentizeSrc = fileURLToPath(import.meta.resolve('@bytecodealliance/componentize-js'));
const { splicer } = await import(
  pathToFileURL(join(dirname(componentizeSrc), '../lib/spidermonkey-embedding-splicer.js')).href
);
const splice = splicer.spliceBindings;
splicer.spliceBindings = (...args) => {
  const spliced = splice(...args);
  spliced.jsBindings = fastStageExports(syncExports(spliced.jsBindings));
  return spliced;
};

const here = dirname(fileURLToPath(import.meta.url));
const all = process.argv.slice(2);
// --aot: the engine ahead-of-time compiled by weval (componentize-js's `enableAot`, its
// StarlingMonkey build with the portable baseline interpreter and inline caches, partially
// evaluated per function): ~1.6 µs less per max-recipients call here, a 50 % larger
// component. weval is not an npm download here: scripts/install-weval.sh builds it from
// crates.io (~13 minutes) into the cargo home, or HAK_WEVAL names one.
const aot = all.includes('--aot');
const args = all.filter((a) => a !== '--aot');
const outAt = args.indexOf('-o');
if (args.length < 3 || outAt < 0) {
  console.error('usage: hak-js-build <plugin.js> -o <plugin.wasm> [--aot]');
  process.exit(2);
}
const entry = resolve(args.find((a, i) => i !== outAt && i !== outAt + 1));
const out = resolve(args[outAt + 1]);
const WEVAL_VERSION = '0.5.1';
const weval = process.env.HAK_WEVAL
  ?? join(process.env.CARGO_HOME ?? join(homedir(), '.cargo'), 'hak-tools', `weval-${WEVAL_VERSION}`, 'bin', 'weval');
if (aot && !existsSync(weval)) {
  console.error(`hak-js-build --aot: no weval at ${weval} (run scripts/install-weval.sh, or set HAK_WEVAL)`);
  process.exit(2);
}
const contract = resolve(here, '../../../wit');
const work = mkdtempSync(join(tmpdir(), 'hak-js-'));
try {
  // componentize-js reads one WIT directory: the extension's package, the contract as its
  // dependency (the contract's own files only, not the frozen wit/0.1 copy).
  const wit = join(work, 'wit');
  mkdirSync(join(wit, 'deps', 'agent-kit'), { recursive: true });
  for (const file of readdirSync(contract)) {
    if (file.endsWith('.wit')) copyFileSync(join(contract, file), join(wit, 'deps', 'agent-kit', file));
  }
  copyFileSync(join(contract, 'ext', 'judge.wit'), join(wit, 'judge.wit'));
  const shim = join(work, 'entry.js');
  writeFileSync(shim, `import p from ${JSON.stringify(entry)};
export const hooks = p.hooks;
export const policy = p.policy;
export const events = p.events;
export const inputs = p.inputs;
// A module without \`judge\` (made without the SDK) is judged through its policy functions,
// with the record \`policy\` would get; \`tool\` indexes the relevant tools describe returned.
const judged = {
  'pre-tool-execution': 'shouldBlockPreToolExecution',
  'post-params-normalization': 'shouldBlockPostParamsNormalization',
  'post-core-action': 'shouldBlockPostCoreAction',
  'post-secondary-action': 'shouldBlockPostSecondaryAction',
};
let tools = [];
export const plugin = p.judge || !p.plugin ? p.plugin : {
  describe(config) {
    const described = p.plugin.describe(config);
    tools = described?.relevantTools ?? [];
    return described;
  },
};
export const judge = p.judge ?? {
  shouldBlock(stage, toolType, tool, params) {
    const method = tools[tool];
    if (method === undefined) throw \`judge: no relevant tool at index \${tool}\`;
    return p.policy[judged[stage]]({ stage, method, toolType, params: params ?? '', facts: undefined });
  },
};
`);
  const bundle = join(work, 'bundle.js');
  await build({
    entryPoints: [shim],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    outfile: bundle,
    external: ['hedera:agent-kit/*'],
    alias: { '@hak/guest': resolve(here, '../src/index.js') },
    logLevel: 'warning',
  });
  const started = Date.now();
  const { component } = await componentize({
    sourcePath: bundle,
    witPath: wit,
    worldName: 'fast-plugin',
    disableFeatures: ['stdio', 'http', 'fetch-event'],
    ...(aot ? { enableAot: true, wevalBin: weval } : {}),
  });
  writeFileSync(out, component);
  console.log(JSON.stringify({ built: out, bytes: component.length, ms: Date.now() - started }));
} finally {
  rmSync(work, { recursive: true, force: true });
}
