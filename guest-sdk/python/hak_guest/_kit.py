"""The Python kit's hook and policy classes, and the dispatch from the component's exports to
the one registered plugin. Nothing here touches the contract's generated types (``exports``
converts them), so a plugin runs the same natively under ``hak_guest.testing``."""

import json
from dataclasses import dataclass
from types import CoroutineType
from typing import Any, Callable, Dict, List, Optional

from . import _facts

_DECODER = json.JSONDecoder()

#: The four hookable stages, in the kit's method-name spelling.
STAGES = (
    "pre_tool_execution",
    "post_params_normalization",
    "post_core_action",
    "post_secondary_action",
)


class Context:
    """The agent context a call runs in: ``mode`` is ``autonomous``, ``returnBytes``,
    ``customExecuteTx`` or ``customReturnBytes``. Read-only; a stage's context is read from
    the stage JSON on first use (the host writes it last, so a policy that never looks at it
    never decodes the params it does not read either)."""

    __slots__ = ("_source", "_values")

    def __init__(self, account_id: Optional[str] = None, mode: str = "autonomous", network: Optional[str] = None):
        self._source = None
        self._values = (account_id, mode, network)

    @classmethod
    def _of(cls, params: "_StageParams") -> "Context":
        context = cls.__new__(cls)
        context._source = params
        context._values = None
        return context

    def _get(self) -> tuple:
        values = self._values
        if values is None:
            c = self._source._value("context") or {}
            values = self._values = (c.get("accountId"), c.get("mode", "autonomous"), c.get("network"))
            self._source = None
        return values

    @property
    def account_id(self) -> Optional[str]:
        return self._get()[0]

    @property
    def mode(self) -> str:
        return self._get()[1]

    @property
    def network(self) -> Optional[str]:
        return self._get()[2]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Context) and self._get() == other._get()

    def __hash__(self) -> int:
        return hash(self._get())

    def __repr__(self) -> str:
        a, m, n = self._get()
        return f"Context(account_id={a!r}, mode={m!r}, network={n!r})"


class _StageParams:
    """The kit's params object: ``context``, ``raw_params``, ``normalized_params``,
    ``core_action_result``, ``tool_result`` (each present from the stage that produces it),
    ``method`` and ``client`` (always ``None``: a sandboxed plugin has no SDK client), plus
    hak's ``facts``. The values are what ``json.loads`` makes of the stage JSON (dicts keyed
    like the JSON, typed in ``hak_guest.tools``), decoded on first use, once."""

    _KEYS = {
        "raw_params": "rawParams",
        "normalized_params": "normalisedParams",
        "normalised_params": "normalisedParams",
        "core_action_result": "coreActionResult",
        "tool_result": "toolResult",
    }

    def __init__(self, method: str, params_json: str, facts: _facts.Facts):
        self.method = method
        self.facts = facts
        self.client = None
        self._json = params_json
        self._values: Dict[str, Any] = {}
        self._at = 1  # where the next unread key starts
        self._done = not params_json

    def _value(self, key: str) -> Any:
        """The value of ``key`` in the stage JSON. The host writes the newest part first
        (``toolResult``, ``coreActionResult``, ``normalisedParams``, ``rawParams``, ``context``),
        so values are decoded in order only as far as the one asked for: a policy reading
        ``normalized_params`` never pays for the raw params and the context."""
        while key not in self._values and not self._done:
            text = self._json
            try:
                name, at = _DECODER.raw_decode(text, self._at)
                if text[at] != ":":
                    raise ValueError("expected ':'")
                value, at = _DECODER.raw_decode(text, at + 1)
            except (ValueError, IndexError):
                # Not the compact object the host writes: read it whole.
                self._values = json.loads(text)
                self._done = True
                break
            self._values[name] = value
            if text[at] == ",":
                self._at = at + 1
            else:
                self._done = True
        return self._values.get(key)

    @property
    def context(self) -> Context:
        # Not kept here: a context pointing back at its params would be a reference cycle,
        # left to the cyclic collector on every call.
        return Context._of(self)

    def __getattr__(self, name: str) -> Any:
        key = _StageParams._KEYS.get(name)
        if key is None:
            raise AttributeError(name)
        return self._value(key)


class PreToolExecutionParams(_StageParams):
    pass


class PostParamsNormalizationParams(_StageParams):
    pass


class PostCoreActionParams(_StageParams):
    pass


class PostSecondaryActionParams(_StageParams):
    pass


_PARAMS = {
    "pre_tool_execution": PreToolExecutionParams,
    "post_params_normalization": PostParamsNormalizationParams,
    "post_core_action": PostCoreActionParams,
    "post_secondary_action": PostSecondaryActionParams,
}


class AbstractHook:
    """The kit's ``AbstractHook``: override ``name``, ``relevant_tools`` (``"*"`` for every
    tool), optionally ``description``, and the ``*_hook`` methods of the stages to observe.
    A hook's return value is ignored, except ``Replace(value)`` (hak: replaces ``raw_params``
    at pre-tool-execution, ``normalized_params`` at post-params-normalization, the tool result
    at post-secondary-action; the operator must grant ``params:replace`` / ``result:replace``).
    An exception fails the call with its message, as in the kit."""

    @property
    def name(self) -> str:
        raise NotImplementedError

    @property
    def description(self) -> str:
        return ""

    @property
    def relevant_tools(self) -> List[str]:
        raise NotImplementedError

    @property
    def reads(self) -> Optional[Dict[str, List[str]]]:
        """hak: what the plugin reads of its input per tool (``{"*": ["params", "facts"]}``);
        the host hands it only that. ``None`` (the default) reads everything."""
        return None

    async def pre_tool_execution_hook(self, context, params, method):
        return None

    async def post_params_normalization_hook(self, context, params, method):
        return None

    async def post_core_action_hook(self, context, params, method):
        return None

    async def post_secondary_action_hook(self, context, params, method):
        return None


class AbstractPolicy(AbstractHook):
    """The kit's ``AbstractPolicy``: override ``should_block_*`` for the stages to judge;
    ``True`` blocks (the call fails with the kit's ``Action … blocked by policy: <name>
    (<description>)``), ``False`` lets it go on. hak also takes ``Block(reason, code,
    details)`` and ``NeedsApproval(…)``. A raised exception fails the call, as in the kit."""

    async def should_block_pre_tool_execution(self, context, params, method) -> bool:
        return False

    async def should_block_post_params_normalization(self, context, params, method) -> bool:
        return False

    async def should_block_post_core_action(self, context, params, method) -> bool:
        return False

    async def should_block_post_secondary_action(self, context, params, method) -> bool:
        return False


@dataclass(frozen=True)
class Block:
    """A block with a reason (``policyBlock.reason``), a machine code and details (any JSON)."""

    reason: str
    code: Optional[str] = None
    details: Any = None


@dataclass(frozen=True)
class NeedsApproval:
    """Park the call until a human approves (the chain goes on) or denies it; 0 seconds: the
    host's default timeout."""

    message: str
    code: Optional[str] = None
    details: Any = None
    timeout_seconds: int = 0


@dataclass(frozen=True)
class Replace:
    """A hook's replacement value (JSON-serialisable)."""

    value: Any


_factory: List[Callable[[dict], AbstractHook]] = []
_plugin: List[AbstractHook] = []
#: Resolved once by ``describe`` (the instance and its answers do not change afterwards, and
#: the host calls only at the stages and for the tools ``describe`` named): the relevant
#: tools (``None``: every tool) and each stage's bound hook and policy method.
_relevant_tools: List[Optional[frozenset]] = [None]
_hooks: Dict[str, Callable] = {}
_policies: Dict[str, Callable] = {}


def register(factory: Callable[[dict], AbstractHook]) -> None:
    """Make ``factory`` (a class taking the config dict, or any callable) the component's
    plugin. Call it once, at module level."""
    _factory[:] = [factory]


def step(value: Any) -> Any:
    """The result of a kit method: a coroutine is driven by one step (no event loop)."""
    if type(value) is not CoroutineType:
        return value
    try:
        value.send(None)
    except StopIteration as done:
        return done.value
    value.close()
    raise RuntimeError(
        "the plugin awaited something that does not complete at once (a plugin has no event loop)"
    )


def _overrides(obj: object, base: type, method: str) -> bool:
    return getattr(type(obj), method) is not getattr(base, method)


def plugin() -> AbstractHook:
    if not _plugin:
        raise RuntimeError("describe has not run")
    return _plugin[0]


def describe(config_json: str) -> dict:
    """Build the plugin from its config; what it is and where it must be called. Raises
    ``ValueError`` (refusing the plugin at load) on a bad config."""
    if not _factory:
        raise ValueError("no plugin registered: call hak_guest.register(YourPlugin) in the app module")
    config = json.loads(config_json or "{}")
    try:
        instance = _factory[0](config)
    except Exception as e:  # the plugin's own config check
        raise ValueError(str(e) or type(e).__name__) from None
    if not isinstance(instance, AbstractHook):
        raise ValueError("the registered factory must build an AbstractHook or AbstractPolicy")
    _plugin[:] = [instance]
    tools = list(instance.relevant_tools)
    policy = isinstance(instance, AbstractPolicy)
    _relevant_tools[0] = None if "*" in tools else frozenset(tools)
    _hooks.clear()
    _policies.clear()
    for stage in STAGES:
        _hooks[stage] = getattr(instance, stage + "_hook")
        if policy:
            _policies[stage] = getattr(instance, "should_block_" + stage)
    return {
        "name": str(instance.name),
        "description": str(instance.description or ""),
        "relevant_tools": tools,
        "hook_stages": [s for s in STAGES if _overrides(instance, AbstractHook, s + "_hook")],
        "policy_stages": [
            s
            for s in STAGES
            if policy and _overrides(instance, AbstractPolicy, "should_block_" + s)
        ],
    }


def _relevant(method: str) -> bool:
    tools = _relevant_tools[0]
    return tools is None or method in tools


def run_hook(stage: str, method: str, params_json: str, facts: _facts.Facts) -> Optional[str]:
    """Run the hook of ``stage``: ``None`` to proceed, or the replacement JSON."""
    hook = _hooks.get(stage)
    if hook is None:
        plugin()  # raises when describe has not run
        raise RuntimeError(f"no hook for stage {stage}")
    if not _relevant(method):
        return None
    params = _PARAMS[stage](method, params_json, facts)
    answer = step(hook(params.context, params, method))
    if isinstance(answer, Replace):
        return json.dumps(answer.value, separators=(",", ":"))
    return None


def run_policy(stage: str, method: str, params_json: str, facts: _facts.Facts) -> Any:
    """Run the policy of ``stage``: ``None`` to allow, a ``Block`` or a ``NeedsApproval``."""
    policy = _policies.get(stage)
    if policy is None:
        plugin()  # raises when describe has not run
        raise RuntimeError(f"the plugin is not a policy (stage {stage})")
    if not _relevant(method):
        return None
    params = _PARAMS[stage](method, params_json, facts)
    answer = step(policy(params.context, params, method))
    if answer is True:
        instance = plugin()
        desc = f" ({instance.description})" if instance.description else ""
        return Block(f"Action blocked by policy: {instance.name}{desc}")
    if isinstance(answer, (Block, NeedsApproval)):
        return answer
    if answer in (False, None):
        return None
    raise TypeError(f"should_block_{stage} returned {answer!r}: return True, False, Block or NeedsApproval")


def reads() -> Optional[Dict[str, List[str]]]:
    return plugin().reads
