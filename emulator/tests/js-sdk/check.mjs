// Drive hak-emu with the official JS SDK. Argument: the JSON line `hak emu` prints.
// Prints one line per step: "<step> <result>".
import {
  Client, PrivateKey, TransferTransaction, AccountBalanceQuery, Hbar,
  TopicCreateTransaction, TopicMessageSubmitTransaction, AccountCreateTransaction, TokenCreateTransaction,
  AccountInfoQuery, AccountId, TransactionId, TopicMessageQuery, FileCreateTransaction,
  FileAppendTransaction, FileContentsQuery, FileInfoQuery, AddressBookQuery, FeeSchedules, ExchangeRates,
  Timestamp,
} from '@hiero-ledger/sdk';

const info = JSON.parse(process.argv[2]);
const client = Client.forNetwork({ [info.grpc]: info.nodeAccountId });
client.setOperator(info.operatorId, PrivateKey.fromStringDer(info.operatorKey));

const transfer = await new TransferTransaction()
  .addHbarTransfer('0.0.1001', new Hbar(-2))
  .addHbarTransfer('0.0.1004', new Hbar(2))
  .execute(client);
console.log('transfer', (await transfer.getReceipt(client)).status.toString());
console.log('balance', (await new AccountBalanceQuery().setAccountId('0.0.1004').execute(client)).hbars.toTinybars().toString());
const account = await (await new AccountCreateTransaction()
  .setKeyWithoutAlias(PrivateKey.generateECDSA().publicKey)
  .setInitialBalance(new Hbar(1))
  .execute(client)).getReceipt(client);
console.log('account', account.accountId.toString());
const topic = await (await new TopicCreateTransaction().execute(client)).getReceipt(client);
const message = await (await new TopicMessageSubmitTransaction().setTopicId(topic.topicId).setMessage('hi').execute(client)).getReceipt(client);
console.log('message', message.topicSequenceNumber.toString());
const token = await (await new TokenCreateTransaction().setTokenName('JS').setTokenSymbol('JS').setInitialSupply(5)
  .setTreasuryAccountId('0.0.1001').execute(client)).getReceipt(client);
console.log('token', token.status.toString());
// The treasury's relationship and balance, as a real network lists them.
const treasury = await new AccountInfoQuery().setAccountId('0.0.1001').execute(client);
console.log('relationship', treasury.tokenRelationships.get(token.tokenId).balance.toString());
const held = await new AccountBalanceQuery().setAccountId('0.0.1001').execute(client);
console.log('token balance', held.tokens.get(token.tokenId).toString());
console.log('exchange rate', token.exchangeRate.hbars, token.exchangeRate.cents);
// An EVM address as a recipient: a hollow account, completed by its first signed transaction.
const evmKey = PrivateKey.generateECDSA();
const evmAddress = evmKey.publicKey.toEvmAddress();
const lazy = await (await new TransferTransaction()
  .addHbarTransfer('0.0.1001', new Hbar(-3))
  .addHbarTransfer(AccountId.fromEvmAddress(0, 0, evmAddress), new Hbar(3))
  .execute(client)).getReceipt(client);
console.log('hollow', lazy.status.toString());
const hollow = await new AccountInfoQuery().setAccountId(AccountId.fromEvmAddress(0, 0, evmAddress)).execute(client);
console.log('hollow key', hollow.key.toString() === '[]' || hollow.key._keys?.length === 0 ? 'none' : hollow.key.toString());
const first = await new TransferTransaction()
  .addHbarTransfer(hollow.accountId, new Hbar(-1))
  .addHbarTransfer('0.0.1001', new Hbar(1))
  .setTransactionId(TransactionId.generate(hollow.accountId))
  .freezeWith(client)
  .sign(evmKey);
console.log('completing', (await (await first.execute(client)).getReceipt(client)).status.toString());
const completed = await new AccountInfoQuery().setAccountId(hollow.accountId).execute(client);
console.log('completed', completed.key.toStringRaw() === evmKey.publicKey.toStringRaw());
// The mirror's gRPC stream: a subscription sees history and then a chunked message whole.
client.setMirrorNetwork([info.mirrorGrpc]);
const long = 'x'.repeat(2500);
const seen = new Promise((resolve, reject) => {
  const texts = [];
  const handle = new TopicMessageQuery().setTopicId(topic.topicId).setStartTime(Timestamp.fromDate(new Date(0)))
    .subscribe(client, (_m, e) => reject(e), (m) => {
      texts.push(Buffer.from(m.contents).toString());
      if (texts.length === 2) { handle.unsubscribe(); resolve(texts); }
    });
});
await (await new TopicMessageSubmitTransaction().setTopicId(topic.topicId).setMessage(long).execute(client)).getReceipt(client);
const texts = await seen;
console.log('subscription', texts[0], texts[1] === long ? 'chunked-whole' : `${texts[1].length} bytes`);
// The file service, and the system files an SDK reads.
const operatorKey = PrivateKey.fromStringDer(info.operatorKey);
const file = (await (await new FileCreateTransaction().setKeys([operatorKey.publicKey]).setContents('hello')
  .execute(client)).getReceipt(client)).fileId;
await (await new FileAppendTransaction().setFileId(file).setContents(', world').execute(client)).getReceipt(client);
console.log('file', Buffer.from(await new FileContentsQuery().setFileId(file).execute(client)).toString());
console.log('file size', (await new FileInfoQuery().setFileId(file).execute(client)).size.toString());
const fees = FeeSchedules.fromBytes(await new FileContentsQuery().setFileId('0.0.111').execute(client));
console.log('fee schedule', fees.current.transactionFeeSchedule.length > 30);
const rates = ExchangeRates.fromBytes(await new FileContentsQuery().setFileId('0.0.112').execute(client));
console.log('exchange rates', rates.currentRate.hbars, rates.currentRate.cents);
const book = await new AddressBookQuery().setFileId('0.0.102').execute(client);
console.log('address book', book.nodeAddresses.length, book.nodeAddresses[0].accountId.toString());
// High-volume throttles (HIP-1313): a creation asking for them pays the multiplier its
// record states; a transfer cannot ask.
const created = async (highVolume) => (await (await new AccountCreateTransaction()
  .setKeyWithoutAlias(PrivateKey.generateED25519().publicKey).setHighVolume(highVolume)
  .execute(client)).getRecord(client));
const normal = await created(false);
const high = await created(true);
console.log('high volume', high.transactionFee.toTinybars().toNumber() / normal.transactionFee.toTinybars().toNumber(),
  high.highVolumePricingMultiplier.toString(), normal.highVolumePricingMultiplier.toString());
const flagged = await (await new TransferTransaction().addHbarTransfer('0.0.1001', -1).addHbarTransfer('0.0.1004', 1)
  .setHighVolume(true).execute(client)).getRecord(client);
console.log('high volume transfer', flagged.transactionFee.toTinybars().toString(), flagged.highVolumePricingMultiplier.toString());
process.exit(0);
