"""pydantic's validation errors as ``SpecIssue``s: the spec path, the problem in words and the fix (the allowed keys,
the nearest known key, the whole range of a number)."""

from __future__ import annotations

import difflib
from typing import Any, Mapping, get_args, get_origin

from pydantic import BaseModel, ValidationError

from .errors import NO_VALUE, SpecIssue
from .models import GovernanceSpec


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
