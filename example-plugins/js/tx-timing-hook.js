// "tx-timing-hook" in JavaScript: the twin of example-plugins/rust/tx-timing-hook.
// performance.now() (the host's monotonic clock) at pre-tool-execution; the call's duration
// in microseconds logged at post-tool-execution, tagged [tx-timing-hook]. The start lives in
// the instance, which serves one call at a time from its first stage to its last, so
// concurrent calls of one context never overwrite each other's start.
// Config: {"relevantTools": ["transfer_hbar_tool"]} (default: every tool).
import { definePlugin, Stage, host } from '@hak/guest';

let started = null;

export default definePlugin({
  describe(config) {
    for (const key of Object.keys(config)) {
      if (key !== 'relevantTools') throw `invalid config: unknown field \`${key}\``;
    }
    if (config.relevantTools !== undefined && (!Array.isArray(config.relevantTools) || config.relevantTools.length === 0)) {
      throw 'invalid config: relevantTools: list at least one tool';
    }
    return {
      name: 'tx-timing-hook',
      description: "Measures each tool call's duration and logs it",
      relevantTools: config.relevantTools ?? ['*'],
      hookStages: [Stage.PRE_TOOL_EXECUTION, Stage.POST_SECONDARY_ACTION],
      reads: { '*': [] },
    };
  },
  hooks: {
    preToolExecution() {
      started = performance.now();
    },
    postToolExecution(input) {
      if (started === null) return;
      const micros = Math.round((performance.now() - started) * 1000);
      started = null;
      host.log('info', `[tx-timing-hook] ${input.method} took ${micros} µs`);
    },
  },
});
