// Atomic batches (HIP-551) through the official JS SDK. Argument: the JSON line `hak emu`
// prints. Prints one line per step.
import {
  Client, PrivateKey, Hbar, AccountCreateTransaction, TopicCreateTransaction, TransferTransaction,
  BatchTransaction, TransactionReceiptQuery, AccountInfoQuery,
} from '@hiero-ledger/sdk';

const info = JSON.parse(process.argv[2]);
const operatorKey = PrivateKey.fromStringDer(info.operatorKey);
const client = Client.forNetwork({ [info.grpc]: info.nodeAccountId });
client.setOperator(info.operatorId, operatorKey);

async function status(tx) {
  try {
    return (await (await tx.execute(client)).getReceipt(client)).status.toString();
  } catch (e) {
    if (e.status === undefined) throw e;
    return e.status.toString();
  }
}
const receipt = (id) => new TransactionReceiptQuery().setTransactionId(id).setValidateStatus(false).execute(client);

const account = await new AccountCreateTransaction().setKeyWithoutAlias(PrivateKey.generateECDSA())
  .setInitialBalance(new Hbar(1)).batchify(client, operatorKey);
const topic = await new TopicCreateTransaction().setTopicMemo('batched').batchify(client, operatorKey);
const batch = new BatchTransaction().addInnerTransaction(account).addInnerTransaction(topic);
console.log('batch', await status(batch));
const [first, second] = await Promise.all(batch.innerTransactionIds.map(receipt));
console.log('inner', first.status.toString(), second.status.toString(), first.accountId != null, second.topicId != null);

console.log('empty', await status(new BatchTransaction()));
const stranger = PrivateKey.generateED25519();
const foreign = await new AccountCreateTransaction().setKeyWithoutAlias(PrivateKey.generateECDSA())
  .batchify(client, stranger.publicKey);
console.log('unsigned batch key', await status(new BatchTransaction().addInnerTransaction(foreign)));

// All or nothing: the second inner transaction overdraws, so the first is undone too.
const created = await new AccountCreateTransaction().setKeyWithoutAlias(PrivateKey.generateECDSA())
  .setInitialBalance(new Hbar(1)).batchify(client, operatorKey);
const overdraw = await new TransferTransaction().addHbarTransfer(info.operatorId, new Hbar(-1_000_000))
  .addHbarTransfer('0.0.1004', new Hbar(1_000_000)).batchify(client, operatorKey);
const failing = new BatchTransaction().addInnerTransaction(created).addInnerTransaction(overdraw);
console.log('failing batch', await status(failing));
const [undone, failed] = await Promise.all(failing.innerTransactionIds.map(receipt));
console.log('failing inner', undone.status.toString(), failed.status.toString());
client.close();
