// HIP-991 fee limits through the official JS SDK (the Rust SDK 0.43 does not send them).
// Argument: the JSON line `hak emu` prints. Prints one line per step: "<step> <result>".
import {
  Client, PrivateKey, Hbar, AccountCreateTransaction, AccountBalanceQuery, TokenCreateTransaction,
  TopicCreateTransaction, TopicMessageSubmitTransaction, TransferTransaction, CustomFixedFee,
  CustomFeeLimit,
} from '@hiero-ledger/sdk';

const info = JSON.parse(process.argv[2]);
const operator = PrivateKey.fromStringDer(info.operatorKey);
const client = Client.forNetwork({ [info.grpc]: info.nodeAccountId });
client.setOperator(info.operatorId, operator);

/** The receipt's status, or the status a precheck or the receipt failed with. */
async function status(tx, as) {
  try {
    return (await (await tx.execute(as)).getReceipt(as)).status.toString();
  } catch (e) {
    if (e.status === undefined) throw e;
    return e.status.toString();
  }
}

const hbars = async (id) =>
  (await new AccountBalanceQuery().setAccountId(id).execute(client)).hbars.toTinybars().toNumber();

// A payer of its own, and a topic charging 1 ℏ per message to 0.0.1004.
const payerKey = PrivateKey.generateED25519();
const payerId = (await (await new AccountCreateTransaction()
  .setKeyWithoutAlias(payerKey.publicKey).setInitialBalance(new Hbar(10)).execute(client)).getReceipt(client)).accountId;
const payer = Client.forNetwork({ [info.grpc]: info.nodeAccountId });
payer.setOperator(payerId, payerKey);
const topicId = (await (await new TopicCreateTransaction()
  .setAdminKey(operator.publicKey)
  .setFeeScheduleKey(operator.publicKey)
  .setCustomFees([new CustomFixedFee().setHbarAmount(new Hbar(1)).setFeeCollectorAccountId('0.0.1004')])
  .execute(client)).getReceipt(client)).topicId;
const tokenId = (await (await new TokenCreateTransaction().setTokenName('Other').setTokenSymbol('OTH')
  .setInitialSupply(5).setTreasuryAccountId(info.operatorId).execute(client)).getReceipt(client)).tokenId;

const limit = (...fees) => new CustomFeeLimit().setAccountId(payerId).setFees(fees);
const submit = (...limits) => {
  const tx = new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage('fee');
  for (const l of limits) tx.addCustomFeeLimit(l);
  return tx;
};
const hbarFee = (tinybars) => new CustomFixedFee().setAmount(tinybars);
const tokenFee = (units) => new CustomFixedFee().setAmount(units).setDenominatingTokenId(tokenId);

const collector = await hbars('0.0.1004');
console.log('low limit', await status(submit(limit(hbarFee(50_000_000))), payer));
console.log('other denomination', await status(submit(limit(tokenFee(5))), payer));
console.log('duplicate denomination', await status(submit(limit(hbarFee(1), hbarFee(2))), payer));
console.log('collector unpaid', (await hbars('0.0.1004')) - collector);
console.log('enough', await status(submit(limit(hbarFee(100_000_000))), payer));
console.log('no limit', await status(submit(), payer));
console.log('collector paid', (await hbars('0.0.1004')) - collector);
// A limit on anything but a message submission (the SDK only offers it there; the field is
// on every body).
const transfer = new TransferTransaction().addHbarTransfer(payerId, -1).addHbarTransfer('0.0.1004', 1);
transfer._customFeeLimits = [limit(hbarFee(1))];
console.log('limit on a transfer', await status(transfer, payer));
client.close();
payer.close();
