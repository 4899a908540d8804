"""The stage JSON as Python objects: dicts whose keys are also attributes, in the Python kit's
snake_case (``params.normalized_params.hbar_transfers`` reads ``hbarTransfers``) or as written
(``params.raw_params["transfers"]``). Lists and scalars stay what ``json.loads`` made them."""

from typing import Any


def snake_to_camel(name: str) -> str:
    """``hbar_transfers`` -> ``hbarTransfers`` (a name without ``_`` is returned as it is)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class JsonObject(dict):
    """A JSON object whose keys read as attributes too, snake_case or as written."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name in self:
            return self[name]
        camel = snake_to_camel(name)
        if camel in self:
            return self[camel]
        raise AttributeError(name)


def wrap(value: Any) -> Any:
    """Wrap every object of a ``json.loads`` result (used as its ``object_hook``)."""
    return JsonObject(value) if isinstance(value, dict) and not isinstance(value, JsonObject) else value
