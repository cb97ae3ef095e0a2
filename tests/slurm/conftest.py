"""The real Slurm cluster the live tests run against (tests/slurm/harness.py), started once per session.

Only tests that ask for ``slurm_cluster`` start it. Without Slurm's packages (or without root, which the daemons
and test users need) those tests are skipped, unless CI is set: there they fail, so that a CI machine without Slurm
cannot pass by skipping (``.ci/run`` installs the packages).
"""

from __future__ import annotations

import os
from typing import Iterator

import pytest

from hyperpod_gov.slurm.render import files

from .harness import SlurmCluster, missing_tools
from .live_spec import ALICE, BOB, GROUPS, live_plan

# The partitions of the test cluster: two nodes of the GPU partition, one CPU node (and HyperPod's 'dev' of all).
PARTITIONS = {"gpu": ("g1", "g2"), "cpu": ("c1",)}


def _unavailable() -> str:
    missing = missing_tools()
    if missing:
        return (f"Slurm, munge or MariaDB is not installed here ({', '.join(missing)} missing): apt-get install "
                "slurm-wlm slurmdbd munge mariadb-server iproute2 (.ci/run does)")
    if os.geteuid() != 0:
        return "the Slurm daemons and the test users need root"
    return ""


@pytest.fixture(scope="session")
def slurm_cluster() -> Iterator[SlurmCluster]:
    """munged, MariaDB, slurmdbd, slurmctld and three slurmd on 127.0.0.1; stopped by pid at the end."""
    reason = _unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI runs the live Slurm tests, but {reason}")
        pytest.skip(reason)
    cluster = SlurmCluster(PARTITIONS)
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def governed(slurm_cluster):
    """The cluster with the live spec's governance applied once (apply.sh, as the controller's lifecycle runs it):
    the cluster, the plan and apply.sh's result. Tests that change the state restore it."""
    slurm_cluster.remove_at_stop([ALICE, BOB], GROUPS)
    plan = live_plan()
    result = slurm_cluster.apply(files(plan))
    assert result.ok, result.stdout + result.stderr
    return slurm_cluster, plan, result
