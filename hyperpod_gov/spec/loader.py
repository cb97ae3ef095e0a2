"""Load a spec from YAML or a mapping and turn every problem into a ``SpecIssue``."""

from __future__ import annotations

import datetime as dt
import difflib
import os
from pathlib import Path
from typing import Any, Mapping, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from .acknowledgements import STRICT_NOTE, Review, acknowledge, check_acknowledgements
from .errors import NO_VALUE, SpecError, SpecIssue
from .models import GovernanceSpec
from .rulebook import RuleBook
from .rules import RULES, check_spec
from .environments import chosen_environment, environment_names


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


def load_spec(path: str | Path, *, strict: bool = False, today: dt.date | None = None,
              known: RuleBook = RULES, environment: str | None = None) -> GovernanceSpec:
    """Load, validate and cross-check a spec file. Raises ``SpecError`` listing every problem.

    ``known``: the rules whose warnings the spec may acknowledge (see ``validate``). ``environment``: the spec of
    that environment (``environments[]``: the base with its accounts and overrides merged on) instead of the base.
    """
    source = str(path) if environment is None else f"{path} (environment {environment})"
    try:
        data = chosen_environment(read_yaml(path), environment)
    except SpecError as exc:
        raise SpecError(exc.issues, source) from None
    spec = parse_spec(data, strict=strict, today=today, source=source, known=known)
    check_chart_directory(spec, Path(path).resolve().parent, source=str(path))
    spec._source_dir = Path(path).resolve().parent  # relative paths of the spec, for HyperPodGovernance
    return spec


def check_chart_directory(spec: GovernanceSpec, base_dir: Path, *, source: str | None = None) -> None:
    """``cluster.dependenciesChart.directory`` stays inside the spec's folder, symbolic links resolved.

    The folder is uploaded as a CDK asset: a link to ``/`` or ``~`` would copy the machine into the cloud assembly.
    """
    chart = spec.cluster.dependencies_chart
    if chart is None or not chart.directory:
        return
    base = base_dir.resolve()
    target = (base / chart.directory).resolve()
    if target == base:
        raise SpecError([SpecIssue(
            "cluster.dependenciesChart.directory", f"is the spec's folder itself ({base}): the spec and everything "
            "next to it would be uploaded into the cloud assembly as the chart", chart.directory,
            "put the chart in a folder of its own next to the spec and name it, e.g. charts/hyperpod-dependencies",
        )], source)
    if base not in target.parents:
        raise SpecError([SpecIssue(
            "cluster.dependenciesChart.directory", f"resolves to {target}, outside the spec's folder {base} "
            "(through a symbolic link), and the whole folder would be uploaded into the cloud assembly",
            chart.directory, "copy the chart into a folder next to the spec instead of linking to it",
        )], source)
    if not (target / "Chart.yaml").is_file():
        problem = "is not a folder" if target.exists() and not target.is_dir() else \
            "has no Chart.yaml" if target.is_dir() else "does not exist"
        raise SpecError([SpecIssue(
            "cluster.dependenciesChart.directory", f"{problem} ({target}): synth uploads this Helm chart folder",
            chart.directory, "give the folder of the HyperPod dependencies chart (with its Chart.yaml), relative "
            "to the spec file",
        )], source)
    leaving = _links_leaving(target)
    if leaving:
        shown = ", ".join(f"{link} -> {to}" for link, to in leaving[:5]) + (" ..." if len(leaving) > 5 else "")
        raise SpecError([SpecIssue(
            "cluster.dependenciesChart.directory", f"holds {len(leaving)} symbolic link(s) that lead out of the chart "
            f"folder ({shown}): synth would copy what they point to into the cloud assembly", chart.directory,
            "replace each link with a copy of the file it names inside the chart folder, or remove it",
        )], source)


def _links_leaving(folder: Path) -> list[tuple[str, str]]:
    """(link relative to ``folder``, where it leads) for every symbolic link inside ``folder`` (not followed) whose
    target, resolved, is outside it: links to files and to folders, and dangling ones."""
    out = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in sorted(dirs + files):
            path = Path(root) / name
            if not path.is_symlink():
                continue
            to = path.resolve()
            if to != folder and folder not in to.parents:
                out.append((str(path.relative_to(folder)), str(to)))
    return sorted(out)


def parse_spec(
    data: Any, *, strict: bool = False, today: dt.date | None = None, source: str | None = None,
    known: RuleBook = RULES,
) -> GovernanceSpec:
    """Validate a mapping (as loaded from YAML, camelCase keys) into a ``GovernanceSpec``."""
    if not isinstance(data, Mapping):
        raise SpecError(
            [SpecIssue("(top level)", "is not a mapping of keys", data, "start the file with `name:`, "
                       "`accounts:`, `cluster:` and `teams:` (see examples/)")],
            source,
        )
    try:
        spec = GovernanceSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(issues_from_validation(exc), source) from None
    except RecursionError:
        raise SpecError([SpecIssue("(top level)", "nests too deeply to be validated", NO_VALUE,
                                   f"keep the spec within {MAX_DEPTH} levels of nesting")], source) from None
    return validate(spec, strict=strict, today=today, source=source, known=known)


def validate(
    spec: GovernanceSpec, *, strict: bool = False, today: dt.date | None = None, source: str | None = None,
    known: RuleBook = RULES,
) -> GovernanceSpec:
    """Run the cross-field rules over an already built spec (e.g. one built in Python).

    Raises ``SpecError`` with every error, every acknowledgement that names no warning rule of ``known`` (the
    spec rules by default; pass every book whose warnings the spec may acknowledge) and, with ``strict``, every
    warning the spec does not acknowledge.
    """
    review = spec_review(spec, today=today)
    failing = check_acknowledgements(spec.acknowledgements, known) + list(review.failing(strict=strict))
    if failing:
        raise SpecError(failing, source, note=STRICT_NOTE if strict and review.warnings else None)
    return spec


def spec_review(spec: GovernanceSpec, *, today: dt.date | None = None) -> Review:
    """The spec rules' findings split into errors, unacknowledged and acknowledged warnings."""
    return acknowledge(check_spec(spec, today=today or dt.date.today()), spec.acknowledgements)


def spec_warnings(spec: GovernanceSpec, *, today: dt.date | None = None) -> list[SpecIssue]:
    """Warnings the spec does not acknowledge: they do not stop a synth (they become errors with ``strict``)."""
    return list(spec_review(spec, today=today).warnings)


# --- pydantic errors -> SpecIssue -------------------------------------------------------


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that holds the mapping at ``loc`` (for listing allowed keys)."""
    model: Any = GovernanceSpec
    for part in loc:
        if isinstance(part, int):
            continue
        fields = {f.alias or name: f for name, f in model.model_fields.items()}
        field = fields.get(part)
        if field is None:
            return None
        annotation = field.annotation
        model = _unwrap_model(annotation)
        if model is None:
            return None
    return model


def _unwrap_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if get_origin(annotation) is not None:
        for arg in get_args(annotation):
            found = _unwrap_model(arg)
            if found is not None:
                return found
    return None


def _allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    model = _model_at(loc)
    if model is None:
        return []
    return sorted(f.alias or name for name, f in model.model_fields.items())


def _bounds(loc: tuple[Any, ...]) -> dict[str, Any]:
    """Both bounds of a numeric field, so a message can give the whole range."""
    model = _model_at(tuple(p for p in loc[:-1]))
    name = loc[-1]
    if model is None or isinstance(name, int):
        return {}
    fields = {f.alias or n: f for n, f in model.model_fields.items()}
    field = fields.get(name)
    out: dict[str, Any] = {}
    for meta in field.metadata if field else ():
        for key in ("ge", "gt", "le", "lt"):
            if getattr(meta, key, None) is not None:
                out[key] = getattr(meta, key)
    return out


def _fix_for(err: Mapping[str, Any]) -> tuple[str, str]:
    """(problem, fix) for one pydantic error."""
    kind = err["type"]
    ctx = err.get("ctx") or {}
    loc = tuple(err["loc"])
    value = err.get("input")
    if kind == "spec_rule":
        return err["msg"], ctx["fix"]
    if kind == "extra_forbidden":
        allowed = _allowed_keys(loc[:-1])
        near = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        hint = f"did you mean '{near[0]}'? " if near else ""
        return "is not a key the spec knows", f"{hint}remove it or use one of: {', '.join(allowed)}"
    if kind == "missing":
        return "is required", f"add `{loc[-1]}:` here (`hyperpod-gov schema` describes it)"
    if kind == "literal_error":
        return "is not one of the allowed values", f"use one of: {ctx.get('expected')}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return "is not a whole number", "write a whole number without quotes, e.g. 8"
    if kind == "string_type":
        if isinstance(value, (int, float)):
            return "is a number where text is expected", f'quote it in YAML, e.g. "{value}"'
        return "is not text", "write it as a string"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        bounds = _bounds(loc) or {k: v for k, v in ctx.items() if k in ("ge", "gt", "le", "lt")}
        words = {"ge": "at least", "gt": "more than", "le": "at most", "lt": "less than"}
        return "is out of range", "use a value " + " and ".join(f"{words[k]} {v}" for k, v in bounds.items())
    if kind == "too_long":
        return f"has {ctx.get('actual_length')} entries", f"keep at most {ctx.get('max_length')}"
    if kind == "too_short":
        return f"has {ctx.get('actual_length')} entries", f"give at least {ctx.get('min_length')}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return "is not a mapping", f"write a mapping with keys: {', '.join(_allowed_keys(loc)) or 'see the schema'}"
    if kind in ("tuple_type", "list_type"):
        return "is not a list", "write a YAML list (one `- item` per line) or [a, b]"
    if kind.startswith("date"):
        return "is not a date", "write the date as YYYY-MM-DD, e.g. 2027-03-01"
    if kind == "bool_type" or kind == "bool_parsing":
        return "is not true or false", "write true or false"
    return err["msg"], "see `hyperpod-gov schema` for the expected shape"


def issues_from_validation(exc: ValidationError) -> list[SpecIssue]:
    issues = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        problem, fix = _fix_for(err)
        value = NO_VALUE if err["type"] == "missing" else err.get("input")
        issues.append(SpecIssue(_path(loc), problem, value, fix))
    return issues
