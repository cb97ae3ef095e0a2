"""Slurm governance a review's seeded mutants got past (issue 54): a partition dedicated to one team stays closed
to a team that may borrow its instance type, and a paused team comes back with exactly what it had, in the
rendered files, in ``diff``'s words and in the commands accounting.sh runs."""

from __future__ import annotations

from hyperpod_gov.diff import governance_diff
from hyperpod_gov.slurm.model import desired
from hyperpod_gov.slurm.render import files

from .spec_fixtures import plan_of, slurm_base
from .test_render_script import _run  # accounting.sh against the stand-in sacctmgr


def _lines(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


# --- a dedicated partition -----------------------------------------------------------------------------------------


def _cpu_dedicated_to_team_b() -> dict:
    """The cpu partition (8 x ml.c5.4xlarge) dedicated to team-b, which owns all of it and lends nothing; team-a
    may borrow 2 of those instances (absoluteBorrowLimits), so it has an account and a QOS for the partition."""
    data = slurm_base()
    data["cluster"]["instanceGroups"][3]["dedicatedTo"] = "team-b"
    data["teams"][1]["quota"] = [{"instanceType": "ml.c5.4xlarge", "count": 8}]
    data["teams"][1]["sharing"] = {"strategy": "DontLend"}
    data["teams"][0]["sharing"]["absoluteBorrowLimits"] = [{"instanceType": "ml.c5.4xlarge", "count": 2}]
    return data


def test_a_team_that_may_borrow_the_type_still_has_its_borrowing_account_for_the_dedicated_partition():
    # What makes the next test meaningful: without the dedication team-a's borrowing account would be admitted.
    team_a = plan_of(_cpu_dedicated_to_team_b()).slurm.team("team-a")
    assert team_a.accounts_on("cpu") == ("team-a_cpu_borrow",)
    # 2 x ml.c5.4xlarge: 2 x 16 vCPU, 2 x 32 GiB = 65536 MiB
    assert team_a.borrow_limit("cpu") == (("cpu", 32), ("mem", 65536))


def test_a_dedicated_partition_admits_neither_another_teams_borrowing_account_nor_its_borrow_qos():
    out = files(plan_of(_cpu_dedicated_to_team_b()))
    assert _lines(out["slurm.conf.d/partitions.conf"], "PartitionName=cpu ") == [
        "PartitionName=cpu AllowAccounts=team-b_cpu AllowQos=acme_standard,training,urgent"]
    (cpu,) = [p for p in plan_of(_cpu_dedicated_to_team_b()).slurm.partitions if p.name == "cpu"]
    assert (cpu.dedicated_to, cpu.accounts) == ("team-b", ("team-b_cpu",))
    assert "team-a_cpu_borrow" not in cpu.qos


def test_ending_the_dedication_admits_the_borrowing_team_on_the_partition():
    data = _cpu_dedicated_to_team_b()
    del data["cluster"]["instanceGroups"][3]["dedicatedTo"]
    data["teams"][1]["sharing"] = {"strategy": "Lend"}  # DontLend needs a dedicated partition (HPG-S006)
    assert _lines(files(plan_of(data))["slurm.conf.d/partitions.conf"], "PartitionName=cpu ") == [
        "PartitionName=cpu AllowAccounts=team-a_cpu_borrow,team-b_cpu "
        "AllowQos=acme_standard,team-a_cpu_borrow,training,urgent"]


# --- pausing and resuming a team (teams[].active) ------------------------------------------------------------------


def _paused() -> dict:
    data = slurm_base()
    data["teams"][0]["active"] = False
    return data


def _resumed() -> dict:
    data = slurm_base()
    data["teams"][0]["active"] = True
    return data


TEAM_A_ACTIVE = [
    "ensure_account team-a acme 'acme: team team-a' acme 40 '' '' acme_standard,training,urgent acme_standard",
    "ensure_account team-a_p5 team-a 'acme: team team-a on partition p5' acme 1 node=2 '' "
    "acme_standard,training,urgent acme_standard",
    "ensure_account team-a_p5_borrow team-a 'acme: team team-a borrowing on partition p5' acme 1 '' '' "
    "team-a_p5_borrow team-a_p5_borrow",
]
# GrpJobs=0 (the field after GrpTRES): nothing new starts; the guarantee (node=2) and everything else stay.
TEAM_A_PAUSED = [
    "ensure_account team-a acme 'acme: team team-a' acme 40 '' 0 acme_standard,training,urgent acme_standard",
    "ensure_account team-a_p5 team-a 'acme: team team-a on partition p5' acme 1 node=2 0 "
    "acme_standard,training,urgent acme_standard",
    "ensure_account team-a_p5_borrow team-a 'acme: team team-a borrowing on partition p5' acme 1 '' 0 "
    "team-a_p5_borrow team-a_p5_borrow",
]


def test_a_paused_team_keeps_its_limits_and_starts_no_job():
    assert _lines(files(plan_of(_paused()))["accounting.sh"], "ensure_account team-a") == TEAM_A_PAUSED


def test_a_resumed_team_gets_back_exactly_the_files_it_had_before_its_pause():
    resumed = files(plan_of(_resumed()))
    assert _lines(resumed["accounting.sh"], "ensure_account team-a") == TEAM_A_ACTIVE
    assert resumed == files(plan_of(slurm_base()))


RESUMED_WORDS = [
    "team team-a resumed: its queued work is admitted again, within its quota",
    "slurm accounting: sacctmgr -i modify account where name=team-a cluster=ml set GrpJobs=-1",
    "slurm accounting: sacctmgr -i modify account where name=team-a_p5 cluster=ml set GrpJobs=-1",
    "slurm accounting: sacctmgr -i modify account where name=team-a_p5_borrow cluster=ml set GrpJobs=-1",
    "team team-a (Slurm) paused: yes (GrpJobs=0) -> no",
]


def test_diff_of_a_pause_says_that_nothing_new_starts_and_changes_only_grpjobs():
    assert governance_diff(plan_of(_resumed()), plan_of(_paused())) == [
        "team team-a paused: nothing new of the team is admitted (ComputeQuota ActivationState: Disabled; kueue "
        "mode: ClusterQueue stopPolicy: Hold); work already admitted keeps running until it ends; its queued work "
        "waits; its namespace, access and objects stay",
        "slurm accounting: sacctmgr -i modify account where name=team-a cluster=ml set GrpJobs=0",
        "slurm accounting: sacctmgr -i modify account where name=team-a_p5 cluster=ml set GrpJobs=0",
        "slurm accounting: sacctmgr -i modify account where name=team-a_p5_borrow cluster=ml set GrpJobs=0",
        "team team-a (Slurm) paused: no -> yes (GrpJobs=0)",
    ]


def test_diff_of_a_resume_clears_grpjobs_on_every_account_of_the_team_and_touches_no_limit():
    assert governance_diff(plan_of(_paused()), plan_of(_resumed())) == RESUMED_WORDS


def test_accounting_sh_resumes_a_paused_team_with_exactly_the_commands_diff_names(tmp_path):
    commands, _ = _run(tmp_path, _resumed(), desired(plan_of(_paused())))
    assert commands == [w.removeprefix("slurm accounting: ") for w in RESUMED_WORDS if w.startswith("slurm ")]


def test_accounting_sh_pauses_a_running_team_without_touching_its_limits(tmp_path):
    commands, _ = _run(tmp_path, _paused(), desired(plan_of(_resumed())))
    assert commands == [f"sacctmgr -i modify account where name={a} cluster=ml set GrpJobs=0"
                        for a in ("team-a", "team-a_p5", "team-a_p5_borrow")]
