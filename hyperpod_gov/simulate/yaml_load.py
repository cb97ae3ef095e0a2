"""Scenario YAML loaded as ``yaml.safe_load`` loads it, faster on the plain data a scenario is.

PyYAML's ``CSafeLoader`` parses with libyaml, but composes a node per value and resolves and constructs each
scalar in Python; on a 7 MB scenario that is most of the load. :func:`load_plain` builds the Python objects
straight from libyaml's events instead, resolving each distinct plain scalar once (with the loader's own
resolver and constructors, so every value is the one ``safe_load`` gives). It covers untagged block and flow
mappings and sequences of null, bool, int, float, timestamp and string scalars in one document. Anything
else (a tag, an anchor or alias, a merge key ``<<``, a ``=`` value, a non-scalar key, more than one
document, deep nesting, a syntax error) raises :class:`Unusual` before anything is returned, and the caller
loads the text with PyYAML's own loaders, as before.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import ScalarNode

AVAILABLE = getattr(yaml, "__with_libyaml__", False) and hasattr(yaml, "CSafeLoader")

# The implicit tags SafeConstructor turns into plain values. The others SafeLoader resolves (merge, value,
# yaml) have their own meaning or are errors: left to PyYAML.
_STR = "tag:yaml.org,2002:str"
_PLAIN_TAGS = frozenset({
    "tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp", _STR,
})
# Nested deeper than this (no scenario is), PyYAML's own composer decides what happens.
MAX_DEPTH = 64
_KEY = object()  # a mapping's frame waits for a key
_SEQ = object()  # a sequence's frame


class Unusual(Exception):
    """The text needs PyYAML's own loader (see the module docstring)."""


def load_plain(text: str) -> Any:
    """``yaml.safe_load(text)`` for plain data; raise :class:`Unusual` for anything else."""
    if not AVAILABLE:
        raise Unusual("PyYAML without libyaml")
    loader = yaml.CSafeLoader(text)
    try:
        return _build(loader)
    except yaml.YAMLError as exc:
        raise Unusual(str(exc)) from None
    finally:
        loader.dispose()


def _build(loader: Any) -> Any:
    get = loader.get_event
    if type(get()) is not StreamStartEvent:
        raise Unusual("no stream start")
    ev = get()
    if type(ev) is StreamEndEvent:
        return None  # an empty stream
    if type(ev) is not DocumentStartEvent:
        raise Unusual("no document start")
    constructors = loader.yaml_constructors
    resolve = loader.resolve
    scalars: dict[str, Any] = {}  # plain scalar text -> its value (all immutable)
    # Frames of the open collections: [container, _SEQ; or for a mapping its pending key, or _KEY].
    stack: list[list] = []
    root: Any = None
    done = False
    while not done:
        ev = get()
        t = type(ev)
        if t is ScalarEvent:
            if ev.anchor is not None or ev.tag is not None:
                raise Unusual("anchor or tag")
            value = ev.value
            if ev.implicit[0]:  # plain style: resolved as the Resolver does
                try:
                    value = scalars[value]
                except KeyError:
                    text = value
                    tag = resolve(ScalarNode, text, ev.implicit)
                    if tag not in _PLAIN_TAGS:
                        raise Unusual(tag) from None
                    if tag != _STR:
                        try:
                            value = constructors[tag](loader, ScalarNode(tag, text))
                        except Exception as exc:  # e.g. 2001-13-14: PyYAML raises it as it does
                            raise Unusual(repr(exc)) from None
                    scalars[text] = value
        elif t is MappingStartEvent or t is SequenceStartEvent:
            if ev.anchor is not None or ev.tag is not None:
                raise Unusual("anchor or tag")
            if len(stack) >= MAX_DEPTH:
                raise Unusual("deep nesting")
            value = {} if t is MappingStartEvent else []
            frame = [value, _KEY if t is MappingStartEvent else _SEQ]
        elif t is MappingEndEvent or t is SequenceEndEvent:
            stack.pop()
            if not stack:
                done = True
            continue
        else:  # an alias, or anything PyYAML's composer would have to judge
            raise Unusual(type(ev).__name__)
        if not stack:
            root = value
            done = True
        else:
            top = stack[-1]
            key = top[1]
            if key is _SEQ:
                top[0].append(value)
            elif key is _KEY:
                if type(value) is dict or type(value) is list:
                    raise Unusual("a collection as a key")  # unhashable: PyYAML reports it
                top[1] = value
            else:
                top[0][key] = value
                top[1] = _KEY
        if t is not ScalarEvent:
            stack.append(frame)
            done = False
    if type(get()) is not DocumentEndEvent or type(get()) is not StreamEndEvent:
        raise Unusual("more than one document")
    return root
