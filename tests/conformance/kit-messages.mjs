// The JS kit's own submit_topic_message_tool, AUTONOMOUS, against hak's local network (for
// tests/all/consensus.rs): each message goes to the topic as the kit cuts it into chunks.
// argv[2]: the emulator's connection JSON (`hak emu` prints it); argv[3]: the topic id;
// stdin: a JSON array of messages. stdout: one JSON line per message, the tool's answer.
import { Client, LedgerId, PrivateKey } from '@hiero-ledger/sdk';
import { HederaMirrornodeServiceDefaultImpl } from '@hashgraph/hedera-agent-kit';
import { coreConsensusPlugin } from '@hashgraph/hedera-agent-kit/plugins';

const info = JSON.parse(process.argv[2]);
const topicId = process.argv[3];
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const messages = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const client = Client.forNetwork({ [info.grpc]: info.nodeAccountId });
client.setLedgerId(LedgerId.LOCAL_NODE);
client.setOperator(info.operatorId, PrivateKey.fromStringDer(info.operatorKey));
const mirrornodeService = new HederaMirrornodeServiceDefaultImpl(LedgerId.TESTNET);
mirrornodeService.baseUrl = `${info.mirror}/api/v1`;
const context = { accountId: info.operatorId, mode: 'autonomous', mirrornodeService };
const tool = coreConsensusPlugin.tools(context).find((t) => t.method === 'submit_topic_message_tool');
for (const message of messages) {
  const out = await tool.execute(client, context, { topicId, message });
  console.log(JSON.stringify({ status: out.raw?.status?.toString(), error: out.raw?.error, humanMessage: out.humanMessage }));
}
client.close();
