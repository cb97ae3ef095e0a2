"""Per-cluster team overrides (teams[].clusters.<cluster>): merged onto the team for that member only, before
validation, as an environment's overrides merge; a member's issue in an overridden value leads back to the override;
a team on an EKS and a Slurm cluster leaves its EKS-only keys (HPG-S003) on the Slurm one; the name and quota are not
overridden, and HPG-F006 refuses an override of access or priorityClasses on a Kubernetes cluster."""

from __future__ import annotations

import pytest

from hyperpod_gov.plan.fleet import build_fleet
from hyperpod_gov.spec import SpecError
from hyperpod_gov.spec.fleet import _override_path, parse_fleet
from tests.conftest import ROOT, TODAY

# research, on use1-train and usw2-train (EKS) and on the manager, also on the Slurm cluster use1-hpc
SLURM = {"access": None, "images": None, "workloadIdentities": None, "slurm": {"users": ["carol"]}}


def _on_slurm(data, overrides=None):
    research = data["teams"][0]
    research["quota"]["use1-hpc"] = [{"instanceType": "ml.g5.2xlarge", "count": 2}]
    if overrides is not None:
        research["clusters"] = overrides
    return data


def _build(data):
    return build_fleet(parse_fleet(data, today=TODAY, base_dir=ROOT / "examples"), today=TODAY)


def _errors(data):
    try:
        _build(data)
    except SpecError as exc:
        return list(exc.issues)
    raise AssertionError("the fleet passed")


def test_without_overrides_a_team_on_eks_and_slurm_fails_on_the_slurm_member(fleet_data):
    issues = _errors(_on_slurm(fleet_data))
    assert {(i.rule, i.path) for i in issues} == {("HPG-S003", "teams[0].access"), ("HPG-S003", "teams[0].images"),
                                                  ("HPG-S003", "teams[0].workloadIdentities")}
    assert all(i.problem.startswith("on cluster use1-hpc:") for i in issues)


def test_the_override_is_merged_onto_that_member_only(fleet_data):
    fleet = _build(_on_slurm(fleet_data, {"use1-hpc": SLURM}))
    hpc = fleet.plans["use1-hpc"].team("research")
    assert hpc.slurm.users == ("carol",) and hpc.viewers == () and hpc.image_prefixes == () and hpc.identities == ()
    assert hpc.fair_share_weight == 100 and hpc.slurm.guaranteed[0].tres == (("node", 2),)  # the team's own keys
    for eks in ("use1-train", "usw2-train", "use1-mgr"):
        team = fleet.plans[eks].team("research")
        assert team.slurm is None and team.viewers == ("arn:aws:iam::111111111111:role/ResearchViewer",)
        assert team.image_prefixes
    assert fleet.fleet.team_clusters["research"] == ("use1-train", "usw2-train", "use1-mgr", "use1-hpc")


def test_eks_only_keys_may_be_given_on_the_eks_clusters_instead(fleet_data):
    research = fleet_data["teams"][0]
    images = research.pop("images")
    overrides = {"use1-hpc": {"access": None, "workloadIdentities": None}, "use1-train": {"images": images},
                 "usw2-train": {"images": images[:1]}}  # not an identity key: may differ per cluster
    fleet = _build(_on_slurm(fleet_data, overrides))
    assert fleet.plans["usw2-train"].team("research").image_prefixes != \
        fleet.plans["use1-train"].team("research").image_prefixes


@pytest.mark.parametrize("override, path", [
    ({"use1-hpc": {**SLURM, "slurm": {"users": ["Bad User"]}}}, "teams[0].clusters.use1-hpc.slurm.users"),
    ({"use1-hpc": {**SLURM, "bogus": 1}}, "teams[0].clusters.use1-hpc.bogus"),
    ({"use1-hpc": SLURM, "use1-train": {"egress": [{"cidr": "nope", "ports": [443]}]}},
     "teams[0].clusters.use1-train.egress[0].cidr"),
])
def test_a_members_issue_in_an_overridden_value_leads_back_to_the_override(fleet_data, override, path):
    issues = _errors(_on_slurm(fleet_data, override))
    assert [i.path for i in issues] == [path], [str(i) for i in issues]


def test_an_issue_in_the_teams_own_key_keeps_its_path(fleet_data):
    data = _on_slurm(fleet_data, {"use1-hpc": SLURM})
    data["teams"][0]["fairShareWeight"] = 1000
    assert {i.path for i in _errors(data)} == {"teams[0].fairShareWeight"}


@pytest.mark.parametrize("key, value", [("access", {"viewers": ["arn:aws:iam::111111111111:role/Other"]}),
                                        ("priorityClasses", [])])
def test_an_override_of_an_identity_key_on_a_kubernetes_cluster_breaks_f006(fleet_data, key, value):
    issues = _errors(_on_slurm(fleet_data, {"use1-hpc": SLURM, "usw2-train": {key: value}}))
    assert [(i.rule, i.path, i.value) for i in issues] == [("HPG-F006", f"teams[0].clusters.usw2-train.{key}", value)]
    assert "the same on every Kubernetes cluster it is on" in issues[0].problem
    assert issues[0].fix.startswith(f"set {key} on the team (teams[0].{key})")


@pytest.mark.parametrize("override, path, problem", [
    ({"use1-hpc": {**SLURM, "quota": []}}, "teams[0].clusters.use1-hpc.quota", "teams[0].quota.use1-hpc"),
    ({"use1-hpc": {**SLURM, "name": "other"}}, "teams[0].clusters.use1-hpc.name", "the team's name"),
    ({"use1-hpc": {**SLURM, "clusters": {}}}, "teams[0].clusters.use1-hpc.clusters", "do not nest"),
    ({"use1-hcp": SLURM}, "teams[0].clusters.use1-hcp", "is not a cluster of the fleet"),
])
def test_an_override_of_the_teams_name_or_quota_or_of_no_cluster_is_refused(fleet_data, override, path, problem):
    issues = _errors(_on_slurm(fleet_data, override))
    assert [i.path for i in issues] == [path] and problem in issues[0].problem + issues[0].fix


def test_an_override_on_a_cluster_the_team_is_not_on_is_refused(fleet_data):
    fleet_data["teams"][2]["clusters"] = {"use1-train": {"active": False}}  # hpc: only on use1-hpc
    (issue,) = _errors(fleet_data)
    assert issue.path == "teams[2].clusters.use1-train" and "which it is not on" in issue.problem
    assert issue.fix.startswith("add quota.use1-train")


def test_an_acknowledgement_of_an_overridden_value_reaches_that_member_only(fleet_data):
    data = _on_slurm(fleet_data, {"use1-hpc": {**SLURM, "sharing": {"borrowLimitPercent": 40}}})
    path = "teams[0].clusters.use1-hpc.sharing.borrowLimitPercent"
    assert ("HPG-S009", path) in {(w.rule, w.path) for w in _build(data).warnings}
    data["acknowledgements"] = [{"id": "HPG-S009", "path": path, "reason": "research's Slurm cap is fixed on purpose"}]
    assert ("HPG-S009", path) not in {(w.rule, w.path) for w in _build(data).warnings}


def test_the_member_file_holds_the_merged_team(fleet_data, tmp_path):
    import yaml

    from stacks.fleet_member import write_member

    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(_on_slurm(fleet_data, {"use1-hpc": SLURM}), sort_keys=False))
    out = tmp_path / "member.yaml"
    write_member(str(path), None, "use1-hpc", str(out))
    (research,) = [t for t in yaml.safe_load(out.read_text())["teams"] if t["name"] == "research"]
    assert research["slurm"]["users"] == ["carol"] and "access" not in research and "clusters" not in research


def test_a_named_list_maps_by_name_and_a_value_the_override_does_not_give_is_the_teams():
    team = {"name": "t", "quota": {"c": []}, "items": [{"name": "a", "v": 1}, {"name": "b", "v": 1}],
            "clusters": {"c": {"items": [{"name": "b", "v": 2}], "other": {"x": [1, 2]}}}}
    assert _override_path(team, "c", ".items[1].v") == ".items[0].v"
    assert _override_path(team, "c", ".items[0].v") is None
    assert _override_path(team, "c", ".other.x[1]") == ".other.x[1]"
    assert _override_path(team, "c", ".fairShareWeight") is None
    assert _override_path(team, "d", ".items[1].v") is None
