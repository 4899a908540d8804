// The JS kit's transfer_hbar_tool in RETURN_BYTES mode with the same policies as hak's
// criterion bench, in-process. Prints one JSON line per case: {case, calls, usPerCall, p50Us, p99Us}.
// Usage: node bench.mjs [calls]
import { Client } from '@hiero-ledger/sdk';
import { transferHbarTool } from '@hashgraph/hedera-agent-kit/plugins';
import { MaxRecipientsPolicy, RejectToolPolicy } from '@hashgraph/hedera-agent-kit/policies';

const calls = Number(process.argv[2] ?? 20000);
const params = {
  transfers: [
    { accountId: '0.0.2001', amount: 1 },
    { accountId: '0.0.2002', amount: 0.5 },
  ],
  transactionMemo: 'bench',
};
const client = Client.forTestnet();
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

for (const [name, hooks] of Object.entries(cases)) {
  const context = { accountId: '0.0.1001', mode: 'returnBytes', hooks };
  const tool = transferHbarTool(context);
  const first = await tool.execute(client, context, params);
  if (!first.bytes) throw new Error(`${name}: ${JSON.stringify(first)}`);
  for (let i = 0; i < Math.min(calls, 2000); i++) await tool.execute(client, context, params);
  const samples = new Float64Array(calls);
  const start = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    const t = process.hrtime.bigint();
    await tool.execute(client, context, params);
    samples[i] = Number(process.hrtime.bigint() - t) / 1000;
  }
  const total = Number(process.hrtime.bigint() - start) / 1000;
  samples.sort();
  const pct = (p) => samples[Math.round((samples.length - 1) * p)];
  const r2 = (x) => Math.round(x * 100) / 100;
  console.log(JSON.stringify({ case: name, calls, usPerCall: r2(total / calls), p50Us: r2(pct(0.5)), p99Us: r2(pct(0.99)) }));
}
process.exit(0);
