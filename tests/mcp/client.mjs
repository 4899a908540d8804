// The official TypeScript MCP client (@modelcontextprotocol/sdk) driven line by line, for
// hak's MCP test (tests/all/mcp.rs).
//   node client.mjs stdio <command> [args...]   start the server and talk over its stdio
//   node client.mjs http <url>                  streamable HTTP ($HAK_MCP_BEARER: bearer key)
// stdin: one JSON command per line, {"op": "list"} or {"op": "call", "name", "arguments"};
// stdout: one JSON line per command: the SDK's result object, or {"clientError": message}
// when the SDK raised (a protocol error). Progress notifications are counted into the call's
// result as "progressNotes". With $HAK_MCP_ELICIT=approve|deny the client declares the
// elicitation capability and answers every elicitation so (accept with approve true / false,
// and a note); the questions it was asked are counted into the call's result as "elicitations"
// (their messages).
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [how, target, ...rest] = process.argv.slice(2);
let transport;
if (how === 'stdio') {
  transport = new StdioClientTransport({ command: target, args: rest, env: { ...process.env }, stderr: 'inherit' });
} else if (how === 'http') {
  const headers = process.env.HAK_MCP_BEARER ? { authorization: `Bearer ${process.env.HAK_MCP_BEARER}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else {
  throw new Error(`usage: client.mjs stdio <command> [args...] | http <url>`);
}
const elicit = process.env.HAK_MCP_ELICIT;
const client = new Client(
  { name: 'hak-test-ts', version: '1.0.0' },
  elicit ? { capabilities: { elicitation: {} } } : undefined,
);
let elicitations = [];
if (elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicitations.push(request.params.message);
    return { action: 'accept', content: { approve: elicit === 'approve', note: `the TS client says ${elicit}` } };
  });
}
await client.connect(transport);
const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const command = JSON.parse(line);
  let out;
  try {
    if (command.op === 'list') {
      out = await client.listTools();
    } else if (command.op === 'call') {
      let progressNotes = 0;
      elicitations = [];
      out = await client.callTool(
        { name: command.name, arguments: command.arguments },
        undefined,
        { onprogress: () => { progressNotes += 1; }, timeout: 120000 },
      );
      out.progressNotes = progressNotes;
      out.elicitations = elicitations;
    } else {
      out = { clientError: `unknown op ${command.op}` };
    }
  } catch (e) {
    out = { clientError: String(e?.message ?? e) };
  }
  console.log(JSON.stringify(out));
}
await client.close();
