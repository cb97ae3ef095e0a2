"""The HPG-S rules: what a Slurm cluster needs, what only EKS has, and what Slurm cannot express."""

from __future__ import annotations

import pytest

from hyperpod_gov.spec.loader import parse_spec
from hyperpod_gov.spec.rules import check_spec

from .spec_fixtures import TODAY, slurm_base


def _findings(data, rule: str) -> list[str]:
    """The findings of one rule, errors and warnings, as printed (parse without the rules, then run them)."""
    from hyperpod_gov.spec.models import GovernanceSpec

    spec = GovernanceSpec.model_validate(data)
    return [str(i) for i in check_spec(spec, today=TODAY) if i.rule == rule]


def test_the_base_slurm_spec_loads_with_only_the_borrow_cap_warning():
    spec = parse_spec(slurm_base(), today=TODAY)
    assert [i.rule for i in check_spec(spec, today=TODAY) if i.rule.startswith("HPG-S")] == ["HPG-S009"]


def test_slurm_keys_on_an_eks_cluster_are_refused(base):
    base["cluster"]["slurm"] = {"configStrategy": "Merge"}
    base["cluster"]["instanceGroups"][0]["slurm"] = {"nodeType": "Compute", "partition": "p5"}
    base["teams"][0]["slurm"] = {"users": ["alice"]}
    found = _findings(base, "HPG-S001")
    assert [f.split(":")[0] for f in found] == ["HPG-S001 cluster.slurm", "HPG-S001 cluster.instanceGroups[0].slurm",
                                                "HPG-S001 teams[0].slurm"]
    assert all("set cluster.orchestrator: slurm" in f for f in found)


def test_a_slurm_group_without_its_role_is_refused():
    data = slurm_base()
    del data["cluster"]["instanceGroups"][3]["slurm"]
    assert _findings(data, "HPG-S001") == [
        "HPG-S001 cluster.instanceGroups[3].slurm: is missing: a Slurm cluster's groups each have a node type; add "
        "slurm: {nodeType: Compute, partition: NAME} (or nodeType: Controller | Login)"]


@pytest.mark.parametrize("change, expected", [
    (lambda gs: gs.pop(0), ["cluster.instanceGroups: has no Controller group"]),
    (lambda gs: gs[1]["slurm"].update(nodeType="Controller"),
     ["cluster.instanceGroups[1].slurm.nodeType: is a second Controller group"]),
    (lambda gs: gs[3]["slurm"].update(nodeType="Login", partition=None),
     ["cluster.instanceGroups[3].slurm.nodeType: is a second Login group"]),
    (lambda gs: gs[2]["slurm"].pop("partition"),
     ["cluster.instanceGroups[2].slurm.partition: is missing: HyperPod needs a partition for every Compute group"]),
    (lambda gs: gs[0]["slurm"].update(partition="ctl"),
     ["cluster.instanceGroups[0].slurm.partition: is set on a Controller group"]),
])
def test_node_types_follow_hyperpods_rules(change, expected):
    data = slurm_base()
    change(data["cluster"]["instanceGroups"])
    found = _findings(data, "HPG-S002")
    assert len(found) == len(expected) and all(f"HPG-S002 {e}" in f for e, f in zip(expected, found)), found


@pytest.mark.parametrize("where, key, value, instead", [
    ("cluster", "kubernetesVersion", "1.33", "probe `sinfo -V`"),
    ("cluster", "endpointAccess", "private", "submit with sbatch"),
    ("cluster", "apiAccess", {"cidrs": [{"cidr": "10.1.0.0/16", "description": "VPN"}]}, "Login group"),
    ("cluster", "operators", ["training"], "sbatch and srun"),
    ("cluster", "viewers", ["arn:aws:iam::111111111111:role/V"], "teams[].slurm.users"),
    ("scheduler", "mode", "kueue", "preempt/qos"),
    ("group", "labels", {"example.com/pool": "a"}, "slurm.partition"),
    ("group", "taints", [{"key": "example.com/x", "effect": "NoSchedule"}], "dedicatedTo"),
    ("team", "access", {"submitters": ["arn:aws:iam::111111111111:role/A"]}, "teams[].slurm.users"),
    ("team", "workloadIdentities", [{"serviceAccount": "trainer"}], "execution role"),
    ("team", "egress", [{"cidr": "10.20.0.0/16", "ports": [5432]}], "security groups"),
    ("team", "podSecurity", "restricted", "submitting POSIX user"),
    ("team", "storage", {"bucket": "create"}, "teams[].slurm.dataPath"),
])
def test_eks_only_keys_are_refused_with_the_slurm_equivalent(where, key, value, instead):
    data = slurm_base()
    target, path = {"cluster": (data["cluster"], "cluster"), "scheduler": (data["scheduler"], "scheduler"),
                    "group": (data["cluster"]["instanceGroups"][2], "cluster.instanceGroups[2]"),
                    "team": (data["teams"][0], "teams[0]")}[where]
    target[key] = value
    found = _findings(data, "HPG-S003")
    assert len(found) == 1 and found[0].startswith(f"HPG-S003 {path}.{key}: only applies to an EKS-orchestrated "
                                                   "cluster; ") and instead in found[0], found
    assert f"remove {key} (or set cluster.orchestrator: eks)" in found[0]


def test_eks_only_keys_left_at_their_defaults_are_not_refused():
    assert _findings(slurm_base(), "HPG-S003") == []


def test_a_governed_type_in_two_partitions_is_refused():
    data = slurm_base()
    data["cluster"]["instanceGroups"].append({"name": "gpu2", "instanceType": "ml.p5.48xlarge", "count": 1,
                                              "slurm": {"nodeType": "Compute", "partition": "p5b"}})
    assert _findings(data, "HPG-S004") == [
        "HPG-S004 teams[*].quota[ml.p5.48xlarge]: ml.p5.48xlarge is in partitions p5, p5b: a team's limit is per "
        "partition, so it would not know which to count ('ml.p5.48xlarge'); put every Compute group of "
        "ml.p5.48xlarge in one partition"]


def test_a_partition_of_two_governed_types_is_refused():
    data = slurm_base()
    data["cluster"]["instanceGroups"][3]["slurm"]["partition"] = "p5"
    found = _findings(data, "HPG-S004")
    assert len(found) == 1 and "partition p5 holds ml.c5.4xlarge, ml.p5.48xlarge" in found[0]


def test_partitions_differing_only_in_case_are_refused():
    data = slurm_base()
    data["cluster"]["instanceGroups"][3]["slurm"]["partition"] = "P5"
    found = _findings(data, "HPG-S004")
    assert any("differs from partition 'P5' only in case" in f for f in found), found


def test_guarantees_beyond_the_compute_groups_are_refused():
    data = slurm_base()
    data["teams"][1]["quota"][0]["count"] = 3  # 2 + 3 > 4 p5 instances
    assert _findings(data, "HPG-S005") == [
        "HPG-S005 teams[*].quota[ml.p5.48xlarge]: guarantees on ml.p5.48xlarge add up to 40 accelerators (team-a "
        "16, team-b 24) but its Compute groups hold 32 (4 x ml.p5.48xlarge); Slurm does not check that limits fit "
        "the cluster (40); lower the quotas by 8 accelerators or add Compute instances of ml.p5.48xlarge"]


def test_a_quota_on_the_controllers_type_is_refused():
    data = slurm_base()
    data["teams"][0]["quota"].append({"instanceType": "ml.m5.xlarge", "count": 1})
    found = _findings(data, "HPG-S005")
    assert found and "teams[0].quota[1].instanceType: is only in Controller or Login groups" in found[0]


def test_dont_lend_without_a_dedicated_partition_is_refused():
    data = slurm_base()
    data["teams"][1]["sharing"] = {"strategy": "DontLend"}
    found = _findings(data, "HPG-S006")
    assert [f.split(";")[0] for f in found] == [
        "HPG-S006 teams[1].sharing.strategy: keeps team-b's ml.p5.48xlarge capacity from others, which Slurm cannot "
        "do on partition p5: idle nodes run any account's jobs ('DontLend')",
        "HPG-S006 teams[1].sharing.strategy: keeps team-b's ml.c5.4xlarge capacity from others, which Slurm cannot "
        "do on partition cpu: idle nodes run any account's jobs ('DontLend')"]


def test_dont_lend_on_a_dedicated_partition_is_accepted():
    data = slurm_base()
    data["teams"][1]["sharing"] = {"strategy": "DontLend"}
    data["teams"][1]["quota"] = [{"instanceType": "ml.c5.4xlarge", "count": 8}]
    data["cluster"]["instanceGroups"][3]["dedicatedTo"] = "team-b"
    assert _findings(data, "HPG-S006") == []


@pytest.mark.parametrize("strategy", ["Managed", "Overwrite"])
def test_partition_access_under_a_strategy_that_rewrites_partitions_is_refused(strategy):
    data = slurm_base()
    data["cluster"]["slurm"]["configStrategy"] = strategy
    found = _findings(data, "HPG-S007")
    assert len(found) == 1 and found[0].startswith(f"HPG-S007 cluster.slurm.configStrategy: is {strategy}, under "
                                                   "which HyperPod rewrites the partition lines")
    assert "set cluster.slurm.configStrategy: Merge" in found[0]


def test_one_partition_under_managed_needs_no_partition_edits():
    data = slurm_base()
    data["cluster"]["slurm"]["configStrategy"] = "Managed"
    data["cluster"]["instanceGroups"].pop(3)
    data["teams"][1]["quota"].pop(1)
    assert _findings(data, "HPG-S007") == []


def test_accelerator_quotas_need_gpu_gres():
    data = slurm_base()
    data["teams"][0]["quota"] = [{"instanceType": "ml.p5.48xlarge", "accelerators": 12}]
    found = _findings(data, "HPG-S008")
    assert found == [
        "HPG-S008 teams[0].quota[0].accelerators: would be a GrpTRES=gres/gpu limit, but the cluster does not track "
        "GPUs as GRES (HyperPod's default slurm.conf has no GresTypes=gpu) (12); set cluster.slurm.gpuGres: true "
        "once the nodes declare their GPUs in gres.conf, or give the quota in whole instances (count: 1)"]
    data["cluster"]["slurm"]["gpuGres"] = True
    assert _findings(data, "HPG-S008") == []


def test_neuron_accelerator_quotas_are_refused_even_with_gpu_gres():
    data = slurm_base()
    data["cluster"]["slurm"]["gpuGres"] = True
    data["cluster"]["instanceGroups"].append({"name": "trn", "instanceType": "ml.trn1.32xlarge", "count": 2,
                                              "slurm": {"nodeType": "Compute", "partition": "trn1"}})
    data["teams"][0]["quota"].append({"instanceType": "ml.trn1.32xlarge", "accelerators": 16})
    found = _findings(data, "HPG-S008")
    assert len(found) == 1 and "give the quota in whole instances (count: 1)" in found[0]


def test_a_percentage_borrow_limit_warns_with_the_cap_it_becomes():
    assert _findings(slurm_base(), "HPG-S009") == [
        "HPG-S009 teams[0].sharing.borrowLimitPercent: becomes a fixed cap of 1 instances of ml.p5.48xlarge (50% of "
        "2) on the team's borrow QOS, whatever is idle (50); give the cap as sharing.absoluteBorrowLimits on "
        "ml.p5.48xlarge to state it exactly, or acknowledge HPG-S009"]


def test_an_absolute_borrow_limit_does_not_warn():
    data = slurm_base()
    data["teams"][0]["sharing"] = {"strategy": "LendAndBorrow", "absoluteBorrowLimits": [
        {"instanceType": "ml.p5.48xlarge", "count": 1}]}
    assert _findings(data, "HPG-S009") == []


def test_fair_share_weight_zero_warns_that_it_is_clamped():
    data = slurm_base()
    data["teams"][1]["fairShareWeight"] = 0
    assert _findings(data, "HPG-S010") == [
        "HPG-S010 teams[1].fairShareWeight: becomes Fairshare=1 on the team's Slurm account: 0 would give it no "
        "share of its own (0); set a weight from 1, or acknowledge HPG-S010"]


@pytest.mark.parametrize("change, message", [
    (lambda d: d["teams"][0].update(name="acme"), "teams[0].name: is the name of the Slurm account of the "
     "organisation"),
    (lambda d: d["scheduler"]["priorityClasses"][0].update(name="normal"), "is Slurm's default QOS"),
    (lambda d: d["teams"][0]["slurm"].update(group="team-b-users"), "teams[1].slurm.group: is also teams[0]'s "
     "group"),
    (lambda d: d["teams"][0]["slurm"].update(group="carol"), "'carol' is also a user's name"),
    (lambda d: d["teams"][0]["slurm"].update(dataPath="/fsx/data"), "teams[1].slurm.dataPath: is nested with "
     "teams[0]'s data directory /fsx/data"),
    (lambda d: d["teams"][0].update(name="1team"), "teams[0].slurm.group: defaults to the team name '1team'"),
])
def test_generated_names_do_not_collide(change, message):
    data = slurm_base()
    change(data)
    found = _findings(data, "HPG-S011")
    assert any(message in f for f in found), found


def test_users_of_a_team_without_capacity_warn():
    data = slurm_base()
    data["teams"].append({"name": "team-c", "slurm": {"users": ["dave"]}})
    found = _findings(data, "HPG-S012")
    assert len(found) == 1 and found[0].startswith("HPG-S012 teams[2].slurm.users: cannot submit anything")


def test_an_accounting_database_needs_continuous_provisioning():
    data = slurm_base()
    data["cluster"]["slurm"]["accountingDatabase"] = {
        "endpoint": "acct.example.com", "secretArn": "arn:aws:secretsmanager:us-east-1:111111111111:secret:acct"}
    assert len(_findings(data, "HPG-S013")) == 1
    data["cluster"]["nodeProvisioningMode"] = "Continuous"
    assert _findings(data, "HPG-S013") == []


def test_eks_rules_about_the_dependencies_chart_stay_quiet_on_slurm():
    assert _findings(slurm_base(), "HPG-D001") == []


def test_the_unified_studio_delegation_section_is_refused_on_slurm():
    """unifiedStudio (domain units, profiles, grants, projects) is deployed by the studio stacks, which a Slurm spec
    does not have: refused with what Slurm has instead, never silently ignored."""
    from tests.studio.helpers import domain

    data = slurm_base()
    data["unifiedStudio"] = {"domains": [domain()]}
    found = _findings(data, "HPG-S003")
    assert len(found) == 1 and found[0].startswith("HPG-S003 unifiedStudio: only applies to an EKS-orchestrated "
                                                   "cluster; "), found
    assert "restrictTaskView" in found[0] and "remove unifiedStudio (or set cluster.orchestrator: eks)" in found[0]
