// The JS kit in RETURN_BYTES mode with the same calls and policies as hak's criterion bench,
// in-process. Prints one JSON line per case: {case, calls, usPerCall, p50Us, p99Us}.
// 1. transfer_hbar_tool with 0 / 5 / 5-all-called policies;
// 2. the mix (transfer, token create, topic submit, balance query) with 0 and 5 policies,
//    against hak's local network (`target/release/hak emu`, started here on free ports) for
//    the mirror, as hak's bench uses it.
// Usage: node bench.mjs [calls]   (build `cargo build --release --bin hak` first for the mix)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Client, LedgerId } from '@hiero-ledger/sdk';
import { HederaMirrornodeServiceDefaultImpl } from '@hashgraph/hedera-agent-kit';
import { allCorePlugins, transferHbarTool } from '@hashgraph/hedera-agent-kit/plugins';
import { MaxRecipientsPolicy, RejectToolPolicy } from '@hashgraph/hedera-agent-kit/policies';

const calls = Number(process.argv[2] ?? 20000);
const params = {
  transfers: [
    { accountId: '0.0.2001', amount: 1 },
    { accountId: '0.0.2002', amount: 0.5 },
  ],
  transactionMemo: 'bench',
};
// One node, 0.0.3, as hak's bench manifest fixes it (a testnet client would freeze the
// transaction for all 7 testnet nodes: 7 signed bodies instead of 1).
const client = Client.forTestnet();
client.setNetwork({ '127.0.0.1:1': '0.0.3' });
// Silence the policies' console logging so it is not measured.
console.warn = () => {};

const cases = {
  '0_plugins': [],
  '5_policies': [
    new MaxRecipientsPolicy(5), new MaxRecipientsPolicy(5), new MaxRecipientsPolicy(5),
    new RejectToolPolicy(['get_hbar_balance_query_tool']), new RejectToolPolicy(['get_hbar_balance_query_tool']),
  ],
  '5_policies_all_called': [1, 2, 3, 4, 5].map(() => new MaxRecipientsPolicy(5)),
};

async function measure(name, calls, once_) {
  for (let i = 0; i < Math.min(calls, 2000); i++) await once_();
  const samples = new Float64Array(calls);
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    const t = process.hrtime.bigint();
    await once_();
    samples[i] = Number(process.hrtime.bigint() - t) / 1000;
  }
  const total = Number(process.hrtime.bigint() - start) / 1000;
  samples.sort();
  const pct = (p) => samples[Math.round((samples.length - 1) * p)];
  const r2 = (x) => Math.round(x * 100) / 100;
  console.log(JSON.stringify({ case: name, calls, usPerCall: r2(total / calls), p50Us: r2(pct(0.5)), p99Us: r2(pct(0.99)) }));
}

for (const [name, hooks] of Object.entries(cases)) {
  const context = { accountId: '0.0.1001', mode: 'returnBytes', hooks };
  const tool = transferHbarTool(context);
  const first = await tool.execute(client, context, params);
  if (!first.bytes) throw new Error(`${name}: ${JSON.stringify(first)}`);
  await measure(name, calls, () => tool.execute(client, context, params));
}

// The mix, as in hak's `bench_mixed`.
const hak = new URL('../../../target/release/hak', import.meta.url).pathname;
const emu = spawn(hak, ['emu', '--grpc', '127.0.0.1:0', '--mirror', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
const [line] = await once(createInterface({ input: emu.stdout }), 'line');
const mirror = new HederaMirrornodeServiceDefaultImpl(LedgerId.TESTNET);
mirror.baseUrl = `${JSON.parse(line).mirror}/api/v1`;
const local = client;
const mix = [
  ['transfer_hbar_tool', params],
  ['create_fungible_token_tool', { tokenName: 'Bench', tokenSymbol: 'BEN', initialSupply: 1000, decimals: 2 }],
  ['submit_topic_message_tool', { topicId: '0.0.5005', message: 'bench' }],
  ['get_hbar_balance_query_tool', { accountId: '0.0.1001' }],
];
const mixCalls = Math.max(1000, Math.round(calls / 10));
const mixedCases = {
  '0_plugins': [],
  '5_policies': [
    new MaxRecipientsPolicy(5), new MaxRecipientsPolicy(5), new MaxRecipientsPolicy(5),
    new RejectToolPolicy(['delete_account_tool']), new RejectToolPolicy(['delete_account_tool']),
  ],
};
for (const [name, hooks] of Object.entries(mixedCases)) {
  const context = { accountId: '0.0.1001', mode: 'returnBytes', hooks, mirrornodeService: mirror };
  const tools = new Map(allCorePlugins.flatMap((p) => p.tools(context)).map((t) => [t.method, t]));
  for (const [method, p] of mix) {
    const out = await tools.get(method).execute(local, context, p);
    if (!(out.bytes || out.raw?.bytes || out.raw?.hbarBalance)) throw new Error(`${method}: ${JSON.stringify(out)}`);
    await measure(`mixed/${name}/${method}`, mixCalls, () => tools.get(method).execute(local, context, p));
  }
  await measure(`mixed/${name}/all_four`, mixCalls, async () => {
    for (const [method, p] of mix) await tools.get(method).execute(local, context, p);
  });
}
emu.kill();
process.exit(0);
