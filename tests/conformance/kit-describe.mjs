// The JS kit's tool descriptions as its tools render them for one context, for hak's
// description test (tests/all/descriptions.rs). argv[2]: the context as JSON
// ({"mode": "returnBytes"|"autonomous", "accountId"?: "0.0.N"}). stdout: one JSON object
// {method: description} over every tool of the kit's core plugins.
import { allCorePlugins } from '@hashgraph/hedera-agent-kit/plugins';

const context = JSON.parse(process.argv[2] ?? '{}');
const out = {};
for (const tool of allCorePlugins.flatMap((p) => p.tools(context))) {
  out[tool.method] = tool.description;
}
console.log(JSON.stringify(out));
