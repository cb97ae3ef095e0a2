"""The generated Slurm governance, applied to real daemons (tests/slurm/harness.py): apply.sh as the controller runs
it, the state read back with sacctmgr and scontrol, and jobs submitted as the teams' users.

Limits are whole nodes (``GrpTRES=node=N``, the spec counts p5 instances), checked on a partition of two nodes.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat

import pytest

from hyperpod_gov.slurm.model import desired
from hyperpod_gov.slurm.render import files

from .live_spec import ALICE, BOB, ORG

OWN = ("-p", "gpu", "--exclusive")  # a whole node of the p5 partition
BORROW = ("-A", "vision_gpu_borrow")  # vision's borrowing account; its default QOS is the borrow QOS


@pytest.fixture(autouse=True)
def no_jobs_left(slurm_cluster):
    yield
    slurm_cluster.cancel_all()


def _assoc_rows(cluster) -> dict[tuple[str, str], tuple[str, ...]]:
    out = cluster.sacctmgr("-nP", "show", "assoc", "where", "cluster=hpgtest",
                           "format=account,user,parentname,fairshare,grptres,grpjobs,qos,defaultqos")
    rows = {}
    for line in out.splitlines():
        account, user, *rest = line.split("|")
        rows[(account, user)] = tuple(rest)
    return rows


def _qos_rows(cluster) -> dict[str, tuple[str, ...]]:
    out = cluster.sacctmgr("-nP", "show", "qos", "format=name,priority,grptres,preempt,preemptmode,flags")
    return {line.split("|")[0]: tuple(line.split("|")[1:]) for line in out.splitlines()}


def _partition(cluster, name: str) -> dict[str, str]:
    out = cluster.run("scontrol", "-o", "show", "partition", name).check().stdout
    return dict(token.partition("=")[::2] for token in out.split())


def test_the_first_apply_creates_everything_and_restarts_slurmctld_once(governed):
    cluster, _, result = governed
    assert "hyperpod-gov: accounting of hpgtest: 12 changes" in result.stdout
    assert "slurm.conf changed: restarting slurmctld" in result.stdout
    assert cluster.restarts == 2  # the harness's start, then apply.sh's one restart


def test_sacctmgr_shows_the_accounts_and_user_associations_of_the_spec(governed):
    cluster, plan, _ = governed
    rows = _assoc_rows(cluster)
    state = desired(plan)
    for a in state.accounts:
        tres = ",".join(f"{k}={v}" for k, v in a.grp_tres)
        assert rows[(a.name, "")] == (a.parent, str(a.fairshare), tres, "", ",".join(a.qos), a.default_qos), a.name
    for u in state.users:
        account = state.account(u.account)
        assert rows[(u.account, u.name)] == ("", "1", "", "", ",".join(account.qos), account.default_qos), u.name
    assert rows[("vision_gpu", "")][2] == "node=1"  # the guarantee: one p5 instance
    assert rows[("vision_gpu", "")][4] == f"{ORG}_standard,urgent"  # borrowing is not under the guarantee
    assert rows[("vision_gpu_borrow", "")] == ("vision", "1", "", "", "vision_gpu_borrow", "vision_gpu_borrow")
    assert rows[("vision_gpu_borrow", ALICE)][4:] == ("vision_gpu_borrow", "vision_gpu_borrow")
    managed = {k for k in rows if k[0] != "root"}
    assert managed == {(a.name, "") for a in state.accounts} | {(u.account, u.name) for u in state.users}


def test_sacctmgr_shows_the_qos_of_the_priority_classes_and_the_borrow_qos(governed):
    cluster, _, _ = governed
    rows = _qos_rows(cluster)
    assert rows["urgent"] == ("100", "", "vision_gpu_borrow", "cluster", "")
    assert rows[f"{ORG}_standard"] == ("0", "", "vision_gpu_borrow", "cluster", "")
    assert rows["vision_gpu_borrow"] == ("0", "node=1", "", "requeue", "NoReserve")


def test_the_partition_line_lets_only_the_owning_accounts_and_their_qos_in(governed):
    cluster, _, _ = governed
    gpu = _partition(cluster, "gpu")
    assert (gpu["AllowAccounts"], gpu["AllowQos"]) == ("speech_gpu,vision_gpu,vision_gpu_borrow", "hpgt_standard,urgent,vision_gpu_borrow")
    assert gpu["Nodes"] == "g[1-2]"  # HyperPod's part of the line is kept
    assert _partition(cluster, "cpu")["AllowAccounts"] == "root"  # no team owns the cpu partition


def test_the_settings_are_in_force_after_the_restart(governed):
    cluster, _, _ = governed
    config = {}
    for line in cluster.run("scontrol", "show", "config").check().stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            config[key.strip()] = value.strip()
    assert config["PreemptType"] == "preempt/qos"
    assert config["PreemptMode"] == "REQUEUE"
    assert config["PriorityType"] == "priority/multifactor"
    assert config["PriorityWeightQOS"] == "100000"
    assert config["AccountingStorageEnforce"] == "associations,limits,qos,safe"


def test_posix_sh_creates_the_users_groups_and_team_directories(governed):
    cluster, plan, _ = governed
    state = desired(plan)
    for u in state.posix_users:
        entry = pwd.getpwnam(u.name)
        assert (entry.pw_uid, grp.getgrgid(entry.pw_gid).gr_name) == (u.uid, u.group)
    for d in state.data_dirs:
        st = os.stat(cluster.root / "fsxroot" / d.path.lstrip("/"))
        assert grp.getgrgid(st.st_gid).gr_name == d.group
        assert oct(stat.S_IMODE(st.st_mode))[2:] == d.mode


def test_a_team_over_its_guarantee_pends_with_the_association_node_limit(governed):
    cluster, _, _ = governed
    first = cluster.sbatch(ALICE, *OWN).check().stdout.strip()
    cluster.wait_job(first, "RUNNING")
    second = cluster.sbatch(ALICE, *OWN).check().stdout.strip()
    job = cluster.wait_job(second, "PENDING", "AssocGrpNodeLimit")
    assert job["Account"] == "vision_gpu"


def test_a_borrowing_job_runs_on_idle_nodes_and_is_requeued_when_the_owner_needs_them(governed):
    cluster, _, _ = governed
    own = cluster.sbatch(ALICE, *OWN).check().stdout.strip()
    cluster.wait_job(own, "RUNNING")
    borrowed = cluster.sbatch(ALICE, *OWN, *BORROW).check().stdout.strip()
    running = cluster.wait_job(borrowed, "RUNNING")  # speech's node is idle: vision borrows it
    assert (running["Account"], running["QOS"]) == ("vision_gpu_borrow", "vision_gpu_borrow")
    owner = cluster.sbatch(BOB, *OWN).check().stdout.strip()
    back = cluster.wait_job(owner, "RUNNING", timeout=40)
    assert back["NodeList"] == running["NodeList"]  # speech got its node back
    requeued = cluster.wait_job(borrowed, "PENDING")
    assert int(requeued["Restarts"]) >= 1  # requeued, not cancelled
    assert cluster.job(own)["JobState"] == "RUNNING"  # vision's guaranteed work is not preempted


def test_a_user_cannot_submit_under_another_teams_account_or_borrow_qos(governed):
    cluster, _, _ = governed
    refused = cluster.sbatch(BOB, *OWN, "--account=vision_gpu")
    assert not refused.ok
    assert "Invalid account or account/partition combination specified" in refused.stderr
    refused = cluster.sbatch(BOB, *OWN, *BORROW)
    assert not refused.ok
    assert "Invalid account or account/partition combination specified" in refused.stderr
    refused = cluster.sbatch(BOB, *OWN, "--qos=vision_gpu_borrow")
    assert not refused.ok
    assert "Invalid qos specification" in refused.stderr


def test_the_borrow_qos_is_refused_under_the_guaranteed_account(governed):
    cluster, _, _ = governed
    refused = cluster.sbatch(ALICE, *OWN, "-A", "vision_gpu", "--qos=vision_gpu_borrow")
    assert not refused.ok
    assert "Invalid qos specification" in refused.stderr


def test_borrowing_stops_at_the_borrow_cap(governed):
    cluster, _, _ = governed
    borrowed = cluster.sbatch(ALICE, *OWN, *BORROW).check().stdout.strip()
    cluster.wait_job(borrowed, "RUNNING")
    second = cluster.sbatch(ALICE, *OWN, *BORROW).check().stdout.strip()
    job = cluster.wait_job(second, "PENDING", "QOSGrpNodeLimit")  # the cap is one node, the other node is idle
    assert job["Account"] == "vision_gpu_borrow"


def test_reapplying_the_same_spec_changes_nothing(governed):
    cluster, plan, _ = governed
    before = (_assoc_rows(cluster), _qos_rows(cluster), cluster.conf.read_text(), cluster.include_conf.read_text())
    restarts = cluster.restarts
    again = cluster.apply(files(plan))
    assert again.ok, again.stdout + again.stderr
    assert "hyperpod-gov: accounting of hpgtest: no changes" in again.stdout
    assert "slurm.conf unchanged: slurmctld keeps running" in again.stdout
    assert [line for line in again.stdout.splitlines() if line.startswith("+")] == []
    assert (_assoc_rows(cluster), _qos_rows(cluster), cluster.conf.read_text(),
            cluster.include_conf.read_text()) == before
    assert cluster.restarts == restarts


def test_a_team_that_borrows_can_still_use_its_own_guarantee(governed):
    cluster, _, _ = governed
    borrowed = cluster.sbatch(ALICE, *OWN, *BORROW).check().stdout.strip()
    cluster.wait_job(borrowed, "RUNNING")
    own = cluster.sbatch(ALICE, *OWN).check().stdout.strip()
    job = cluster.wait_job(own, "RUNNING", timeout=6)  # the scheduler runs every second
    assert job["Account"] == "vision_gpu"
    assert cluster.job(borrowed)["JobState"] == "RUNNING"  # both nodes busy, nothing preempted
