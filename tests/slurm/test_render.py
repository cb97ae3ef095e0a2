"""The Slurm files: exactly the expected commands and settings, byte-identical on every render, and the same
whatever the order of the spec's lists; ``changes`` names exactly the commands a change causes."""

from __future__ import annotations

import subprocess

import pytest

from hyperpod_gov.slurm.model import desired
from hyperpod_gov.slurm.render import MARK_BEGIN, MARK_END, changes, files

from .spec_fixtures import plan_of, slurm_base


def _lines(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    return files(plan_of(slurm_base()))


def test_a_slurm_plan_renders_the_five_files(rendered):
    assert list(rendered) == ["accounting.sh", "apply.sh", "posix.sh", "slurm.conf.d/governance.conf",
                              "slurm.conf.d/partitions.conf"]


def test_accounting_sh_ensures_exactly_the_qos_accounts_and_users_of_the_spec(rendered):
    text = rendered["accounting.sh"]
    assert _lines(text, "ensure_qos ") == [
        "ensure_qos team-a_p5_borrow 'acme: team-a borrowing on p5' 0 node=1 '' REQUEUE NoReserve",
        "ensure_qos acme_standard 'acme: work without a priority class' 0 '' team-a_p5_borrow '' ''",
        "ensure_qos training 'acme: priority class training' 50 '' team-a_p5_borrow '' ''",
        "ensure_qos urgent 'acme: priority class urgent' 100 '' team-a_p5_borrow '' ''",
    ]
    assert _lines(text, "ensure_account ") == [
        "ensure_account acme root 'acme: hyperpod-gov organisation' acme 1 '' '' acme_standard,training,urgent "
        "acme_standard",
        "ensure_account team-a acme 'acme: team team-a' acme 40 '' '' acme_standard,training,urgent acme_standard",
        "ensure_account team-b acme 'acme: team team-b' acme 60 '' '' acme_standard,training,urgent acme_standard",
        "ensure_account team-a_p5 team-a 'acme: team team-a on partition p5' acme 1 node=2 '' "
        "acme_standard,training,urgent acme_standard",
        "ensure_account team-a_p5_borrow team-a 'acme: team team-a borrowing on partition p5' acme 1 '' '' "
        "team-a_p5_borrow team-a_p5_borrow",
        "ensure_account team-b_cpu team-b 'acme: team team-b on partition cpu' acme 1 cpu=32,mem=65536 '' "
        "acme_standard,training,urgent acme_standard",
        "ensure_account team-b_p5 team-b 'acme: team team-b on partition p5' acme 1 node=2 '' "
        "acme_standard,training,urgent acme_standard",
    ]
    assert _lines(text, "ensure_user ") == ["ensure_user alice team-a_p5", "ensure_user alice team-a_p5_borrow",
                                           "ensure_user bob team-a_p5", "ensure_user bob team-a_p5_borrow",
                                           "ensure_user carol team-b_cpu", "ensure_user carol team-b_p5"]
    assert _lines(text, "ensure_default_account ") == [
        "ensure_default_account alice team-a_p5", "ensure_default_account bob team-a_p5",
        "ensure_default_account carol team-b_cpu"]


def test_accounting_sh_deletes_only_when_asked_and_says_what_deleting_does(rendered):
    text = rendered["accounting.sh"]
    assert 'PRUNE="${HPG_SLURM_PRUNE:-0}"' in text
    assert "deleting an association cancels its running jobs" in text
    assert "load clean" not in text
    assert [line for line in text.splitlines() if " delete " in line and "prune " not in line] == []


def test_accounting_sh_takes_its_paths_and_cluster_from_the_environment(rendered):
    text = rendered["accounting.sh"]
    for default in ('SLURM_PREFIX="${HPG_SLURM_PREFIX:-/opt/slurm}"', 'CLUSTER="${1:-${HPG_SLURM_CLUSTER:-}}"',
                    'SACCTMGR="${HPG_SACCTMGR:-sacctmgr}"', "${CLUSTER:-ml}"):
        assert default in text


def test_the_settings_are_multifactor_priority_qos_preemption_by_requeue_and_enforced_limits(rendered):
    settings = _lines(rendered["slurm.conf.d/governance.conf"], "")[2:]
    assert settings == ["PriorityType=priority/multifactor", "PriorityWeightFairshare=10000",
                        "PriorityWeightQOS=100000", "PreemptType=preempt/qos", "PreemptMode=REQUEUE", "JobRequeue=1",
                        "AccountingStorageEnforce=associations,limits,qos,safe"]


def test_first_come_first_serve_turns_fair_share_priority_off():
    data = slurm_base()
    data["scheduler"]["idleCompute"] = "first-come-first-serve"
    assert "PriorityWeightFairshare=0" in files(plan_of(data))["slurm.conf.d/governance.conf"]


def test_gpu_quotas_with_gpu_gres_track_gpus_as_tres():
    data = slurm_base()
    data["cluster"]["slurm"]["gpuGres"] = True
    data["teams"][0]["quota"] = [{"instanceType": "ml.p5.48xlarge", "accelerators": 12}]
    out = files(plan_of(data))
    assert _lines(out["slurm.conf.d/governance.conf"], "GresTypes") == ["GresTypes=gpu"]
    assert _lines(out["slurm.conf.d/governance.conf"], "AccountingStorageTRES") == ["AccountingStorageTRES=gres/gpu"]
    assert "ensure_account team-a_p5 team-a 'acme: team team-a on partition p5' acme 1 gres/gpu=12 " \
        in out["accounting.sh"]
    assert "ensure_qos team-a_p5_borrow 'acme: team-a borrowing on p5' 0 gres/gpu=6 " in out["accounting.sh"]


def test_whole_instance_quotas_need_no_gpu_tracking(rendered):
    assert "AccountingStorageTRES" not in rendered["slurm.conf.d/governance.conf"]


def test_partitions_admit_their_teams_accounts_and_qos(rendered):
    assert _lines(rendered["slurm.conf.d/partitions.conf"], "PartitionName=") == [
        "PartitionName=cpu AllowAccounts=team-b_cpu AllowQos=acme_standard,training,urgent",
        "PartitionName=p5 AllowAccounts=team-a_p5,team-a_p5_borrow,team-b_p5 AllowQos=acme_standard,team-a_p5_borrow,training,urgent",
    ]


def test_a_dedicated_partition_admits_its_team_alone():
    data = slurm_base()
    data["teams"][1]["sharing"] = {"strategy": "DontLend"}
    data["teams"][1]["quota"] = [{"instanceType": "ml.c5.4xlarge", "count": 8}]
    data["cluster"]["instanceGroups"][3]["dedicatedTo"] = "team-b"
    data["teams"][0]["sharing"]["absoluteBorrowLimits"] = []
    lines = _lines(files(plan_of(data))["slurm.conf.d/partitions.conf"], "PartitionName=cpu")
    assert lines == ["PartitionName=cpu AllowAccounts=team-b_cpu AllowQos=acme_standard,training,urgent"]


def test_under_managed_the_partition_lines_stay_hyperpods():
    data = slurm_base()
    data["cluster"]["slurm"]["configStrategy"] = "Managed"
    data["cluster"]["instanceGroups"].pop(3)
    data["teams"][1]["quota"].pop(1)
    assert "slurm.conf.d/partitions.conf" not in files(plan_of(data))


def test_a_paused_team_runs_what_runs_and_starts_nothing():
    data = slurm_base()
    data["teams"][0]["active"] = False
    state = desired(plan_of(data))
    assert (state.account("team-a").grp_jobs, state.account("team-a_p5").grp_jobs,
            state.account("team-a_p5_borrow").grp_jobs) == (0, 0, 0)
    assert state.account("team-b").grp_jobs is None


def test_posix_sh_creates_groups_users_and_group_owned_data_directories(rendered):
    text = rendered["posix.sh"]
    groups = _lines(text, "ensure_group ")
    users = _lines(text, "ensure_user ")
    assert [g.split()[1] for g in groups] == ["team-a", "team-b-users"]
    assert [(u.split()[1], u.split()[3]) for u in users] == [("alice", "team-a"), ("bob", "team-a"),
                                                             ("carol", "team-b-users")]
    assert all(200000 <= int(line.split()[2]) < 300000 for line in groups + users)
    assert [line.strip() for line in text.splitlines() if line.strip().startswith("ensure_dir ")] == [
        "ensure_dir /fsx/data/team-b team-b-users 2770", "ensure_dir /fsx/team-a team-a 2770"]
    assert "userdel" not in text and "groupdel" not in text and "rm -rf" not in text


def test_a_user_of_two_teams_has_one_primary_group_and_the_others_as_supplementary():
    data = slurm_base()
    data["teams"][1]["slurm"]["users"] = ["carol", "alice"]
    users = _lines(files(plan_of(data))["posix.sh"], "ensure_user alice ")
    assert len(users) == 1 and users[0].split()[3:] == ["team-a", "team-b-users"]


def test_apply_sh_waits_for_slurmdbd_and_restarts_slurmctld_only_on_a_change(rendered):
    text = rendered["apply.sh"]
    assert MARK_BEGIN in text and MARK_END in text
    assert "until sacctmgr -nP show cluster format=cluster" in text
    assert 'if [ "$before" = "$after" ]; then' in text and "$RESTART" in text
    assert text.index('bash "$HERE/accounting.sh"') < text.index("$RESTART")
    assert 'RESTART="${HPG_SLURMCTLD_RESTART:-systemctl restart slurmctld}"' in text
    assert 'sort -V | sed -n 1p)" != "22.05"' in text


@pytest.mark.parametrize("name", ["accounting.sh", "apply.sh", "posix.sh"])
def test_every_script_is_valid_bash(rendered, name, tmp_path):
    path = tmp_path / "script.sh"
    path.write_text(rendered[name])
    result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_rendering_twice_is_byte_identical(rendered):
    assert files(plan_of(slurm_base())) == rendered


def test_reordering_teams_users_groups_and_classes_changes_nothing(rendered):
    data = slurm_base()
    data["teams"].reverse()
    data["teams"][1]["slurm"]["users"].reverse()
    data["cluster"]["instanceGroups"].reverse()
    data["scheduler"]["priorityClasses"].reverse()
    assert files(plan_of(data)) == rendered


def test_files_refuse_an_eks_plan(base):
    with pytest.raises(ValueError, match="not of a Slurm-orchestrated cluster"):
        files(plan_of(base))


# --- changes --------------------------------------------------------------------------------------------------


def _state(change=None):
    data = slurm_base()
    if change:
        change(data)
    return desired(plan_of(data))


def test_an_unchanged_spec_changes_nothing():
    assert changes(_state(), _state()) == []


def test_a_new_slurm_spec_adds_everything_borrow_qos_first_and_parents_first():
    out = changes(None, _state())
    assert out[0] == ("sacctmgr -i add qos team-a_p5_borrow 'Description=acme: team-a borrowing on p5' Priority=0 "
                      "GrpTRES=node=1 PreemptMode=REQUEUE Flags=NoReserve")
    assert [c.split()[4] for c in out if " add account " in c] == ["acme", "team-a", "team-b", "team-a_p5",
                                                                    "team-a_p5_borrow", "team-b_cpu", "team-b_p5"]
    assert out[-1] == "sacctmgr -i add user carol Cluster=ml Account=team-b_p5"


def test_a_spec_change_gives_exactly_the_sacctmgr_commands_it_causes():
    def change(d):
        d["teams"][0]["fairShareWeight"] = 30
        d["teams"][0]["sharing"] = {"strategy": "Lend"}
        d["teams"][0]["active"] = False
        d["teams"][1]["quota"][1] = {"instanceType": "ml.c5.4xlarge", "count": 1}
        d["teams"][1]["slurm"]["users"] = ["carol", "alice"]
    assert changes(_state(), _state(change)) == [
        "sacctmgr -i modify qos where name=acme_standard set Preempt=",
        "sacctmgr -i modify qos where name=training set Preempt=",
        "sacctmgr -i modify qos where name=urgent set Preempt=",
        "sacctmgr -i modify account where name=team-a cluster=ml set Fairshare=30 GrpJobs=0",
        "sacctmgr -i modify account where name=team-a_p5 cluster=ml set GrpJobs=0",
        "sacctmgr -i modify account where name=team-b_cpu cluster=ml set GrpTRES=cpu=-1,mem=-1,node=1",
        "sacctmgr -i add user alice Cluster=ml Account=team-b_cpu",
        "sacctmgr -i add user alice Cluster=ml Account=team-b_p5",
    ] + [f"# with HPG_SLURM_PRUNE=1 (deleting an association cancels its running jobs): sacctmgr -i {c}" for c in (
        "delete user where name=alice account=team-a_p5_borrow cluster=ml",
        "delete user where name=bob account=team-a_p5_borrow cluster=ml",
        "delete account where name=team-a_p5_borrow cluster=ml",  # before its QOS, which it allows
        "delete qos where name=team-a_p5_borrow")]


def test_a_removed_team_is_deleted_only_with_prune_users_first_then_deepest_accounts():
    out = changes(_state(), _state(lambda d: d["teams"].pop(1)))
    assert [c for c in out if c.startswith("# ")] == [
        "# with HPG_SLURM_PRUNE=1 (deleting an association cancels its running jobs): sacctmgr -i delete user where "
        f"name=carol account={a} cluster=ml" for a in ("team-b_cpu", "team-b_p5")] + [
        "# with HPG_SLURM_PRUNE=1 (deleting an association cancels its running jobs): sacctmgr -i delete account "
        f"where name={a} cluster=ml" for a in ("team-b_cpu", "team-b_p5", "team-b")]


def test_a_default_account_moves_when_the_users_first_team_changes():
    out = changes(_state(), _state(lambda d: d["teams"][1]["slurm"].update(users=["carol", "alice"])) )
    assert "sacctmgr -i modify user where name=alice cluster=ml set DefaultAccount=team-a_p5" not in out
    renamed = _state(lambda d: (d["teams"][0]["slurm"].update(users=["bob"]),
                                d["teams"][1]["slurm"].update(users=["carol", "alice"])))
    assert "sacctmgr -i modify user where name=alice cluster=ml set DefaultAccount=team-b_cpu" in \
        changes(_state(), renamed)


def test_accounts_outside_the_organisation_are_never_pruned():
    from dataclasses import replace

    from hyperpod_gov.slurm.model import Account, User

    old = _state()
    other = replace(old, accounts=old.accounts + (Account("physics", "root", "physics", "physics"),),
                    users=old.users + (User("zed", "physics", "physics"),))
    assert [c for c in changes(other, _state()) if "physics" in c or "zed" in c] == []


def test_a_fair_share_weight_of_zero_becomes_fairshare_one():
    state = _state(lambda d: d["teams"][1].update(fairShareWeight=0))
    assert (state.account("team-b").fairshare, state.account("team-a").fairshare) == (1, 40)
