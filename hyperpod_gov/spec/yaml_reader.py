"""Read a spec's YAML: duplicate keys refused, parser limits against hostile files, and every failure a ``SpecIssue``
that says where (line, column and the spec path around it) and how to fix it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .errors import NO_VALUE, SpecError, SpecIssue


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys instead of silently keeping the last one."""


# libyaml's parser (PyYAML's C extension) reads a 300-team spec about 10x faster than the pure-Python one; PyYAML
# without libyaml falls back to the pure-Python parser. The data built is the same (the constructor and resolver
# are PyYAML's Python ones in both); on a YAML error the pure-Python parser reads the file again, so the messages
# are its own whichever parser is installed.
_FAST_PARSER = getattr(yaml, "CSafeLoader", None)


class _FastUniqueKeyLoader(_FAST_PARSER or yaml.SafeLoader):  # type: ignore[misc]
    """``_UniqueKeyLoader`` on libyaml's parser."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping",
                node.start_mark,
                f"found the key {key!r} twice (first at line {seen[key].start_mark.line + 1})",
                key_node.start_mark,
            )
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_FastUniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


# Parser limits: a spec is a few hundred lines; these stop hostile files long before Python's recursion limit
# (PyYAML composes nested collections recursively) or an alias bomb ("billion laughs") exhausts memory or time.
MAX_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000  # after expanding aliases


def _check_limits(text: str, source: str, parser: type = yaml.SafeLoader) -> None:
    """Walk the YAML event stream (no recursion, nothing built) and reject depth and size past the limits."""
    depth = 0
    sizes: dict[str, int] = {}  # anchor -> nodes in the anchored value, aliases expanded
    open_: list[tuple[str | None, int]] = []  # (anchor, node count when the collection started)
    nodes = 0

    def fail(problem: str, mark: Any, fix: str) -> None:
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "(yaml)"
        raise SpecError([SpecIssue(where, problem, NO_VALUE, fix)], source)

    for event in yaml.parse(text, Loader=parser):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            nodes += 1
            if depth > MAX_DEPTH:
                fail(f"nests collections more than {MAX_DEPTH} levels deep", event.start_mark,
                     "a spec is at most a few levels deep: check the indentation, or whether the file is a spec")
            open_.append((event.anchor, nodes))
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
            anchor, start = open_.pop()
            if anchor is not None:
                sizes[anchor] = nodes - start + 1
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            nodes += sizes.get(event.anchor, 1)
        if nodes > MAX_NODES:
            fail(f"holds more than {MAX_NODES:,} values once its aliases (*name) are expanded",
                 getattr(event, "start_mark", None),
                 "write the values out instead of nesting aliases; a spec holds a few thousand values at most")


def read_yaml(path: str | Path) -> Any:
    """Read a YAML file; every failure is a ``SpecError`` that says where and how to fix it."""
    p = Path(path)
    source = str(path)
    if not p.exists():
        raise SpecError([SpecIssue("(file)", "no such file", source, "check the path, e.g. examples/enterprise.yaml")])
    if p.is_dir():
        raise SpecError([SpecIssue("(file)", "is a directory", source, "give the path of a spec file inside it")])
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError([SpecIssue("(file)", f"cannot be read ({exc})", source, "check permissions and encoding")])
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise SpecError([SpecIssue("(file)", f"is larger than {MAX_BYTES // (1024 * 1024)} MiB", source,
                                   "give the path of a spec file; a spec is a few kilobytes")], source)
    if not text.strip():
        raise SpecError(
            [SpecIssue("(file)", "is empty", source, "write a spec; `hyperpod-gov schema` shows every key")],
            source,
        )
    return parse_yaml(text, source)


def spec_path_before_error(text: str) -> str:
    """The spec path (``cluster.instanceGroups[0].instanceType``) the parser was inside when the YAML broke: the
    events up to the error replayed over a stack of mappings and sequences ("" at the top level)."""
    stack: list[list[Any]] = []  # [kind, key or index, expecting a key]
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if stack:
                    _advance(stack)
                stack.append(["map", None, True] if isinstance(event, yaml.MappingStartEvent) else ["seq", -1, False])
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                stack.pop()
            elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)) and stack:
                top = stack[-1]
                if top[0] == "map" and top[2]:
                    top[1], top[2] = getattr(event, "value", None), False
                else:
                    _advance(stack)
    except yaml.YAMLError:
        pass
    parts = []
    for kind, key, _ in stack:
        if kind == "seq" and key >= 0:
            parts.append(f"[{key}]")
        elif kind == "map" and key is not None:
            parts.append(("." if parts else "") + str(key))
    return "".join(parts)


def _advance(stack: list[list[Any]]) -> None:
    """A value was read in the innermost collection: a mapping now expects a key, a sequence moves on."""
    top = stack[-1]
    if top[0] == "map":
        top[2] = True
    else:
        top[1] += 1


def parse_yaml(text: str, source: str = "(yaml)") -> Any:
    """YAML text to data, within the parser limits; every failure a ``SpecError``."""
    if _FAST_PARSER is not None:
        try:
            _check_limits(text, source, _FAST_PARSER)
            return yaml.load(text, Loader=_FastUniqueKeyLoader)  # noqa: S506 - a CSafeLoader subclass
        except (yaml.YAMLError, RecursionError):
            pass  # read again below: the pure-Python parser's messages (and limits) are the ones reported
    try:
        _check_limits(text, source)
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except RecursionError:
        raise SpecError([SpecIssue("(yaml)", "nests too deeply to be read", NO_VALUE,
                                   f"keep the file within {MAX_DEPTH} levels of nesting")], source) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(yaml)"
        around = spec_path_before_error(text)
        if around:
            where += f" (in {around})"
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        line = text.splitlines()[mark.line].strip() if mark and mark.line < len(text.splitlines()) else ""
        raise SpecError(
            [SpecIssue(where, f"YAML syntax error: {problem}", line or NO_VALUE, "fix the YAML at that line "
                       "(indentation with spaces, a space after each ':', quotes around values with ':' or '#')")],
            source,
        ) from None
    except yaml.YAMLError as exc:
        raise SpecError([SpecIssue("(yaml)", f"YAML error: {exc}", NO_VALUE, "fix the YAML")], source) from None
    return data
