// The JS kit's answer to each call in RETURN_BYTES mode, for hak's conformance test.
// stdin: JSON [{tool, params}], context account 0.0.1001. stdout: one JSON line per call,
// {bytes: hex, result: the rest of ReturnBytesResult}, {error, humanMessage}, for a query
// {query: {raw, humanMessage}}, or {crash} when the kit throws instead of answering.
// The kit never reaches a consensus node. Its mirror service is the kit's own, pointed at
// $HAK_MIRROR (hak's local network, which hak's side of the test reads too); without
// $HAK_MIRROR it knows only that every account has one fixed ED25519 key and refuses every
// other call, so a case that needs more shows up as an error.
import { Client, LedgerId, PrivateKey } from '@hiero-ledger/sdk';
import { HederaMirrornodeServiceDefaultImpl } from '@hashgraph/hedera-agent-kit';
import { allCorePlugins } from '@hashgraph/hedera-agent-kit/plugins';

// The kit's mirror client waits 1 s, then 2 s, before retrying a 404 (a lagging mirror);
// the local network's mirror does not lag, so the test runs those waits 50 times faster.
const realSetTimeout = globalThis.setTimeout;
globalThis.setTimeout = (fn, ms, ...args) => realSetTimeout(fn, ms >= 1000 ? ms / 50 : ms, ...args);

const cases = JSON.parse(await new Promise((resolve) => {
  // Decoded once at the end: a character split across two chunks must stay whole.
  const chunks = [];
  process.stdin.on('data', (chunk) => { chunks.push(chunk); });
  process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
}));
const known = {
  getAccount: async (accountId) => ({
    accountId,
    accountPublicKey: '2921a1c74e399db7f329d6e7b21be2986d3561ceb33c0147e3d785b215207488',
  }),
};
function mirror() {
  if (process.env.HAK_MIRROR) {
    const service = new HederaMirrornodeServiceDefaultImpl(LedgerId.TESTNET);
    service.baseUrl = process.env.HAK_MIRROR;
    return service;
  }
  return new Proxy(known, {
    get: (target, name) => target[name]
      ?? (async () => { throw new Error(`mirror call ${String(name)} refused`); }),
  });
}
const mirrornodeService = mirror();
const json = (value) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
const context = { accountId: '0.0.1001', mode: 'returnBytes', mirrornodeService };
// One node, 0.0.3, as hak's manifest fixes it; never contacted in RETURN_BYTES mode.
const client = Client.forTestnet();
client.setNetwork({ '127.0.0.1:1': '0.0.3' });
// The kit's EVM tools insist on an ECDSA operator even in RETURN_BYTES mode: theirs is the
// local network's ECDSA genesis account 0.0.1003 (its documented dev key), which never signs.
const evmClient = Client.forTestnet();
evmClient.setNetwork({ '127.0.0.1:1': '0.0.3' });
const devSeed = new Uint8Array(32).fill(0x42);
devSeed[0] = 0x10;
devSeed[1] = 0x03;
evmClient.setOperator('0.0.1003', PrivateKey.fromBytesECDSA(devSeed));
const tools = new Map(allCorePlugins.flatMap((p) => p.tools(context)).map((t) => [t.method, t]));
const evmTools = new Set(['create_erc20_tool', 'create_erc721_tool', 'mint_erc721_tool', 'transfer_erc20_tool', 'transfer_erc721_tool']);
for (const { tool, params } of cases) {
  const found = tools.get(tool);
  if (!found) { console.log(JSON.stringify({ error: `no tool ${tool}` })); continue; }
  let out;
  try {
    out = await found.execute(evmTools.has(tool) ? evmClient : client, context, params);
  } catch (e) {
    // The kit itself crashed (a bug of the kit's: its tools are meant to answer with an error).
    console.log(JSON.stringify({ crash: String(e?.message ?? e) }));
    continue;
  }
  const raw = out.raw ?? out;
  if (raw.bytes) {
    const { bytes, ...result } = raw;
    console.log(json({ bytes: Buffer.from(bytes).toString('hex'), result }));
  }
  else if (raw.error) console.log(json({ error: raw.error, humanMessage: out.humanMessage ?? null }));
  else console.log(json({ query: out }));
}
process.exit(0);
