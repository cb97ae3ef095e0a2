"""One spec, several environments: a non-production cluster first, then production.

AWS's HyperPod governance guidance starts with a non-production cluster and a test project before members are
added. ``environments: [{name: staging, accounts: {...}, overrides: {...}}, {name: production, ...}]`` lists them
in deploy order. An environment's spec is the base spec with its ``accounts`` and then its ``overrides`` merged on
(``merge``), ``environments`` removed and ``-<env>`` appended to ``name`` (so every stack is
``<name>-<env>-capacity`` and every generated name differs between environments); it is validated as a whole, like
any spec. A spec without ``environments`` works exactly as before.

The merge works on the YAML data (camelCase keys), before validation, so an override may hold any spec key:
- a mapping merges key by key, recursively;
- a list whose items are all mappings with a ``name`` (teams, instance groups, consumer accounts, priority
  classes) merges item by item by name: an item of the same name is merged onto the base item, a new name is
  appended; ``{name: x, remove: true}`` drops item ``x``;
- anything else (a scalar, another list) replaces the base value; ``null`` removes the key (its default applies).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Mapping, Optional

from pydantic import Field, field_validator

from ._base import SpecModel, check_label
from .errors import NO_VALUE, SpecError, SpecIssue
from .types import MAX_NAME, MAX_PREFIX

if TYPE_CHECKING:
    from .models import GovernanceSpec

REMOVE = "remove"


class Environment(SpecModel):
    """One deployment of the spec (staging, production, ...), in deploy order."""

    name: str = Field(description="DNS-1123 label; appended to the spec's name (<name>-<env>) in every stack and "
                      "resource name.")
    accounts: dict[str, Any] = Field(
        default_factory=dict,
        description="Accounts of this environment, merged onto the base accounts (e.g. {capacity: {id: "
        "'222222222222'}}) (default: the base accounts).",
    )
    overrides: dict[str, Any] = Field(
        default_factory=dict,
        description="A partial spec merged onto the base: mappings by key, lists of named items by name "
        "({name: x, remove: true} drops one), other values replaced, null removes a key (default: none).",
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="environment name", max_len=MAX_NAME)


def _named_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(i, Mapping) and "name" in i for i in value)


def merge(base: Any, override: Any) -> Any:
    """``override`` merged onto ``base`` (new objects; neither argument is changed). See the module docstring."""
    if isinstance(base, Mapping) and isinstance(override, Mapping):
        out = {k: copy.deepcopy(v) for k, v in base.items()}
        for key, value in override.items():
            if value is None:
                out.pop(key, None)
            elif key in out:
                out[key] = merge(out[key], value)
            else:
                out[key] = copy.deepcopy(value)
        return out
    if _named_list(base) and _named_list(override):
        items = {i["name"]: copy.deepcopy(i) for i in base}
        order = [i["name"] for i in base]
        for item in override:
            name = item["name"]
            if item.get(REMOVE) is True:
                items.pop(name, None)
                continue
            patch = {k: v for k, v in item.items() if k != REMOVE}
            if name in items:
                items[name] = merge(items[name], patch)
            else:
                items[name] = copy.deepcopy(patch)
                order.append(name)
        return [items[n] for n in order if n in items]
    return copy.deepcopy(override)


def environment_names(data: Any) -> tuple[str, ...]:
    """The environment names of a spec's data, in deploy order (empty: the spec has none)."""
    if not isinstance(data, Mapping):
        return ()
    return tuple(str(e.get("name")) for e in data.get("environments") or () if isinstance(e, Mapping))


def environment_data(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The data of environment ``name``: the base with its accounts and overrides merged on (not yet validated)."""
    names = environment_names(data)
    if not names:
        raise SpecError([SpecIssue("environments", "is not set, so there is no environment to choose", name,
                                   "leave out --environment (-c environment), or add environments to the spec")])
    if name not in names:
        raise SpecError([SpecIssue("environments", f"has no environment named {name!r}", name,
                                   f"use one of {', '.join(names)}")])
    index = names.index(name)
    env = data["environments"][index]
    base = {k: v for k, v in data.items() if k != "environments"}
    merged = merge(base, {"accounts": env.get("accounts") or {}})
    merged = merge(merged, env.get("overrides") or {})
    spec_name = f"{base.get('name')}-{name}"
    if len(spec_name) > MAX_PREFIX:
        raise SpecError([SpecIssue(
            f"environments[{index}].name", f"makes the environment's name {spec_name!r} {len(spec_name)} "
            f"characters long; names are at most {MAX_PREFIX} (they prefix IAM role and bucket names)", name,
            f"use a shorter environment name (e.g. {name[:max(1, MAX_PREFIX - len(str(base.get('name'))) - 1)]!r}) "
            "or a shorter spec name")])
    merged["name"] = spec_name
    return merged


def spec_of_environment(spec: "GovernanceSpec", name: str) -> "GovernanceSpec":
    """The spec of environment ``name`` of a spec already loaded or built in Python: what ``load_spec(path,
    environment=name)`` gives for its file (the base with the environment's accounts and overrides merged on),
    checked by every rule. Raises ``SpecError``."""
    from .loader import parse_spec

    data = spec.model_dump(mode="json", by_alias=True, exclude_unset=True)
    source = f"environment {name}"
    try:
        chosen = chosen_environment(data, name)
    except SpecError as exc:
        raise SpecError(exc.issues, source) from None
    merged = parse_spec(chosen, source=source)
    merged._source_dir = getattr(spec, "_source_dir", None)
    return merged


def chosen_environment(data: Any, environment: Optional[str]) -> Any:
    """The data to validate: the base (``environment`` None) or that environment's."""
    if environment is None:
        return data
    if not isinstance(data, Mapping):
        raise SpecError([SpecIssue("(top level)", "is not a mapping of keys", NO_VALUE, "see examples/")])
    return environment_data(data, environment)
