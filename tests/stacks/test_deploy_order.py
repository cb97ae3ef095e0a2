"""``cdk deploy --all`` deploys in the README's order because the cloud assembly says so: the ``dependencies`` of
each stack artifact in ``cdk.out/manifest.json`` (stacks/layout.py ``order_deploys`` and ``add_studio_stacks``).

Each team stack comes after every consumer account's stack (the target roles its identities name), every access
stack (the entries that map its principals onto its groups), governance (the cluster policy its quotas need) and
monitoring (the key and topic its alarms use); governance and the access stacks come after capacity (the cluster);
each Unified Studio stack after capacity and the access stacks. Monitoring holds no reference to the cluster (alarm
topics' key, platform topic, dashboards) and may deploy beside capacity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STACK = "aws:cloudformation:stack"


def _manifest(synthesized) -> dict[str, Any]:
    return json.loads((Path(synthesized.out_dir) / "cdk.out" / "manifest.json").read_text())


def _after(manifest: dict[str, Any]) -> dict[str, set[str]]:
    """Each stack artifact and every stack it deploys after, directly or through another stack (assets left out)."""
    artifacts = manifest["artifacts"]
    stacks = {name for name, a in artifacts.items() if a["type"] == STACK}
    direct = {name: {d for d in artifacts[name].get("dependencies", ()) if d in stacks} for name in stacks}
    closed: dict[str, set[str]] = {}

    def walk(name: str) -> set[str]:
        if name not in closed:
            closed[name] = set()  # a cycle would stop here; CDK refuses cyclic stack dependencies anyway
            for d in direct[name]:
                closed[name] |= {d, *walk(d)}
        return closed[name]

    return {name: walk(name) for name in sorted(stacks)}


def order_problems(manifest: dict[str, Any], prefix: str) -> list[str]:
    """What the deploy order misses, one line per (stack, stack it should come after); [] when it holds."""
    after = _after(manifest)
    names = sorted(after)
    teams = [n for n in names if n.startswith(f"{prefix}-teams-")]
    consumers = [n for n in names if n.startswith(f"{prefix}-consumer-")]
    access = [n for n in names if n == f"{prefix}-access" or n.startswith(f"{prefix}-access-")]
    studio = [n for n in names if n.startswith(f"{prefix}-studio-")]
    capacity, governance, monitoring = (f"{prefix}-{role}" for role in ("capacity", "governance", "monitoring"))
    wanted = [(t, before) for t in teams for before in (*consumers, *access, governance, monitoring)]
    wanted += [(s, capacity) for s in (governance, *access)]
    wanted += [(s, before) for s in studio for before in (capacity, *access)]
    return [f"{stack} does not deploy after {before}" for stack, before in wanted if before not in after[stack]]


def _roles(manifest: dict[str, Any], prefix: str) -> set[str]:
    return {n.removeprefix(f"{prefix}-").split("-")[0] for n, a in manifest["artifacts"].items() if a["type"] == STACK}


def test_the_enterprise_stacks_deploy_teams_after_consumers_access_governance_and_monitoring(enterprise):
    manifest = _manifest(enterprise)
    # every kind of stack the order speaks of is there, so that no assertion holds for want of a stack
    assert _roles(manifest, "acme-ml") == {"capacity", "governance", "monitoring", "access", "teams", "consumer",
                                           "studio"}
    assert order_problems(manifest, "acme-ml") == []


def test_the_startup_stacks_deploy_teams_after_access_governance_and_monitoring(startup):
    manifest = _manifest(startup)
    assert _roles(manifest, "startup") == {"capacity", "governance", "monitoring", "access", "teams"}
    assert order_problems(manifest, "startup") == []


# The check itself, on a small assembly written by hand: the order above, then one dependency taken out.
def _stack(*after: str) -> dict[str, Any]:
    return {"type": STACK, "dependencies": [*after, "x.assets"]}


def _small() -> dict[str, Any]:
    return {"artifacts": {
        "x.assets": {"type": "cdk:asset-manifest"},
        "o-capacity": _stack(),
        "o-governance": _stack("o-capacity"),
        "o-monitoring": _stack(),
        "o-access": _stack("o-capacity"),
        "o-consumer-data": _stack(),
        "o-teams-01": _stack("o-governance", "o-monitoring", "o-access", "o-consumer-data"),
        "o-studio-444444444444-us-east-1": _stack("o-capacity", "o-access"),
    }}


def test_the_hand_written_assembly_is_in_order():
    assert order_problems(_small(), "o") == []


def test_a_team_stack_that_no_longer_waits_for_a_consumer_stack_is_found():
    manifest = _small()
    manifest["artifacts"]["o-teams-01"]["dependencies"].remove("o-consumer-data")
    assert order_problems(manifest, "o") == ["o-teams-01 does not deploy after o-consumer-data"]


def test_a_dependency_reached_through_another_stack_counts():
    # o-teams-01 -> o-governance -> o-capacity, though o-teams-01 names no capacity stack itself
    after = _after(_small())
    assert after["o-teams-01"] == {"o-governance", "o-monitoring", "o-access", "o-consumer-data", "o-capacity"}


def test_governance_deployed_beside_capacity_is_found():
    manifest = _small()
    manifest["artifacts"]["o-governance"]["dependencies"].remove("o-capacity")
    # the team stack still comes after capacity, through the access stack
    assert order_problems(manifest, "o") == ["o-governance does not deploy after o-capacity"]


def test_a_studio_stack_deployed_before_the_access_entries_is_found():
    manifest = _small()
    manifest["artifacts"]["o-studio-444444444444-us-east-1"]["dependencies"].remove("o-access")
    assert order_problems(manifest, "o") == ["o-studio-444444444444-us-east-1 does not deploy after o-access"]
