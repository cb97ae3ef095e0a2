"""The Studio task view's Slurm part on real daemons (tests/slurm/harness.py): with cluster.slurm.restrictTaskView,
apply.sh writes PrivateData=jobs and each user (as Studio's Run As user would) sees only its own jobs; without it,
every user sees every job (AWS's default)."""

from __future__ import annotations

import pytest

from hyperpod_gov.slurm.render import files

from .live_spec import ALICE, BOB, live_plan, live_spec

OWN = ("-p", "gpu", "--exclusive")


@pytest.fixture(autouse=True)
def no_jobs_left(slurm_cluster):
    yield
    slurm_cluster.cancel_all()


def _visible(cluster, user: str) -> set[str]:
    """The job ids ``squeue`` lists for ``user`` (what Studio's task list shows a role that runs as the user)."""
    return set(cluster.run("squeue", "-h", "-o", "%i", user=user).check().stdout.split())


def test_with_the_restriction_each_user_sees_only_its_own_jobs(governed):
    cluster, plan, _ = governed
    mine = cluster.sbatch(ALICE, *OWN).check().stdout.strip()
    theirs = cluster.sbatch(BOB, *OWN).check().stdout.strip()
    assert _visible(cluster, ALICE) >= {mine, theirs}  # the default: every user sees every job

    data = live_spec()
    data["cluster"]["slurm"]["restrictTaskView"] = True
    data["teams"][0]["slurm"]["studioUser"] = ALICE
    try:
        result = cluster.apply(files(live_plan(data)))
        assert result.ok, result.stdout + result.stderr
        assert "PrivateData=jobs" in cluster.include_conf.read_text()
        assert mine in _visible(cluster, ALICE) and theirs not in _visible(cluster, ALICE)
        assert theirs in _visible(cluster, BOB) and mine not in _visible(cluster, BOB)
        assert cluster.run("scontrol", "show", "job", theirs, user=ALICE).returncode != 0
    finally:
        restored = cluster.apply(files(plan))
        assert restored.ok, restored.stdout + restored.stderr
    assert "PrivateData" not in cluster.include_conf.read_text()
    assert _visible(cluster, ALICE) >= {mine, theirs}
