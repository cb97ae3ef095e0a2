"""Isolation requirements the spec enforces (issue 59): teams[].contract.isolation and networkPath are accepted
where what the spec builds holds them, refused with path, value and fix where it does not (HPG-C005 to HPG-C007),
and reach the contract record, the review events, ``diff`` and ``explain``."""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional

import pytest

from hyperpod_gov.contracts import events
from hyperpod_gov.diff import governance_changes, review_events, reviews_of
from hyperpod_gov.explain import explain
from hyperpod_gov.plan.tables import contract_tags
from hyperpod_gov.spec import SpecError, parse_spec
from tests.conftest import BASE, TODAY, as_existing
from tests.contracts.helpers import connected, contract, plan_of
from tests.security.test_hostile_specs import refused_well
from tests.slurm.spec_fixtures import slurm_base

VPN = {"cidr": "10.20.0.0/16", "description": "Corporate VPN"}
SG = "sg-0123456789abcdef0"


def _team_a(d: dict, **fields: Any) -> None:
    d["teams"][0]["contract"] = contract(**fields)


def _kueue_dedicated(d: dict, **fields: Any) -> None:
    """team-a in kueue mode on the gpu group (2 x ml.p5.48xlarge, 16 GPUs) dedicated to it, owning all 16 and
    lending nothing (HPG-Q009)."""
    d["scheduler"]["mode"] = "kueue"
    d["cluster"]["instanceGroups"][0]["dedicatedTo"] = "team-a"
    d["teams"][0]["quota"] = [{"instanceType": "ml.p5.48xlarge", "accelerators": 16}]
    d["teams"][0]["sharing"] = {"strategy": "DontLend"}
    _team_a(d, isolation="dedicated-nodes", **fields)


def _one_team(d: dict) -> None:
    del d["teams"][1]
    _team_a(d, isolation="dedicated-cluster")


def _vpn(d: dict, path: str) -> None:
    d["cluster"]["apiAccess"] = {"cidrs": [VPN], "securityGroupIds": [{"id": SG, "description": "Bastions"}]}
    _team_a(d, networkPath=path)


def _public(d: dict) -> None:
    d["cluster"].update(endpointAccess="public-and-private", adminCidrs=["198.51.100.0/24"])
    _team_a(d, networkPath="198.51.100.0/24")


def _existing(d: dict) -> None:
    as_existing(d)
    _team_a(d, networkPath="10.99.0.0/16")


# (label, mutation of BASE, expected message fragment or None when the spec must be accepted)
EKS_CASES: list[tuple[str, Callable[[dict], Any], Optional[str]]] = [
    ("isolation left out is shared", lambda d: _team_a(d), None),
    ("an unknown isolation word", lambda d: _team_a(d, isolation="private"),
     "teams[0].contract.isolation: is not one of the allowed values ('private'); use one of: 'shared', "
     "'dedicated-nodes' or 'dedicated-cluster'"),
    ("networkPath names an apiAccess cidr", lambda d: _vpn(d, "10.20.0.0/16"), None),
    ("networkPath names an apiAccess security group", lambda d: _vpn(d, SG), None),
    ("networkPath console-only", lambda d: _team_a(d, networkPath="console-only"), None),
    ("networkPath names an adminCidrs entry of a public endpoint", _public, None),
    ("networkPath on an existing cluster is not checked", _existing, None),
    ("networkPath names no apiAccess entry", lambda d: _vpn(d, "10.30.0.0/16"),
     "HPG-C005 teams[0].contract.networkPath: names no network the cluster admits to its API endpoint: the team's "
     "members could not come that way ('10.30.0.0/16'); use one of: 10.20.0.0/16, sg-0123456789abcdef0, console-only"),
    ("networkPath login-nodes on an EKS cluster", lambda d: _vpn(d, "login-nodes"),
     "HPG-C005 teams[0].contract.networkPath: names the login nodes of a Slurm cluster"),
    ("networkPath in words", lambda d: _team_a(d, networkPath="the VPN"),
     "teams[0].contract.networkPath: is none of console-only, login-nodes or the cidr"),
    ("networkPath with host bits", lambda d: _team_a(d, networkPath="10.20.0.1/16"),
     "teams[0].contract.networkPath: is not an IPv4 CIDR block"),
    ("networkPath with a newline", lambda d: _team_a(d, networkPath="console-only\n"),
     "teams[0].contract.networkPath: is none of"),
    ("dedicated-nodes on the team's own dedicated flavor (kueue mode)", _kueue_dedicated, None),
    ("dedicated-nodes in task-governance mode", lambda d: _team_a(d, isolation="dedicated-nodes"),
     "HPG-C006 teams[0].contract.isolation: asks for dedicated-nodes, which task-governance mode does not enforce"),
    ("dedicated-nodes and borrowing", lambda d: (_kueue_dedicated(d), d["teams"][0].update(
        sharing={"strategy": "LendAndBorrow", "borrowLimitPercent": 50})),
     "HPG-C006 teams[0].sharing.strategy: borrows idle capacity, which is other teams' nodes, where the contract "
     "asks for dedicated-nodes ('LendAndBorrow'); set sharing.strategy: Lend or DontLend"),
    ("dedicated-nodes with a quota on shared nodes", lambda d: (_kueue_dedicated(d), d["teams"][0]["quota"].append(
        {"instanceType": "ml.g5.8xlarge", "count": 1})),
     "HPG-C006 teams[0].quota[1]: puts 1 accelerators of ml.g5.8xlarge where the contract asks for dedicated-nodes, "
     "but no group of the type is dedicated to it: it runs on nodes other teams use (1); set dedicatedTo: team-a on "
     "instance groups of ml.g5.8xlarge holding 1 accelerators, or state isolation: shared"),
    ("dedicated-nodes with a quota larger than its dedicated groups", lambda d: (
        _kueue_dedicated(d), d["cluster"]["instanceGroups"][0].update(count=1),
        d["cluster"]["instanceGroups"].append({"name": "gpu2", "instanceType": "ml.p5.48xlarge", "count": 1})),
     "HPG-C006 teams[0].quota[0]: puts 16 accelerators of ml.p5.48xlarge where the contract asks for "
     "dedicated-nodes, but its groups cluster.instanceGroups[0] hold 8: the rest runs on nodes other teams use (16); "
     "set dedicatedTo: team-a on instance groups of ml.p5.48xlarge holding 16 accelerators, lower the quota to 8"),
    ("dedicated-cluster, the only team", _one_team, None),
    ("dedicated-cluster beside another team", lambda d: _team_a(d, isolation="dedicated-cluster"),
     "HPG-C007 teams[0].contract.isolation: asks for a cluster of its own, but cluster ml also runs team-b: a "
     "namespace is not a hard boundary"),
]


@pytest.mark.parametrize("label,mutate,expected", EKS_CASES, ids=[c[0] for c in EKS_CASES])
def test_isolation_and_network_path_on_eks(label, mutate, expected):
    data = copy.deepcopy(BASE)
    mutate(data)
    refused_well(data, expected)


@pytest.mark.parametrize("strategy", ["DontLend", "Lend"])
def test_an_accepted_dedicated_nodes_team_is_admitted_on_its_dedicated_flavor_only(strategy):
    """What HPG-C006 accepts in kueue mode holds: every flavor of the team's ClusterQueue but its dedicated one has
    no quota and borrows nothing, so Kueue admits its work only onto its own nodes."""
    data = copy.deepcopy(BASE)
    _kueue_dedicated(data)
    data["teams"][0]["sharing"] = {"strategy": strategy}
    plan = plan_of(data)
    flavors = plan.cluster_queue_spec(plan.team("team-a"))["resourceGroups"][0]["flavors"]
    held = {f["name"] for f in flavors for r in f["resources"]
            if r["nominalQuota"] not in (0, "0Gi") or r.get("borrowingLimit") not in (0, "0Gi")}
    assert held == {"team-a.ml.p5.48xlarge"}


def test_dedicated_cluster_refusal_says_where_a_cluster_of_its_own_comes_from():
    data = copy.deepcopy(BASE)
    _team_a(data, isolation="dedicated-cluster")
    with pytest.raises(SpecError) as exc:
        parse_spec(data, today=TODAY)
    (issue,) = [i for i in exc.value.issues if i.path == "teams[0].contract.isolation"]
    assert issue.value == "dedicated-cluster"
    assert "another spec, or an environment whose overrides remove the other teams" in issue.fix


def _slurm_dedicated(d: dict, **fields: Any) -> None:
    """team-a owns the whole p5 partition (4 x ml.p5.48xlarge), whose only group is dedicated to it; team-b keeps
    its CPU quota."""
    d["cluster"]["instanceGroups"][2]["dedicatedTo"] = "team-a"
    d["teams"][0]["quota"] = [{"instanceType": "ml.p5.48xlarge", "count": 4}]
    d["teams"][0]["sharing"] = {"strategy": "DontLend"}
    d["teams"][1]["quota"] = [d["teams"][1]["quota"][1]]
    _team_a(d, isolation="dedicated-nodes", **fields)


SLURM_CASES: list[tuple[str, Callable[[dict], Any], Optional[str]]] = [
    ("dedicated-nodes on a partition of the team's own groups", _slurm_dedicated, None),
    ("networkPath login-nodes", lambda d: _slurm_dedicated(d, networkPath="login-nodes"), None),
    ("networkPath console-only", lambda d: _team_a(d, networkPath="console-only"), None),
    ("networkPath names an API network", lambda d: _team_a(d, networkPath="10.20.0.0/16"),
     "HPG-C005 teams[0].contract.networkPath: names a network of the EKS API, which a Slurm cluster does not have"),
    ("dedicated-nodes on a shared partition", lambda d: (_slurm_dedicated(d), d["cluster"]["instanceGroups"][2].pop(
        "dedicatedTo")),
     "HPG-C006 teams[0].quota[0]: puts ml.p5.48xlarge on partition p5, whose nodes other teams' accounts may use, "
     "where the contract asks for dedicated-nodes"),
    ("dedicated-nodes and borrowing on Slurm", lambda d: (_slurm_dedicated(d), d["teams"][0].update(
        sharing={"strategy": "LendAndBorrow", "borrowLimitPercent": 50})),
     "HPG-C006 teams[0].sharing.strategy: borrows idle capacity"),
    ("dedicated-cluster beside another Slurm team", lambda d: _team_a(d, isolation="dedicated-cluster"),
     "HPG-C007 teams[0].contract.isolation: asks for a cluster of its own, but cluster ml also runs team-b"),
]


@pytest.mark.parametrize("label,mutate,expected", SLURM_CASES, ids=[c[0] for c in SLURM_CASES])
def test_isolation_and_network_path_on_slurm(label, mutate, expected):
    data = slurm_base()
    mutate(data)
    refused_well(data, expected)


# --- the contract record -----------------------------------------------------------------------------------------

GUIDANCE_FIELDS = (
    "Owners", "Unified Studio domain unit", "Unified Studio project", "Cluster account and region", "Cluster",
    "Orchestrator", "Project role ARN", "Connection access role ARN", "Consumer or data accounts",
    "Approved workloads", "Data classification", "Namespace", "Scheduling policy", "Exception owner",
    "Monitoring expectations", "Support expectations", "Retirement expectations", "Isolation", "Network path",
)


def _page(data: dict, team: str = "team-a") -> str:
    from hyperpod_gov.contracts import render_records

    return render_records(plan_of(data))[f"{team}.md"]


def _checklist(page: str) -> dict[str, str]:
    section = page.split("## Connection checklist", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    return {cells[0][2:]: cells[1][:-2] for cells in rows[1:]}


def test_the_record_shows_every_field_of_the_guidance():
    data = connected()
    data["cluster"]["apiAccess"] = {"cidrs": [VPN]}
    data["teams"][0]["contract"].update(isolation="shared", networkPath="10.20.0.0/16")
    data["teams"][0]["contract"]["unifiedStudio"]["accessRoleArn"] = "arn:aws:iam::111111111111:role/studio-access"
    fields = _checklist(_page(data))
    assert tuple(fields) == GUIDANCE_FIELDS
    assert fields["Owners"] == "business lead@example.com, operations ops@example.com, cost finance@example.com"
    assert fields["Unified Studio domain unit"] == "3bc7r1dkxeo8hj"
    assert fields["Unified Studio project"] == "5b3jcjsy4ar7zr (domain dzd_4p9n6sw4qt9xgn)"
    assert fields["Cluster account and region"] == "111111111111, us-east-1"
    assert fields["Orchestrator"] == "Amazon EKS, HyperPod task governance"
    assert fields["Connection access role ARN"] == "arn:aws:iam::111111111111:role/studio-access"
    assert fields["Consumer or data accounts"] == "222222222222"
    assert fields["Namespace"] == "`hyperpod-ns-team-a`"
    assert fields["Scheduling policy"].startswith("owns 8 GPUs (ml.p5.48xlarge); sharing LendAndBorrow")
    assert fields["Isolation"] == "shared: the team's work shares nodes with other teams' work"
    assert fields["Network path"] == "private endpoint on 443 from 10.20.0.0/16 (Corporate VPN) (cluster.apiAccess)"
    assert "Nothing missing." in _page(data)


def test_the_record_flags_each_missing_field():
    data = connected()
    data["teams"][0]["contract"] = contract(unifiedStudio=connected()["teams"][0]["contract"]["unifiedStudio"])
    for key in ("exceptionOwner", "monitoring", "support", "retirement"):
        del data["teams"][0]["contract"][key]
    data["teams"][0]["contract"]["approvedWorkloads"] = []
    del data["teams"][0]["contract"]["unifiedStudio"]["domainUnitId"]
    page = _page(data)
    fields = _checklist(page)
    absent = ["Unified Studio domain unit", "Connection access role ARN", "Approved workloads", "Exception owner",
              "Monitoring expectations", "Support expectations", "Retirement expectations", "Network path"]
    assert [label for label, value in fields.items() if value == "**missing**"] == absent
    assert f"**Missing ({len(absent)}):** {', '.join(absent)}." in page
    assert "(the default: the contract does not state it)" in fields["Isolation"]


def test_a_team_without_a_contract_misses_every_contract_field():
    data = connected()
    del data["teams"][1]["contract"]
    fields = _checklist(_page(data, "team-b"))
    assert fields["Unified Studio project"] == "not applicable: no Unified Studio project"
    assert [k for k, v in fields.items() if v == "**missing**"] == [
        "Owners", "Approved workloads", "Data classification", "Exception owner", "Monitoring expectations",
        "Support expectations", "Retirement expectations", "Isolation", "Network path"]


def test_the_record_says_where_dedicated_nodes_hold():
    data = connected()
    _kueue_dedicated(data, networkPath="console-only")
    fields = _checklist(_page(data))
    assert fields["Isolation"] == ("dedicated-nodes: its work runs only on instance groups gpu (dedicatedTo the "
                                   "team; HPG-C006)")
    assert fields["Network path"].startswith("console-only: the SageMaker console and Unified Studio")


def test_a_slurm_record_names_the_slurm_scope_and_no_eks_term():
    from tests.contracts.test_slurm_record import EKS_TERMS

    data = slurm_base()
    _slurm_dedicated(data, networkPath="login-nodes")
    page = _page(data)
    fields = _checklist(page)
    assert fields["Slurm scope"] == "account `team-a` (group `team-a`), partitions `p5`"
    assert fields["Isolation"] == "dedicated-nodes: partitions `p5` admit only the team's accounts"
    assert fields["Network path"] == "login-nodes: SSM sessions to the cluster's login nodes"
    assert fields["Orchestrator"] == "Slurm (SlurmConfigStrategy Merge)"
    checklist = page.split("## Connection checklist", 1)[1].split("\n## ", 1)[0]
    assert [t for t in EKS_TERMS if t in checklist] == []
    assert "  team-a: dedicated-nodes; network path login-nodes\n" in explain(plan_of(data))


# --- review events, diff, explain, tags ----------------------------------------------------------------------------

def _changed(mutate_old: Callable[[dict], Any], mutate_new: Callable[[dict], Any]):
    old, new = connected(), connected()
    for data in (old, new):
        data["cluster"]["apiAccess"] = {"cidrs": [VPN]}
        data["scheduler"]["mode"] = "kueue"
        data["cluster"]["instanceGroups"][0]["dedicatedTo"] = "team-a"
        data["teams"][0]["quota"] = [{"instanceType": "ml.p5.48xlarge", "accelerators": 16}]
        data["teams"][0]["sharing"] = {"strategy": "DontLend"}
    mutate_old(old)
    mutate_new(new)
    return plan_of(old), plan_of(new)


def _set(**fields: Any) -> Callable[[dict], Any]:
    return lambda d: d["teams"][0]["contract"].update(**fields)


def test_a_change_of_isolation_or_network_path_calls_for_a_review():
    old, new = _changed(_set(isolation="dedicated-nodes"), _set(networkPath="10.20.0.0/16"))
    assert events(old, new) == [
        "team team-a: review (isolation or network path): isolation dedicated-nodes -> shared",
        "team team-a: review (isolation or network path): network path none -> 10.20.0.0/16",
    ]
    assert events(*_changed(_set(isolation="shared"), lambda d: None)) == []  # stating the default changes nothing


def test_diff_marks_loosening_isolation_as_a_privilege_change_with_its_review():
    old, new = _changed(_set(isolation="dedicated-nodes"), _set(networkPath="console-only"))
    changes = [c for c in governance_changes(old, new) if c.path.startswith("teams[].contract.")]
    assert [c.words for c in changes] == [
        "team team-a isolation: dedicated-nodes -> shared (privilege: the team's work may now run beside other "
        "teams' work)",
        "team team-a network path: not stated -> console-only",
    ]
    reviews = review_events(old, new)
    assert [r.detail for r in reviews_of(changes[0], reviews)] == ["isolation dedicated-nodes -> shared",
                                                                   "network path none -> console-only"]
    tighter = [c for c in governance_changes(new, old) if c.path == "teams[].contract.isolation"]
    assert [c.privilege for c in tighter] == [None]  # shared -> dedicated-nodes narrows


def test_explain_lists_isolation_only_when_a_contract_states_it():
    assert "Isolation and network path" not in explain(plan_of(connected()))
    data = connected()
    data["teams"][1]["contract"]["networkPath"] = "console-only"
    text = explain(plan_of(data))
    assert "  team-a: shared; network path not stated\n" in text
    assert "  team-b: shared; network path console-only\n" in text


def test_quota_tags_carry_isolation_and_network_path_only_when_stated():
    plain = plan_of(connected()).team("team-a")
    assert not any(t["Key"] in ("hyperpod-gov:isolation", "hyperpod-gov:network-path") for t in contract_tags(plain))
    data = connected()
    _one_team(data)
    data["teams"][0]["contract"].update(networkPath="console-only")
    tags = {t["Key"]: t["Value"] for t in contract_tags(plan_of(data).team("team-a"))}
    assert (tags["hyperpod-gov:isolation"], tags["hyperpod-gov:network-path"]) == ("dedicated-cluster", "console-only")
