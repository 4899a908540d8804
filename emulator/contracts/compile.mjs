// Compile Factories.sol with solc-js (the npm build of solc, no download at run time) and
// write the factories' initcode as hex to build/: the local network deploys them at genesis.
// `node compile.mjs --check` fails when build/ differs from a fresh compilation.
import solc from 'solc';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(pathToFileURL(join(here, 'package.json')));
const input = {
  language: 'Solidity',
  sources: { 'Factories.sol': { content: readFileSync(join(here, 'Factories.sol'), 'utf8') } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'cancun',
    metadata: { bytecodeHash: 'none' },
    outputSelection: { '*': { '*': ['evm.bytecode.object'] } },
  },
};
const findImports = (path) => {
  try {
    return { contents: readFileSync(require.resolve(path), 'utf8') };
  } catch (e) {
    return { error: String(e) };
  }
};
const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
if (errors.length) {
  console.error(errors.map((e) => e.formattedMessage).join('\n'));
  process.exit(1);
}
const check = process.argv.includes('--check');
mkdirSync(join(here, 'build'), { recursive: true });
let stale = false;
for (const name of ['ERC20Factory', 'ERC721Factory']) {
  const hex = out.contracts['Factories.sol'][name].evm.bytecode.object + '\n';
  const file = join(here, 'build', `${name}.hex`);
  if (check) {
    let shipped = '';
    try { shipped = readFileSync(file, 'utf8'); } catch {}
    if (shipped !== hex) { console.error(`${file} is stale: run node compile.mjs`); stale = true; }
  } else {
    writeFileSync(file, hex);
  }
  console.log(`${name}: ${(hex.length - 1) / 2} bytes of initcode (solc ${solc.version()})`);
}
process.exit(stale ? 1 : 0);
