"""What a spec change does, in governance terms first, then resource by resource."""

from __future__ import annotations

from typing import Any, Callable

from .plan import Plan
from .plan.views import governance_changes


def governance_diff(old_plan: Plan, new_plan: Plan) -> list[str]:
    """Plain-words lines, one per governance change (``plan/views.py``): teams added or removed, quotas, borrow
    caps, sharing, priorities, people, and every privilege change, marked ``(privilege: why)``."""
    return governance_changes(old_plan, new_plan)


def _resources(templates: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(stack, lid): r for stack, t in templates.items() for lid, r in t.get("Resources", {}).items()}


def _objects(manifests: dict[str, Any]) -> dict[tuple[str, str, str], Any]:
    objs = [*manifests["cluster"], *(o for team in manifests["teams"].values() for o in team)]
    return {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in objs}


def _compare(old: dict, new: dict, render: Callable[[Any, Any], str]) -> list[str]:
    """``+`` added, ``-`` removed, ``~`` changed, one line per key, sorted."""
    lines = []
    for key in sorted(set(old) | set(new)):
        if key not in old:
            lines.append(f"+ {render(key, new[key])}")
        elif key not in new:
            lines.append(f"- {render(key, old[key])}")
        elif old[key] != new[key]:
            lines.append(f"~ {render(key, new[key])}")
    return lines


def resource_diff(old: dict[str, Any], new: dict[str, Any], *, prefixes: tuple[str, str] | None = None) -> list[str]:
    """Resource-level lines from two ``testing.synth_snapshot`` structures: + added, - removed, ~ changed.

    ``prefixes`` (old name, new name): two environments of one spec, whose stacks are paired by role
    (``acme-staging-capacity`` with ``acme-production-capacity``) and shown under the old name."""
    new_templates = new["templates"]
    if prefixes is not None:
        was, now = (f"{p}-" for p in prefixes)
        new_templates = {was + k[len(now):] if k.startswith(now) else k: t for k, t in new_templates.items()}
    resources = _compare(_resources(old["templates"]), _resources(new_templates),
                         lambda key, r: f"{key[0]}/{key[1]} ({r['Type']})")
    objects = _compare(_objects(old["manifests"]), _objects(new["manifests"]),
                       lambda key, _: f"k8s {key[0]} {key[1] + '/' if key[1] else ''}{key[2]}")
    return resources + objects
