"""The spec the live Slurm tests govern the harness cluster with (tests/slurm/conftest.py's partitions).

Two teams own one p5 node each of partition ``gpu`` (two nodes); vision lends and borrows (up to 100% of its
quota: one more node), speech only lends. The Unix names carry an ``hpgt-`` prefix so that nothing on the machine
has them already; posix.sh creates them and the harness removes them at the end.
"""

from __future__ import annotations

import copy
from typing import Any

from .spec_fixtures import plan_of

CLUSTER_NAME = "hpgtest"  # the harness's ClusterName
ORG = "hpgt"
ALICE, BOB = "hpgt-alice", "hpgt-bob"  # vision, speech
GROUPS = ("hpgt-speech", "hpgt-vision")

LIVE_SPEC: dict[str, Any] = {
    "name": ORG,
    "accounts": {"capacity": {"id": "111111111111", "region": "us-east-1"}},
    "cluster": {
        "name": CLUSTER_NAME,
        "orchestrator": "slurm",
        "slurm": {"configStrategy": "Merge"},
        "instanceGroups": [
            {"name": "controller", "instanceType": "ml.m5.xlarge", "count": 1, "slurm": {"nodeType": "Controller"}},
            {"name": "gpu", "instanceType": "ml.p5.48xlarge", "count": 2,
             "slurm": {"nodeType": "Compute", "partition": "gpu"}},
            {"name": "cpu", "instanceType": "ml.c5.4xlarge", "count": 1,
             "slurm": {"nodeType": "Compute", "partition": "cpu"}},
        ],
    },
    "scheduler": {"priorityClasses": [{"name": "urgent", "weight": 100}]},
    "teams": [
        {"name": "vision", "fairShareWeight": 50, "quota": [{"instanceType": "ml.p5.48xlarge", "count": 1}],
         "sharing": {"strategy": "LendAndBorrow", "borrowLimitPercent": 100},
         "slurm": {"users": [ALICE], "group": "hpgt-vision"}},
        {"name": "speech", "fairShareWeight": 50, "quota": [{"instanceType": "ml.p5.48xlarge", "count": 1}],
         "sharing": {"strategy": "Lend"}, "slurm": {"users": [BOB], "group": "hpgt-speech"}},
    ],
}


def live_spec() -> dict[str, Any]:
    """A fresh copy; tests change their own."""
    return copy.deepcopy(LIVE_SPEC)


def live_plan(data: dict[str, Any] | None = None):
    return plan_of(data if data is not None else live_spec())
