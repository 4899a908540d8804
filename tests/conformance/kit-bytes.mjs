// The JS kit's answer to each call in RETURN_BYTES mode, for hak's conformance test.
// stdin: JSON [{tool, params}], context account 0.0.1001. stdout: one JSON line per call,
// {bytes: hex} or {error, humanMessage}. The kit may not reach a network: its mirror service
// knows only that every account has one fixed ED25519 key (the kit looks the user's key up for
// token creation and scheduling even when it does not use it) and refuses every other call, so
// a case that needs more shows up as an error.
import { Client } from '@hiero-ledger/sdk';
import { allCorePlugins } from '@hashgraph/hedera-agent-kit/plugins';

const cases = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.on('data', (chunk) => { text += chunk; });
  process.stdin.on('end', () => resolve(text));
}));
const known = {
  getAccount: async (accountId) => ({
    accountId,
    accountPublicKey: '2921a1c74e399db7f329d6e7b21be2986d3561ceb33c0147e3d785b215207488',
  }),
};
const mirrornodeService = new Proxy(known, {
  get: (target, name) => target[name]
    ?? (async () => { throw new Error(`mirror call ${String(name)} refused`); }),
});
const context = { accountId: '0.0.1001', mode: 'returnBytes', mirrornodeService };
// One node, 0.0.3, as hak's manifest fixes it; never contacted in RETURN_BYTES mode.
const client = Client.forTestnet();
client.setNetwork({ '127.0.0.1:1': '0.0.3' });
const tools = new Map(allCorePlugins.flatMap((p) => p.tools(context)).map((t) => [t.method, t]));
for (const { tool, params } of cases) {
  const found = tools.get(tool);
  if (!found) { console.log(JSON.stringify({ error: `no tool ${tool}` })); continue; }
  const out = await found.execute(client, context, params);
  const raw = out.raw ?? out;
  if (raw.bytes) console.log(JSON.stringify({ bytes: Buffer.from(raw.bytes).toString('hex') }));
  else console.log(JSON.stringify({ error: raw.error ?? null, humanMessage: out.humanMessage ?? null }));
}
process.exit(0);
