// A wallet's round trip with the official JS SDK (@hiero-ledger/sdk, the kit's own dependency),
// for hak's wallet test: read return-bytes output with `Transaction.fromBytes`, sign it with
// the payer's key, submit it to the local network and wait for the receipt.
// stdin: JSON {grpc, nodeAccountId, cases: [{bytes: "0x…", keys: [DER hex private keys], submit}]}.
// stdout: one JSON line per case: {type, nodes, transactionIds, chunks, status} or
// {stage: "fromBytes" | "sign" | "execute" | "receipt", error}.
import { Client, PrivateKey, Transaction } from '@hiero-ledger/sdk';

const input = JSON.parse(await new Promise((resolve) => {
  let text = '';
  process.stdin.on('data', (chunk) => { text += chunk; });
  process.stdin.on('end', () => resolve(text));
}));
const client = Client.forNetwork({ [input.grpc]: input.nodeAccountId });
client.setMaxAttempts(3);

for (const { bytes, keys, submit } of input.cases) {
  let stage = 'fromBytes';
  try {
    const tx = Transaction.fromBytes(Buffer.from(bytes.replace(/^0x/, ''), 'hex'));
    const seen = {
      type: tx.constructor.name,
      nodes: tx.nodeAccountIds.map(String),
      transactionIds: tx._transactionIds.list.map(String),
    };
    stage = 'sign';
    for (const key of keys) await tx.sign(PrivateKey.fromStringDer(key));
    if (!submit) { console.log(JSON.stringify(seen)); continue; }
    stage = 'execute';
    const responses = typeof tx.executeAll === 'function' ? await tx.executeAll(client) : [await tx.execute(client)];
    stage = 'receipt';
    const receipts = [];
    for (const response of responses) receipts.push(await response.getReceipt(client));
    console.log(JSON.stringify({ ...seen, chunks: responses.length, status: receipts.map((r) => r.status.toString()).join(',') }));
  } catch (e) {
    console.log(JSON.stringify({ stage, error: String(e?.message ?? e) }));
  }
}
process.exit(0);
