""""tx-timing-hook" in Python: the twin of example-plugins/rust/tx-timing-hook. The monotonic
clock at pre-tool-execution; the call's duration in microseconds logged at post-tool-execution,
tagged [tx-timing-hook]. The start lives in the instance, which serves one call at a time from
its first stage to its last, so concurrent calls of one context never overwrite each other's.

Config: {"relevantTools": ["transfer_hbar_tool"]} (default: every tool).
"""

import time

from hak_guest import AbstractHook, host, register
from hak_guest.exports import Events, Hooks, Inputs, Plugin, Policy  # noqa: F401 (the component's exports)


class TxTimingHook(AbstractHook):
    def __init__(self, config: dict):
        for key in config:
            if key != "relevantTools":
                raise ValueError(f"invalid config: unknown field `{key}`")
        tools = config.get("relevantTools", ["*"])
        if not isinstance(tools, list) or not tools:
            raise ValueError("invalid config: relevantTools: list at least one tool")
        self.tools = tools
        self.started = None

    @property
    def name(self) -> str:
        return "tx-timing-hook"

    @property
    def description(self) -> str:
        return "Measures each tool call's duration and logs it"

    @property
    def relevant_tools(self) -> list:
        return self.tools

    @property
    def reads(self) -> dict:
        return {"*": []}

    async def pre_tool_execution_hook(self, context, params, method):
        self.started = time.monotonic_ns()

    async def post_secondary_action_hook(self, context, params, method):
        if self.started is None:
            return
        micros = (time.monotonic_ns() - self.started) // 1000
        self.started = None
        host.info(f"[tx-timing-hook] {method} took {micros} µs")


register(TxTimingHook)
