// NFT allowance delegation and the order of transfer checks, through the official JS SDK.
// Argument: the JSON line `hak emu` prints. Prints one line per step.
import {
  Client, PrivateKey, Hbar, AccountCreateTransaction, TokenCreateTransaction, TokenType,
  TokenAssociateTransaction, TokenMintTransaction, AccountAllowanceApproveTransaction, NftId,
  TransferTransaction, TransactionId,
} from '@hiero-ledger/sdk';

const info = JSON.parse(process.argv[2]);
const operatorKey = PrivateKey.fromStringDer(info.operatorKey);
const client = Client.forNetwork({ [info.grpc]: info.nodeAccountId });
client.setOperator(info.operatorId, operatorKey);

async function status(tx, as, ...signers) {
  try {
    tx.freezeWith(as);
    for (const key of signers) await tx.sign(key);
    return (await (await tx.execute(as)).getReceipt(as)).status.toString();
  } catch (e) {
    if (e.status === undefined) throw e;
    return e.status.toString();
  }
}
const account = async () => {
  const key = PrivateKey.generateED25519();
  const id = (await (await new AccountCreateTransaction().setKeyWithoutAlias(key.publicKey)
    .setInitialBalance(new Hbar(5)).execute(client)).getReceipt(client)).accountId;
  const as = Client.forNetwork({ [info.grpc]: info.nodeAccountId });
  as.setOperator(id, key);
  return { id, key, as };
};

const delegate = await account();
const spender = await account();
const receiver = await account();
const nft = (await (await new TokenCreateTransaction().setTokenName('Art').setTokenSymbol('ART')
  .setTokenType(TokenType.NonFungibleUnique).setTreasuryAccountId(info.operatorId)
  .setSupplyKey(operatorKey).execute(client)).getReceipt(client)).tokenId;
for (const who of [delegate, receiver]) {
  await status(new TokenAssociateTransaction().setAccountId(who.id).setTokenIds([nft]), client, who.key);
}
const serials = (await (await new TokenMintTransaction().setTokenId(nft)
  .addMetadata(Uint8Array.of(1)).addMetadata(Uint8Array.of(2)).execute(client)).getReceipt(client)).serials;
const first = new NftId(nft, serials[0]);

const delegated = () => new AccountAllowanceApproveTransaction()
  .approveTokenNftAllowanceWithDelegatingSpender(first, info.operatorId, spender.id, delegate.id);
console.log('delegate without approval', await status(delegated(), delegate.as));
console.log('approve all', await status(new AccountAllowanceApproveTransaction()
  .approveTokenNftAllowanceAllSerials(nft, info.operatorId, delegate.id), client));
console.log('delegate', await status(delegated(), delegate.as));
const move = new TransferTransaction().addApprovedNftTransfer(first, info.operatorId, receiver.id)
  .setTransactionId(TransactionId.generate(spender.id));
console.log('spender moves it', await status(move, spender.as));

// A spender debiting itself "on approval" without an allowance of its own: allowances are
// checked before the sender's own relationship.
const token = (await (await new TokenCreateTransaction().setTokenName('Coin').setTokenSymbol('C')
  .setInitialSupply(100).setTreasuryAccountId(info.operatorId).execute(client)).getReceipt(client)).tokenId;
await status(new TokenAssociateTransaction().setAccountId(receiver.id).setTokenIds([token]), client, receiver.key);
await status(new AccountAllowanceApproveTransaction().approveTokenAllowance(token, info.operatorId, spender.id, 10), client);
console.log('own debit on approval', await status(new TransferTransaction()
  .addApprovedTokenTransfer(token, spender.id, -1).addApprovedTokenTransfer(token, receiver.id, 1), spender.as));
for (const c of [client, delegate.as, spender.as, receiver.as]) c.close();
