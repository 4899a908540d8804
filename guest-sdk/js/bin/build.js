#!/usr/bin/env node
// hak-js-build <plugin.js> -o <plugin.wasm>: bundle a plugin module (its `export default
// definePlugin(...)`, the SDK, anything it imports) with esbuild, then make a component of
// `hedera:agent-kit/agent-plugin@0.2.1` with componentize-js 0.23. Every WASI feature is
// disabled but the clocks and random (so `Date` and `Math.random` read the host's clock and
// random source at call time, not values frozen when the component was built); the host
// links those, bounded (no sleep outlasts a call's deadline). Its generated bindings get
// synchronous exports (sync-exports.js): stage functions are synchronous, and an async
// export per call cost a quarter of a warm JS policy's time; and its stage exports read a
// record without facts through one cached view (fast-stages.js), which was a third.
import { build } from 'esbuild';
import { componentize } from '@bytecodealliance/componentize-js';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
const args = process.argv.slice(2);
const outAt = args.indexOf('-o');
if (args.length < 3 || outAt < 0) {
  console.error('usage: hak-js-build <plugin.js> -o <plugin.wasm>');
  process.exit(2);
}
const entry = resolve(args.find((a, i) => i !== outAt && i !== outAt + 1));
const out = resolve(args[outAt + 1]);
const wit = resolve(here, '../../../wit');
const work = mkdtempSync(join(tmpdir(), 'hak-js-'));
try {
  const shim = join(work, 'entry.js');
  writeFileSync(shim, `import p from ${JSON.stringify(entry)};
export const plugin = p.plugin;
export const hooks = p.hooks;
export const policy = p.policy;
export const events = p.events;
export const inputs = p.inputs;
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
    worldName: 'agent-plugin',
    disableFeatures: ['stdio', 'http', 'fetch-event'],
  });
  writeFileSync(out, component);
  console.log(JSON.stringify({ built: out, bytes: component.length, ms: Date.now() - started }));
} finally {
  rmSync(work, { recursive: true, force: true });
}
