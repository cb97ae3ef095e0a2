"""``diff`` marks the end of a node group's dedication (``instanceGroups[].dedicatedTo`` removed or moved) as a
privilege change: other teams' work may then land on nodes that were one team's (issue 54: a mutant that dropped
the mark survived)."""

from __future__ import annotations

import copy

import pytest

from hyperpod_gov.diff import governance_changes, governance_diff
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY
from tests.slurm.spec_fixtures import plan_of, slurm_base

WHY = "nodes that were one team's now take other teams' work"
TO_TEAM_A = "team team-a (label and NoSchedule taint hyperpod-gov.io/dedicated=team-a)"


def _dedicated() -> dict:
    """BASE in kueue mode with the gpu group (2 x ml.p5.48xlarge, 16 GPUs) dedicated to team-a, which owns all
    16 GPUs and lends nothing (HPG-Q009)."""
    data = copy.deepcopy(BASE)
    data["scheduler"]["mode"] = "kueue"
    data["cluster"]["instanceGroups"][0]["dedicatedTo"] = "team-a"
    data["teams"][0]["quota"] = [{"instanceType": "ml.p5.48xlarge", "accelerators": 16}]
    data["teams"][0]["sharing"] = {"strategy": "DontLend"}
    return data


def _plan(data: dict):
    return build_plan(parse_spec(data, today=TODAY))


@pytest.fixture(scope="module")
def dedicated():
    return _plan(_dedicated())


@pytest.fixture(scope="module")
def shared():
    data = _dedicated()
    del data["cluster"]["instanceGroups"][0]["dedicatedTo"]
    return _plan(data)


def test_ending_a_dedication_is_named_and_marked_as_privilege(dedicated, shared):
    assert governance_diff(dedicated, shared) == [
        "dedicated groups: - ml.p5.48xlarge x 2 (gpu) to team-a, Kueue flavor team-a.ml.p5.48xlarge",
        "instance group gpu node taints: - hyperpod-gov.io/dedicated=team-a:NoSchedule",
        f"instance group gpu dedicated to: {TO_TEAM_A} -> every team (privilege: {WHY})",
    ]


def test_the_structured_change_carries_the_same_privilege_reason(dedicated, shared):
    marked = [(c.view, c.key, c.path, c.privilege) for c in governance_changes(dedicated, shared) if c.privilege]
    assert marked == [("instance group", "gpu", "cluster.instanceGroups[].dedicatedTo", WHY)]


def test_dedicating_a_group_narrows_privilege_and_carries_no_mark(dedicated, shared):
    lines = governance_diff(shared, dedicated)
    assert f"instance group gpu dedicated to: every team -> {TO_TEAM_A}" in lines
    assert [line for line in lines if "(privilege:" in line] == []


def test_moving_a_dedication_to_another_team_is_marked_as_privilege(dedicated):
    data = _dedicated()
    data["cluster"]["instanceGroups"][0]["dedicatedTo"] = "team-b"
    data["teams"][0]["quota"] = [{"instanceType": "ml.g5.8xlarge", "count": 2}]
    data["teams"][1]["quota"] = [{"instanceType": "ml.p5.48xlarge", "accelerators": 16}]
    lines = governance_diff(dedicated, _plan(data))
    assert (f"instance group gpu dedicated to: {TO_TEAM_A} -> team team-b (label and NoSchedule taint "
            f"hyperpod-gov.io/dedicated=team-b) (privilege: {WHY})") in lines


def test_ending_a_slurm_dedication_marks_the_group_and_the_partition_it_opens():
    data = slurm_base()
    data["cluster"]["instanceGroups"][3]["dedicatedTo"] = "team-b"  # cpu: 8 x ml.c5.4xlarge, all team-b's
    data["teams"][1]["quota"] = [{"instanceType": "ml.c5.4xlarge", "count": 8}]
    data["teams"][0]["sharing"]["absoluteBorrowLimits"] = [{"instanceType": "ml.c5.4xlarge", "count": 2}]
    opened = copy.deepcopy(data)
    del opened["cluster"]["instanceGroups"][3]["dedicatedTo"]
    lines = governance_diff(plan_of(data), plan_of(opened))
    assert [line for line in lines if "(privilege:" in line] == [
        "instance group cpu dedicated to: team team-b (label and NoSchedule taint hyperpod-gov.io/dedicated=team-b) "
        f"-> every team (privilege: {WHY})",
        "slurm partition: + cpu (ml.c5.4xlarge): AllowAccounts=team-a_cpu_borrow,team-b_cpu "
        "AllowQos=acme_standard,team-a_cpu_borrow,training,urgent (privilege: these accounts and QOS may run on the "
        "partition's nodes)",
    ]


# issue 55: posix.sh gives a team's data directory to its group as root, so moving it is a privilege change.
DATA_WHY = ("the team's group is given this directory of the shared file system (owner group, mode 2770, set as "
            "root); the old one stays the team's")


def test_moving_a_slurm_data_directory_is_marked_as_privilege():
    moved = slurm_base()
    moved["teams"][1]["slurm"]["dataPath"] = "/fsx/projects/team-b"
    lines = governance_diff(plan_of(slurm_base()), plan_of(moved))
    assert [line for line in lines if "data directory" in line] == [
        f"team team-b (Slurm) data directory: /fsx/data/team-b -> /fsx/projects/team-b (privilege: {DATA_WHY})"]
    marked = [(c.key, c.path, c.privilege) for c in governance_changes(plan_of(slurm_base()), plan_of(moved))
              if c.privilege]
    assert marked == [("team-b", "teams[].slurm.dataPath", DATA_WHY)]


def test_an_unchanged_data_directory_carries_no_mark():
    other = slurm_base()
    other["teams"][1]["slurm"]["users"] = ["carol"]  # the same as the base: nothing changes
    assert governance_diff(plan_of(slurm_base()), plan_of(other)) == []


# issue 55: on an existing cluster, leaving the enforcer preflight checks (the vpc-cni add-on) weakens isolation.
ENFORCEMENT_WHY = "nothing hyperpod-gov checks now enforces the teams' NetworkPolicies: a team's pods may reach the others'"
CILIUM = "Cilium 1.16 (kube-system); the platform team's default-deny test passes"


def _existing(enforcement=None):
    from hyperpod_gov.spec import read_yaml
    from tests.conftest import EXAMPLES

    data = copy.deepcopy(read_yaml(EXAMPLES / "existing.yaml"))
    data["cluster"]["existing"].pop("networkPolicyEnforcement", None)
    if enforcement is not None:
        data["cluster"]["existing"]["networkPolicyEnforcement"] = enforcement
    return _plan(data)


@pytest.fixture(scope="module")
def enforcements():
    return {"vpc-cni": _existing({"enforcer": "vpc-cni"}), "other": _existing({"enforcer": "other", "reason": CILIUM}),
            "unstated": _existing()}


@pytest.mark.parametrize("old, new, marked", [
    ("vpc-cni", "other", True), ("vpc-cni", "unstated", True), ("other", "unstated", True),
    ("other", "vpc-cni", False), ("unstated", "vpc-cni", False), ("unstated", "other", False),
])
def test_leaving_the_checked_network_policy_enforcer_is_marked_as_privilege(enforcements, old, new, marked):
    changes = [c for c in governance_changes(enforcements[old], enforcements[new])
               if c.path == "cluster.existing.networkPolicyEnforcement"]
    assert len(changes) == 1
    assert changes[0].privilege == (ENFORCEMENT_WHY if marked else None)


def test_the_enforcement_change_is_worded_in_the_diff(enforcements):
    assert governance_diff(enforcements["vpc-cni"], enforcements["other"]) == [
        "NetworkPolicy enforcement: the cluster's vpc-cni add-on (enableNetworkPolicy, strict mode: preflight checks "
        f"it) -> another network plugin, unchecked: {CILIUM} (privilege: {ENFORCEMENT_WHY})"]


# --- the VPC endpoints' accounts (issue 55) -----------------------------------------------------------------------

PERIMETER_WHY = ("this account's principals may now use the VPC endpoints, and the cluster's pods may reach its "
                 "resources through them")


def _with_consumer(data: dict) -> dict:
    data = copy.deepcopy(data)
    data["accounts"]["consumers"].append({"name": "partner", "id": "555555555555", "region": "us-east-1"})
    return data


def test_an_unused_consumer_account_widens_the_endpoints_and_is_marked_as_privilege():
    # Only the account is added: no identity uses it, so no stack, role or team row changes; the endpoints'
    # policies are all that widen (before issue 55, diff --governance-only said "none").
    old, new = _plan(BASE), _plan(_with_consumer(BASE))
    assert governance_diff(old, new) == [f"endpoint policies' accounts: + 555555555555 (privilege: {PERIMETER_WHY})"]
    [change] = governance_changes(old, new)
    assert (change.view, change.path, change.kind, change.new, change.privilege) == (
        "cluster", "accounts.consumers|accounts.trusted", "added", "555555555555", PERIMETER_WHY)


def test_removing_a_consumer_account_narrows_the_endpoints_without_a_mark():
    assert governance_diff(_plan(_with_consumer(BASE)), _plan(BASE)) == ["endpoint policies' accounts: - 555555555555"]


def test_a_trusted_account_is_marked_for_both_what_it_widens():
    data = copy.deepcopy(BASE)
    data["accounts"]["trusted"] = ["666666666666"]
    lines = [line for line in governance_diff(_plan(BASE), _plan(data)) if "(privilege:" in line]
    assert lines == [
        "trusted accounts: + 666666666666 (privilege: principals of this account may now be given cluster access)",
        f"endpoint policies' accounts: + 666666666666 (privilege: {PERIMETER_WHY})",
    ]
