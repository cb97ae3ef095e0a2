"""The contract record's capacity section (issue 57): what stands behind a team's quota on each type it owns, as
guaranteed, elastic, interruptible and flexible capacity (``plan.elastic``), in the unit the quota counts."""

from __future__ import annotations

from typing import Callable, Iterable

from ..plan import Plan, TeamPlan
from ..plan.elastic import KIND_WORDS, capacity_lines, lines_of_type, type_kinds

Table = Callable[[Iterable[str], Iterable[Iterable[object]]], list[str]]
# What the part of a quota beyond the guaranteed capacity runs on, by the kind of capacity there is.
BEYOND = {"elastic": "waits for a scale-up", "interruptible": "runs on Spot",
          "flexible": "runs on a flexible group's instances"}


def capacity_section(plan: Plan, team: TeamPlan, table: Table) -> list[str]:
    """``## Capacity behind the quota``: per type the team owns, the cluster's capacity of the type by kind and how
    much of the team's quota the guaranteed part covers; ``table`` renders the Markdown table."""
    lines = ["## Capacity behind the quota", ""]
    if not team.owned:
        return lines + ["The team owns no quota: it runs only what it borrows.", ""]
    groups = capacity_lines(plan.instance_groups, plan.catalog)
    flavors = {f.instance_type: f for f in plan.flavors}
    rows: list[list[object]] = []
    notes: dict[str, str] = {}  # flexible group -> what it means for the quotas on its types
    for q in team.owned:
        fp = flavors[q.instance_type]
        per = fp.governed(fp.per_instance)
        unit = "partitions" if fp.mig_resource else "accelerators" if fp.accelerator_kind else "vCPU"
        kinds = {k: n * per for k, n in type_kinds(groups, q.instance_type).items()}
        own, kept = q.governed(q.nominal), kinds["guaranteed"]
        if own <= kept:
            verdict = "within the guaranteed capacity"
        else:
            on = [words for kind, words in BEYOND.items() if kinds[kind]] or ["has no capacity behind it"]
            verdict = (f"{own - kept} beyond the guaranteed capacity, which {' or '.join(on)}"
                       + (" (a reserved quota: HPG-K009)" if team.strategy == "DontLend" else ""))
        rows.append([q.instance_type, f"{own} {unit}", kinds["guaranteed"], kinds["elastic"], kinds["interruptible"],
                     kinds["flexible"], verdict])
        for line in lines_of_type(groups, q.instance_type):
            if line.flexible:
                notes[line.groups[0]] = (f"The flexible group {line.groups[0]} may run its {line.most} instances as "
                                         f"any of {', '.join(line.types)}: it stands behind the quotas on each of "
                                         "these types, and counts once across them, not once each (HPG-K008).")
    lines += table(["Instance type", "Quota", "Guaranteed", "Elastic", "Interruptible", "Flexible", "The quota is"],
                   rows)
    lines += ["", "The capacity columns are the whole cluster's capacity of the type, in the quota's unit, shared "
              "by every team's quota on it. " + " ".join(f"{kind.capitalize()}: {words}."
                                                         for kind, words in KIND_WORDS.items()), ""]
    return lines + [f"- {notes[g]}" for g in sorted(notes)] + ([""] if notes else [])
