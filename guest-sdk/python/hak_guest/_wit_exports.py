"""The component's exports (contract ``hedera:agent-kit/agent-plugin@0.2.2``), each converting
the contract's types (componentize-py's generated ``wit_world``) to the SDK's and calling the
registered plugin. Imported through ``hak_guest.exports``."""

import json

import wit_world
from componentize_py_types import Err
from wit_world.exports import inputs as _inputs
from wit_world.imports import types as _t

from . import _facts, _kit

_STAGE_OF = {
    _t.Stage.PRE_TOOL_EXECUTION: "pre_tool_execution",
    _t.Stage.POST_PARAMS_NORMALIZATION: "post_params_normalization",
    _t.Stage.POST_CORE_ACTION: "post_core_action",
    _t.Stage.POST_SECONDARY_ACTION: "post_secondary_action",
}
_WIT_STAGE = {name: stage for stage, name in _STAGE_OF.items()}


def _asset(a) -> _facts.Asset:
    if isinstance(a, _t.Asset_Token):
        return _facts.Asset("token", a.value)
    if isinstance(a, _t.Asset_Nft):
        return _facts.Asset("nft", a.value)
    return _facts.Asset("hbar")


def _facts_of(f) -> _facts.Facts:
    if f is None:  # a plugin that does not read facts, or pre-tool-execution
        return _facts.NONE
    return _facts.Facts(
        movements=[
            _facts.Movement(
                _asset(m.asset),
                m.to,
                m.amount,
                "allowance" if m.via == _t.Via.ALLOWANCE else "transfer",
            )
            for m in f.movements
        ],
        source=f.source,
        tokens=list(f.tokens),
        changes=[_facts.Entity(c.kind, c.id) for c in f.changes],
        memo=f.memo,
        scheduled=f.scheduled,
    )


def _message(e: BaseException) -> str:
    return str(e) or type(e).__name__


def _details(value) -> "str | None":
    return None if value is None else json.dumps(value, separators=(",", ":"))


class Plugin(wit_world.exports.Plugin):
    def describe(self, config: str) -> _t.PluginInfo:
        try:
            info = _kit.describe(config)
        except Exception as e:
            raise Err(_message(e))
        return _t.PluginInfo(
            name=info["name"],
            description=info["description"],
            relevant_tools=info["relevant_tools"],
            hook_stages=[_WIT_STAGE[s] for s in info["hook_stages"]],
            policy_stages=[_WIT_STAGE[s] for s in info["policy_stages"]],
        )


def _hook(stage: str, input: _t.StageInput) -> _t.HookResult:
    try:
        replaced = _kit.run_hook(stage, input.method, input.params, _facts_of(input.facts))
    except Exception as e:
        raise Err(_message(e))
    return _t.HookResult_Proceed() if replaced is None else _t.HookResult_Replace(replaced)


class Hooks(wit_world.exports.Hooks):
    def pre_tool_execution(self, input):
        return _hook("pre_tool_execution", input)

    def post_params_normalization(self, input):
        return _hook("post_params_normalization", input)

    def post_core_action(self, input):
        return _hook("post_core_action", input)

    def post_tool_execution(self, input):
        return _hook("post_secondary_action", input)


#: The allow verdict, built once (the runtime only reads it).
_ALLOW = _t.Verdict_Allow()


def _policy(stage: str, input: _t.StageInput) -> _t.Verdict:
    try:
        answer = _kit.run_policy(stage, input.method, input.params, _facts_of(input.facts))
    except Exception as e:
        raise Err(_message(e))
    if answer is None:
        return _ALLOW
    if isinstance(answer, _kit.NeedsApproval):
        return _t.Verdict_NeedsApproval(
            _t.ApprovalRequest(
                answer.message, answer.code, _details(answer.details), answer.timeout_seconds
            )
        )
    return _t.Verdict_Block(_t.BlockInfo(answer.reason, answer.code, _details(answer.details)))


class Policy(wit_world.exports.Policy):
    def should_block_pre_tool_execution(self, input):
        return _policy("pre_tool_execution", input)

    def should_block_post_params_normalization(self, input):
        return _policy("post_params_normalization", input)

    def should_block_post_core_action(self, input):
        return _policy("post_core_action", input)

    def should_block_post_secondary_action(self, input):
        return _policy("post_secondary_action", input)


class Events(wit_world.exports.Events):
    def on_tool_failure(self, input: str) -> None:
        observe = getattr(_kit.plugin(), "on_tool_failure", None)
        if observe is not None:
            _kit.step(observe(json.loads(input)))


class Inputs(wit_world.exports.Inputs):
    def reads(self):
        table = _kit.reads()
        if table is None:
            return [_inputs.ToolReads("*", _inputs.Parts.PARAMS | _inputs.Parts.FACTS)]
        out = []
        for tool, parts in table.items():
            flags = _inputs.Parts(0)
            if "params" in parts:
                flags |= _inputs.Parts.PARAMS
            if "facts" in parts:
                flags |= _inputs.Parts.FACTS
            out.append(_inputs.ToolReads(tool, flags))
        return out
