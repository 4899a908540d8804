"""The component's exports. The app module imports them so componentize-py finds them::

    from hak_guest.exports import Plugin, Hooks, Policy, Events, Inputs  # noqa: F401

In a native run (unit tests) there is no component and no generated ``wit_world``: the names
are ``None`` and the app module imports all the same."""

try:
    from ._wit_exports import Events, Hooks, Inputs, Plugin, Policy
except ImportError as missing:
    if missing.name not in ("wit_world", "componentize_py_types"):
        raise
    Events = Hooks = Inputs = Plugin = Policy = None

__all__ = ["Events", "Hooks", "Inputs", "Plugin", "Policy"]
