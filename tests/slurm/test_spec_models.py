"""The Slurm keys of the spec and the Slurm part of the plan (cluster.orchestrator: slurm)."""

from __future__ import annotations

import pytest

from hyperpod_gov.slurm.model import desired
from hyperpod_gov.spec.errors import SpecError
from hyperpod_gov.spec.loader import parse_spec

from .spec_fixtures import TODAY, plan_of, slurm_base


def _problems(data) -> list[str]:
    with pytest.raises(SpecError) as info:
        parse_spec(data, today=TODAY)
    return [str(i) for i in info.value.issues]


def test_an_eks_spec_has_no_slurm_plan(base):
    assert plan_of(base).slurm is None


def test_the_orchestrator_defaults_to_eks(base):
    assert parse_spec(base, today=TODAY).cluster.orchestrator == "eks"


def test_a_slurm_spec_plans_its_groups_partitions_and_teams():
    sp = plan_of(slurm_base()).slurm
    assert sp.config_strategy == "Merge"
    assert [(g.name, g.node_type, g.partition) for g in sp.groups] == [
        ("controller", "Controller", None), ("cpu", "Compute", "cpu"), ("gpu", "Compute", "p5"),
        ("login", "Login", None)]
    assert [(p.name, p.nodes) for p in sp.partitions] == [("cpu", 8), ("p5", 4)]
    a, b = sp.teams
    assert (a.account, a.fairshare, a.users, a.group, a.data_path) == ("team-a", 40, ("alice", "bob"), "team-a",
                                                                      "/fsx/team-a")
    assert [(lim.partition, lim.tres) for lim in a.guaranteed] == [("p5", (("node", 2),))]
    assert [(lim.partition, lim.tres) for lim in a.borrow] == [("p5", (("node", 1),))]  # floor(2 * 50%)
    assert [(lim.partition, lim.tres) for lim in b.guaranteed] == [
        ("cpu", (("cpu", 32), ("mem", 65536))), ("p5", (("node", 2),))]
    assert b.borrow == ()  # Lend: never borrows
    assert (b.group, b.data_path) == ("team-b-users", "/fsx/data/team-b")


def test_the_settings_default_to_managed_without_an_external_database():
    data = slurm_base()
    del data["cluster"]["slurm"]
    data["cluster"]["instanceGroups"].pop(3)  # one compute partition: Managed needs no partition edits (HPG-S007)
    data["teams"][1]["quota"].pop(1)
    sp = plan_of(data).slurm
    assert (sp.config_strategy, sp.accounting_database) == ("Managed", None)


def test_the_accounting_database_is_kept_as_the_service_takes_it():
    data = slurm_base()
    data["cluster"]["slurm"]["accountingDatabase"] = {
        "endpoint": "acct.cluster-abc.us-east-1.rds.amazonaws.com",
        "secretArn": "arn:aws:secretsmanager:us-east-1:111111111111:secret:slurm-acct-AbCdEf", "port": 3306}
    data["cluster"]["nodeProvisioningMode"] = "Continuous"
    db = plan_of(data).slurm.accounting_database
    assert (db.endpoint, db.port, db.name) == ("acct.cluster-abc.us-east-1.rds.amazonaws.com", 3306, None)


@pytest.mark.parametrize("users, message", [
    (["Alice"], "'Alice' is not a POSIX user name"),
    (["1bob"], "'1bob' is not a POSIX user name"),
    (["root"], "'root' is a system or daemon user name"),
    (["bob", "bob"], "lists bob twice"),
])
def test_team_users_are_posix_names(users, message):
    data = slurm_base()
    data["teams"][0]["slurm"]["users"] = users
    assert any("teams.0.slurm.users" in p.replace("[", ".").replace("]", "") and message in p
               for p in _problems(data)), _problems(data)


@pytest.mark.parametrize("key, value, message", [
    ("group", "Team A", "is not a POSIX group name"),
    ("dataPath", "fsx/team-a", "is not an absolute path"),
    ("dataPath", "/fsx/../etc", "has a '.' or '..' segment"),
    ("dataPath", "/team-a", "is not below the shared file system's mount point /fsx"),
    # issue 55: posix.sh gives the directory to the team's group as root; a system directory is refused
    ("dataPath", "/etc/sudoers.d", "is not below the shared file system's mount point /fsx"),
    ("dataPath", "/root/.ssh", "has a hidden segment '.ssh'"),
    ("dataPath", "/opt/slurm/etc", "is not below the shared file system's mount point /fsx"),
    ("dataPath", "/usr/local/bin", "is not below the shared file system's mount point /fsx"),
    ("dataPath", "/fsx", "is not below the shared file system's mount point /fsx"),
    ("dataPath", "/fsxdata/team-a", "is not below the shared file system's mount point /fsx"),
    ("dataPath", "/fsx/./team-a", "has a '.' or '..' segment"),
    ("dataPath", "/fsx//team-a", "has an empty segment"),
    ("dataPath", "/fsx/team-a/", "has an empty segment"),
    ("dataPath", "/fsx/.lustre/fid", "has a hidden segment '.lustre'"),
    ("dataPath", "/fsx/team a", "segment 'team a' holds a character"),
    ("dataPath", "/fsx/team-a\n", "segment 'team-a\\n' holds a character"),
])
def test_team_group_and_data_path_are_checked(key, value, message):
    data = slurm_base()
    data["teams"][0]["slurm"][key] = value
    assert any(message in p for p in _problems(data)), _problems(data)


@pytest.mark.parametrize("path", ["/fsx/team-a", "/fsx/projects/team-a", "/fsx/a.b_c+d@e-f", "/fsx/team-a..old"])
def test_a_plain_directory_below_the_mount_point_is_accepted(path):
    data = slurm_base()
    data["teams"][0]["slurm"]["dataPath"] = path
    assert plan_of(data).slurm.teams[0].data_path == path


@pytest.mark.parametrize("partition, message", [
    ("p5_large", "is not a partition name HyperPod accepts"),
    ("-p5", "is not a partition name HyperPod accepts"),
    ("dev", "is the partition HyperPod puts every node in itself"),
])
def test_partition_names_follow_hyperpods_pattern(partition, message):
    data = slurm_base()
    data["cluster"]["instanceGroups"][2]["slurm"]["partition"] = partition
    assert any(message in p for p in _problems(data)), _problems(data)


def test_the_desired_state_of_a_slurm_plan_has_the_org_team_and_partition_accounts():
    state = desired(plan_of(slurm_base()))
    assert [(a.name, a.parent) for a in state.accounts] == [
        ("acme", "root"), ("team-a", "acme"), ("team-a_p5", "team-a"), ("team-a_p5_borrow", "team-a"),
        ("team-b", "acme"),
        ("team-b_cpu", "team-b"), ("team-b_p5", "team-b")]
    assert [q.name for q in state.qos] == ["acme_standard", "team-a_p5_borrow", "training", "urgent"]


def test_desired_refuses_an_eks_plan(base):
    with pytest.raises(ValueError, match="not of a Slurm-orchestrated cluster"):
        desired(plan_of(base))


def test_the_example_of_docs_slurm_md_is_a_valid_slurm_spec():
    import re
    from pathlib import Path

    import yaml

    page = (Path(__file__).resolve().parents[2] / "docs" / "slurm.md").read_text()
    block = re.findall(r"```yaml\n(.*?)```", page, flags=re.S)[0]  # the first: the whole example
    data = {"name": "acme", "accounts": {"capacity": {"id": "111111111111", "region": "us-east-1"}},
            **yaml.safe_load(block)}
    sp = plan_of(data).slurm
    assert [(t.name, t.users, t.data_path) for t in sp.teams] == [("team-a", ("alice", "bob"), "/fsx/team-a")]
