"""Every problem at once, where the structure allows: the cross-field rules' errors over the parts of a spec that a
structural (pydantic) error leaves intact (``hyperpod-gov validate`` and every command that reads a spec; the
limits are in docs/cli.md)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Optional, Sequence

if TYPE_CHECKING:
    from .errors import SpecIssue


# How often the broken parts are left out before the rules give up (leaving a part out can break a whole-spec check
# the models run, e.g. a shared pool named after the team that was left out: then once more).
_PRUNE_ROUNDS = 3


def rules_beside_structure(path: str, environment: Optional[str], reported: Sequence["SpecIssue"]) -> list[
        "SpecIssue"]:
    """The spec rules' errors over what a structural (pydantic) error leaves intact, so that one run reports both.

    A spec whose models do not validate has no ``GovernanceSpec`` to run the cross-field rules on. Here the broken
    parts are left out of the data and the rest validated again: a list entry with an error anywhere inside it is
    left out whole (``teams[2]``, ``cluster.instanceGroups[1]``); outside a list, the innermost key that has a
    default is left out (it takes the default). When that validates, the rules run on it and their errors are
    returned, paths renumbered to the file's own indices, less any finding about a part that was left out (its
    path, or the name of a team, group or class that was left out, so that no finding blames what is only
    missing because it is broken). When the broken part cannot be left out (a required key outside any list, or
    the data is not a mapping), or the YAML itself is broken, nothing is added: the structural errors stand
    alone. Warnings are not added (an invalid spec reports its errors).
    """
    from pydantic import ValidationError

    from . import GovernanceSpec, SpecError, acknowledge, check_spec, read_yaml
    from .environments import chosen_environment

    try:
        data = chosen_environment(read_yaml(path), environment)
    except SpecError:
        return []
    if not isinstance(data, dict):
        return []
    removed: dict[tuple[Any, ...], list[int]] = {}  # list location -> original indices left out
    dropped: list[str] = []  # spec paths of keys left out (they took their defaults)
    names: set[str] = set()  # the names of the entries left out
    spec = None
    for _ in range(_PRUNE_ROUNDS):
        try:
            spec = GovernanceSpec.model_validate(data)
            break
        except ValidationError as exc:
            cut = _broken_parts(data, [tuple(e["loc"]) for e in exc.errors(include_url=False)])
            if cut is None:
                return []
            data, lists, keys, gone = cut
            for loc, indices in lists.items():
                removed.setdefault(loc, [])
                removed[loc] = _original_indices(removed[loc], indices)
            dropped += keys
            names |= gone
        except RecursionError:
            return []
    if spec is None:
        return []
    try:
        found = acknowledge(check_spec(spec, today=dt.date.today()), spec.acknowledgements).errors
    except Exception:  # noqa: BLE001 - the structural errors are the report; the rules are a bonus on top
        return []
    already = {(i.path, i.problem) for i in reported}
    out = []
    for issue in found:
        issue = _renumbered(issue, removed)
        if (issue.path, issue.problem) in already or _about_left_out(issue, dropped, names):
            continue
        out.append(issue)
    return out


def _spec_path(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _broken_parts(data: dict, locs: list[tuple[Any, ...]]) -> Optional[tuple[dict, dict, list[str], set[str]]]:
    """``data`` less the parts the errors at ``locs`` are in, with (list location -> indices left out, in the
    data given), the spec paths of the keys left out, and the names of the entries left out; None when an error
    lies where nothing can be left out."""
    import copy

    from .loader import _model_at

    data = copy.deepcopy(data)
    lists: dict[tuple[Any, ...], set[int]] = {}
    keys: dict[tuple[Any, ...], None] = {}
    for loc in locs:
        first = next((i for i, part in enumerate(loc) if isinstance(part, int)), None)
        if first is not None:
            lists.setdefault(tuple(loc[:first]), set()).add(loc[first])
            continue
        # no list on the way: the innermost key with a default (optional) goes, and its default applies
        for end in range(len(loc), 0, -1):
            model = _model_at(tuple(loc[:end - 1]))
            fields = {f.alias or n: f for n, f in model.model_fields.items()} if model is not None else {}
            field = fields.get(loc[end - 1])
            if field is not None and not field.is_required():
                keys[tuple(loc[:end])] = None
                break
        else:
            return None
    gone: set[str] = set()
    for loc, indices in lists.items():
        entries = _at(data, loc)
        if not isinstance(entries, list):
            return None
        for i in sorted(indices, reverse=True):
            if i < len(entries):
                entry = entries.pop(i)
                if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                    gone.add(entry["name"])
    for loc in keys:
        parent = _at(data, loc[:-1])
        if isinstance(parent, dict):
            parent.pop(loc[-1], None)
    return data, {loc: sorted(i) for loc, i in lists.items()}, [_spec_path(loc) for loc in keys], gone


def _at(data: Any, loc: Sequence[Any]) -> Any:
    for part in loc:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _original_indices(before: list[int], now: list[int]) -> list[int]:
    """Indices left out so far (of the file's list), with ``now`` (indices of the list as already cut) added."""
    return sorted([*before, *(_file_index(i, before) for i in now)])


def _file_index(i: int, gone: list[int]) -> int:
    """The file's index of the ``i``-th entry left in a list whose entries ``gone`` (the file's indices) were cut."""
    for g in sorted(gone):
        if g <= i:
            i += 1
    return i


def _renumbered(issue: "SpecIssue", removed: dict[tuple[Any, ...], list[int]]) -> "SpecIssue":
    """``issue`` with every index of a cut list, in its path and its problem, back to the file's own index; a
    finding over a whole cut list (``teams[*]``) says which entries it was counted without."""
    import dataclasses
    import re

    path, problem = issue.path, issue.problem
    for loc, gone in removed.items():
        if not gone:
            continue
        where = re.compile(r"(?<![\w.\]])" + re.escape(_spec_path(loc)) + r"\[(\d+)\]")

        def back(m: "re.Match[str]", gone: list[int] = gone) -> str:
            return m.group(0)[:m.start(1) - m.start(0)] + f"{_file_index(int(m.group(1)), gone)}]"

        path, problem = where.sub(back, path), where.sub(back, problem)
        whole = _spec_path(loc) + "[*]"
        if whole in issue.path:  # a finding over the whole list was counted without the entries left out
            left_out = ", ".join(f"{_spec_path(loc)}[{g}]" for g in gone)
            problem += f" (counted without {left_out}, left out for its error above)"
    return dataclasses.replace(issue, path=path, problem=problem)


def _about_left_out(issue: "SpecIssue", dropped: list[str], names: set[str]) -> bool:
    """Whether a finding is about a part left out: at or under a key left out, or naming an entry left out."""
    import re

    if any(issue.path == d or issue.path.startswith((d + ".", d + "[")) for d in dropped):
        return True
    text = f"{issue.problem} {issue.fix} {issue.value!r}"
    return any(re.search(r"(?<![\w-])" + re.escape(n) + r"(?![\w-])", text) for n in names)
