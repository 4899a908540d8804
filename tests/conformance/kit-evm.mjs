// The JS kit's own EVM tools, AUTONOMOUS, against hak's local network (for tests/all/evm.rs):
// create an ERC-20, transfer it, create an ERC-721, mint, transfer. argv[2]: the emulator's
// connection JSON (`hak emu` prints it). The operator is the ECDSA genesis account 0.0.1003
// with its documented dev key; the ledger is the kit's local node, so the kit picks the
// factories it knows for one (0.0.1012, 0.0.1013). stdout: one JSON line per call, the
// tool's answer.
import { Client, LedgerId, PrivateKey } from '@hiero-ledger/sdk';
import { HederaMirrornodeServiceDefaultImpl } from '@hashgraph/hedera-agent-kit';
import { coreEVMPlugin } from '@hashgraph/hedera-agent-kit/plugins';

const info = JSON.parse(process.argv[2]);
const client = Client.forNetwork({ [info.grpc]: info.nodeAccountId });
client.setLedgerId(LedgerId.LOCAL_NODE);
const seed = new Uint8Array(32).fill(0x42);
seed[0] = 0x10;
seed[1] = 0x03;
client.setOperator('0.0.1003', PrivateKey.fromBytesECDSA(seed));
const mirrornodeService = new HederaMirrornodeServiceDefaultImpl(LedgerId.TESTNET);
mirrornodeService.baseUrl = `${info.mirror}/api/v1`;
const context = { accountId: '0.0.1003', mode: 'autonomous', mirrornodeService };
const tools = new Map(coreEVMPlugin.tools(context).map((t) => [t.method, t]));
const json = (value) => JSON.stringify(value, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
const call = async (method, params) => {
  const out = await tools.get(method).execute(client, context, params);
  console.log(json({ method, erc20Address: out.erc20Address, erc721Address: out.erc721Address, status: out.raw?.status, error: out.raw?.error, humanMessage: out.humanMessage }));
  return out;
};
const erc20 = (await call('create_erc20_tool', { tokenName: 'Kit Gold', tokenSymbol: 'KGLD', decimals: 2, initialSupply: 1000 })).erc20Address;
await call('transfer_erc20_tool', { contractId: erc20, recipientAddress: '0.0.1002', amount: 1.5 });
const erc721 = (await call('create_erc721_tool', { tokenName: 'Kit Art', tokenSymbol: 'KART', baseURI: 'ipfs://kit/' })).erc721Address;
await call('mint_erc721_tool', { contractId: erc721 });
await call('transfer_erc721_tool', { contractId: erc721, toAddress: '0.0.1004', tokenId: 0 });
process.exit(0);
