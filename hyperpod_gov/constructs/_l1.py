"""CloudFormation-spelled properties (``emit``'s output) as the typed keyword arguments of an aws-cdk-lib L1 class.

The field tables emit PascalCase members (``{"LifeCycleConfig": {"SourceS3Uri": ...}}``); an L1 class takes its
struct types (``CfnCluster.ClusterLifeCycleConfigProperty(source_s3_uri=...)``). Building those structs, member by
member from the class's own type hints, keeps what the L1 gives: its validation, the order it renders members in,
its typed attributes, and an escape hatch that reaches into lists (``add_property_override("InstanceGroups.0...")``),
which a raw override of a whole list would not.
"""

from __future__ import annotations

import collections.abc
import functools
import typing
from typing import Any, Mapping, Optional

__all__ = ["l1_kwargs"]

_SCALARS = (str, int, float, bool, type(None))


def l1_kwargs(cls: type, props: Mapping[str, Any]) -> dict[str, Any]:
    """``props`` as keyword arguments of ``cls`` (an L1 class): each struct built as its type, a map (a member typed
    ``Mapping[str, ...]``, such as Kubernetes labels) passed with its keys as they are."""
    return _members(cls, props)


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    """The keyword arguments ``cls`` takes, by their names without underscores, lowercase (``volumesizeingb``)."""
    hints = typing.get_type_hints(cls.__init__)
    return {name.replace("_", ""): (name, hint) for name, hint in hints.items() if name != "return"}


def _members(cls: type, value: Mapping[str, Any]) -> dict[str, Any]:
    hints = _hints(cls)
    out = {}
    for member, v in value.items():
        if member.lower() not in hints:
            raise KeyError(f"{cls.__qualname__} has no member {member!r}")
        name, hint = hints[member.lower()]
        out[name] = _typed(hint, v)
    return out


def _typed(hint: Any, value: Any) -> Any:
    if isinstance(value, Mapping):
        struct = _struct(hint)
        return dict(value) if struct is None else struct(**_members(struct, value))
    if isinstance(value, list):
        item = _item(hint)
        return [_typed(item, v) for v in value]
    return value


def _alternatives(hint: Any) -> tuple[Any, ...]:
    return typing.get_args(hint) if typing.get_origin(hint) is typing.Union else (hint,)


def _struct(hint: Any) -> Optional[type]:
    """The struct type among a member's alternatives (None: a map, or a type the value passes as it is)."""
    for alt in _alternatives(hint):
        if isinstance(alt, type) and typing.get_origin(alt) is None and not issubclass(alt, _SCALARS) \
                and alt.__name__.endswith("Property"):
            return alt
    return None


def _item(hint: Any) -> Any:
    """The item type of a list member (``Sequence[X]``): Any where the hint has none."""
    for alt in _alternatives(hint):
        if typing.get_origin(alt) in (collections.abc.Sequence, list):
            return typing.get_args(alt)[0]
    return Any
