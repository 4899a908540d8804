"""hak's Python guest SDK: hooks and policies written as the Python Hedera Agent Kit teaches them
(``AbstractHook``, ``AbstractPolicy``, ``should_block_*`` returning ``True`` to block), built
into sandboxed WebAssembly components with componentize-py.

A plugin module defines its hook or policy class and registers a factory that builds it from
the operator's config (the manifest's ``config`` table, as a dict)::

    from hak_guest import AbstractPolicy, register
    from hak_guest.exports import Plugin, Hooks, Policy, Events, Inputs  # the component's exports

    class MaxHbar(AbstractPolicy):
        def __init__(self, config):
            self.max_tinybars = int(config["maxTinybars"])

        @property
        def name(self): return "Max HBAR"
        @property
        def relevant_tools(self): return ["transfer_hbar_tool"]

        async def should_block_post_params_normalization(self, context, params, method):
            return any(m.amount > self.max_tinybars for m in params.facts.movements)

    register(MaxHbar)

The kit's methods are ``async``: each is driven by one coroutine step per call (no event loop);
a method that awaits something that does not complete at once fails the call. Outside a
component (``python3 -m unittest``) the host imports are the fakes of ``hak_guest.testing``.
"""

from ._kit import (
    AbstractHook,
    AbstractPolicy,
    Block,
    Context,
    NeedsApproval,
    PostCoreActionParams,
    PostParamsNormalizationParams,
    PostSecondaryActionParams,
    PreToolExecutionParams,
    Replace,
    register,
)
from ._facts import Asset, Entity, Facts, Movement
from . import host

__all__ = [
    "AbstractHook",
    "AbstractPolicy",
    "Asset",
    "Block",
    "Context",
    "Entity",
    "Facts",
    "Movement",
    "NeedsApproval",
    "PostCoreActionParams",
    "PostParamsNormalizationParams",
    "PostSecondaryActionParams",
    "PreToolExecutionParams",
    "Replace",
    "host",
    "register",
]
