"""A small Slurm-orchestrated spec (as loaded from YAML) for the Slurm spec and render tests."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

TODAY = dt.date(2026, 11, 30)

SLURM_BASE: dict[str, Any] = {
    "name": "acme",
    "accounts": {"capacity": {"id": "111111111111", "region": "us-east-1"}},
    "cluster": {
        "name": "ml",
        "orchestrator": "slurm",
        "slurm": {"configStrategy": "Merge"},
        "instanceGroups": [
            {"name": "controller", "instanceType": "ml.m5.xlarge", "count": 1, "slurm": {"nodeType": "Controller"}},
            {"name": "login", "instanceType": "ml.m5.xlarge", "count": 1, "slurm": {"nodeType": "Login"}},
            {"name": "gpu", "instanceType": "ml.p5.48xlarge", "count": 4,
             "slurm": {"nodeType": "Compute", "partition": "p5"}},
            {"name": "cpu", "instanceType": "ml.c5.4xlarge", "count": 8,
             "slurm": {"nodeType": "Compute", "partition": "cpu"}},
        ],
    },
    "scheduler": {"priorityClasses": [{"name": "urgent", "weight": 100}, {"name": "training", "weight": 50}]},
    "teams": [
        {
            "name": "team-a",
            "fairShareWeight": 40,
            "quota": [{"instanceType": "ml.p5.48xlarge", "count": 2}],
            "sharing": {"strategy": "LendAndBorrow", "borrowLimitPercent": 50},
            "slurm": {"users": ["bob", "alice"]},
        },
        {
            "name": "team-b",
            "fairShareWeight": 60,
            "quota": [{"instanceType": "ml.p5.48xlarge", "count": 2},
                      {"instanceType": "ml.c5.4xlarge", "vcpu": 32, "memoryGib": 64}],
            "sharing": {"strategy": "Lend"},
            "slurm": {"users": ["carol"], "group": "team-b-users", "dataPath": "/fsx/data/team-b"},
        },
    ],
}


def slurm_base() -> dict[str, Any]:
    """A fresh copy of the spec; tests change their own."""
    return copy.deepcopy(SLURM_BASE)


def plan_of(data: dict[str, Any]):
    from hyperpod_gov.plan.build import build_plan
    from hyperpod_gov.spec.loader import parse_spec

    return build_plan(parse_spec(data, today=TODAY))
