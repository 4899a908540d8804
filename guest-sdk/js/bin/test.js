#!/usr/bin/env node
// hak-js-test <plugin.test.js>...: run a plugin's unit tests natively on node's test runner.
// Each file is bundled with esbuild as `hak-js-build` bundles a plugin, except that the host
// imports (`hedera:agent-kit/*`) resolve to the SDK's in-memory fakes (src/testing/) and
// `@hak/guest/testing` to its helpers; the exit status is node's.
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname, basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

const here = dirname(fileURLToPath(import.meta.url));
const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: hak-js-test <plugin.test.js>...');
  process.exit(2);
}
const src = resolve(here, '../src');
const fakeHost = {
  name: 'hak-fake-host',
  setup(b) {
    b.onResolve({ filter: /^hedera:agent-kit\// }, () => ({ path: join(src, 'testing/fake-host.js') }));
    b.onResolve({ filter: /^@hak\/guest\/testing$/ }, () => ({ path: join(src, 'testing.js') }));
    b.onResolve({ filter: /^@hak\/guest$/ }, () => ({ path: join(src, 'index.js') }));
  },
};
const work = mkdtempSync(join(tmpdir(), 'hak-js-test-'));
let status = 1;
try {
  const bundles = [];
  for (const file of files) {
    const out = join(work, basename(file).replace(/\.m?js$/, '') + '.mjs');
    await build({
      entryPoints: [resolve(file)],
      bundle: true,
      format: 'esm',
      platform: 'node',
      outfile: out,
      plugins: [fakeHost],
      logLevel: 'warning',
    });
    bundles.push(out);
  }
  status = spawnSync(process.execPath, ['--test', ...bundles], { stdio: 'inherit' }).status ?? 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(status);
