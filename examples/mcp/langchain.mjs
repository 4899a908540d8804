// hak's tools as LangChain.js tools through LangChain's MCP adapter: the adapter starts
// `hak mcp` (stdio) on the local network inside hak with the example policies
// (../local.toml), lists the tools and calls two of them the way an agent would. Needs
// `scripts/setup-and-run.sh` (or `cargo build -p hak-host --bin hak` and
// `scripts/build-plugins.sh rust`) first, then `npm ci` here:
//
//   node langchain.mjs
//
// With a chat model, hand `tools` to an agent, e.g. LangChain's
// `createAgent({ model, tools })`; hak's policies then apply to every call the model makes.
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const client = new MultiServerMCPClient({
  useStandardContentBlocks: true,
  mcpServers: {
    hak: {
      transport: 'stdio',
      command: process.env.HAK_BIN ?? path.join(root, 'target/debug/hak'),
      args: ['mcp', '--config', path.join(root, 'examples/local.toml')],
    },
  },
});
const tools = await client.getTools();
console.log(`${tools.length} tools, e.g. ${tools.slice(0, 3).map((t) => t.name).join(', ')}`);
const transfer = tools.find((t) => t.name === 'transfer_hbar_tool');

// Allowed: one recipient.
console.log(await transfer.invoke({ transfers: [{ accountId: '0.0.1002', amount: 1 }] }));
// Blocked by Max Recipients (at most 2 in ../local.toml): the agent reads which policy and why.
try {
  console.log(await transfer.invoke({
    transfers: ['0.0.1002', '0.0.1003', '0.0.1004'].map((accountId) => ({ accountId, amount: 1 })),
  }));
} catch (e) {
  console.log(`blocked: ${e.message}`);
}
await client.close();
