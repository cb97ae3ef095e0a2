"""A fleet spec (issue 60): expansion into member specs, structure errors, member errors mapped back to the fleet
spec, environments composing with clusters, and single-cluster specs read as before."""

from __future__ import annotations

import pytest
import yaml

from hyperpod_gov.spec import SpecError, load_spec
from hyperpod_gov.spec.fleet import fleet_members, is_fleet, load_fleet, member_path, parse_fleet
from tests.conftest import EXAMPLES, TODAY
from tests.fleet.conftest import cluster_index


def _issues(data, **kwargs):
    with pytest.raises(SpecError) as exc:
        parse_fleet(data, today=TODAY, **kwargs)
    return exc.value.issues


def test_each_cluster_is_a_member_named_fleet_dash_cluster(fleet_data):
    members = fleet_members(fleet_data)
    assert list(members) == ["use1-train", "usw2-train", "use1-mgr", "use1-hpc"]
    assert [m["name"] for m in members.values()] == ["acme-use1-train", "acme-usw2-train", "acme-use1-mgr",
                                                     "acme-use1-hpc"]
    assert all("clusters" not in m and "fleet" not in m for m in members.values())
    assert members["usw2-train"]["cluster"]["name"] == "acme-usw2-train"


def test_a_clusters_accounts_merge_onto_the_fleets(fleet_data):
    members = fleet_members(fleet_data)
    assert members["usw2-train"]["accounts"]["capacity"] == {"id": "111111111111", "region": "us-west-2"}
    assert members["use1-train"]["accounts"]["capacity"] == {"id": "111111111111", "region": "us-east-1"}


def test_a_team_gets_its_quota_of_each_cluster_and_is_absent_where_it_has_none(fleet_data):
    members = fleet_members(fleet_data)
    assert [t["name"] for t in members["use1-train"]["teams"]] == ["research", "applied"]
    assert [t["name"] for t in members["usw2-train"]["teams"]] == ["research", "applied"]
    assert [t["name"] for t in members["use1-hpc"]["teams"]] == ["hpc"]
    # the dispatch manager holds every team on a worker, owning nothing there
    assert [(t["name"], t["quota"]) for t in members["use1-mgr"]["teams"]] == [("research", []), ("applied", [])]
    assert members["usw2-train"]["teams"][0]["quota"] == [{"instanceType": "ml.p5.48xlarge", "accelerators": 8}]


def test_a_clusters_scheduler_replaces_the_fleets_and_others_keep_it(fleet_data):
    members = fleet_members(fleet_data)
    assert members["use1-train"]["scheduler"]["mode"] == "kueue"
    assert "mode" not in members["use1-hpc"]["scheduler"]


def test_borrow_limits_of_types_a_cluster_lacks_are_left_out(fleet_data):
    research = fleet_data["teams"][0]
    research["quota"]["use1-hpc"] = [{"instanceType": "ml.g5.2xlarge", "count": 1}]
    research["sharing"] = {"strategy": "LendAndBorrow", "absoluteBorrowLimits": [
        {"instanceType": "ml.p5.48xlarge", "accelerators": 4}, {"instanceType": "ml.g5.2xlarge", "count": 1}]}
    members = fleet_members(fleet_data)
    assert members["use1-train"]["teams"][0]["sharing"]["absoluteBorrowLimits"] == [
        {"instanceType": "ml.p5.48xlarge", "accelerators": 4}]
    assert members["use1-hpc"]["teams"][0]["sharing"]["absoluteBorrowLimits"] == [
        {"instanceType": "ml.g5.2xlarge", "count": 1}]


def test_the_example_fleet_loads_with_its_members_and_dispatch():
    fleet = load_fleet(EXAMPLES / "fleet.yaml", today=TODAY)
    assert fleet.name == "acme" and fleet.clusters == ("use1-train", "usw2-train", "use1-mgr", "use1-hpc")
    assert fleet.members["usw2-train"].accounts.capacity.region == "us-west-2"
    assert fleet.members["use1-hpc"].cluster.orchestrator == "slurm"
    assert fleet.team_clusters == {"research": ("use1-train", "usw2-train", "use1-mgr"),
                                   "applied": ("use1-train", "usw2-train", "use1-mgr"),
                                   "hpc": ("use1-hpc",)}
    assert fleet.dispatch.manager == "use1-mgr" and fleet.dispatch.workers == ("use1-train", "usw2-train")


def test_is_fleet_tells_a_fleet_from_a_single_cluster_spec(fleet_data):
    assert is_fleet(fleet_data)
    assert not is_fleet(yaml.safe_load((EXAMPLES / "startup.yaml").read_text()))
    assert not is_fleet(["clusters"])


def test_a_single_cluster_spec_loads_as_before():
    spec = load_spec(EXAMPLES / "startup.yaml")
    assert spec.name == "startup" and spec.cluster.name == "gpu-cluster"


# --- member errors, mapped back to the fleet spec -------------------------------------------------------------


def test_a_members_cluster_error_points_into_its_clusters_item(fleet_data):
    i = cluster_index(fleet_data, "usw2-train")
    fleet_data["clusters"][i]["cluster"]["instanceGroups"][0]["count"] = -1
    issues = _issues(fleet_data)
    paths = [x.path for x in issues]
    assert f"clusters[{i}].cluster.instanceGroups[0].count" in paths, paths
    assert any("on cluster usw2-train" in x.problem for x in issues)


def test_a_quota_too_large_for_its_cluster_names_that_cluster(fleet_data):
    # applied is the second team of use1-train; research has 16 there: 16 + 40 > 32 GPUs
    fleet_data["teams"][1]["quota"]["use1-train"][0]["accelerators"] = 40
    issues = _issues(fleet_data)
    assert [x.path for x in issues] == ["teams[*].quota.use1-train[ml.p5.48xlarge]"]
    assert "on cluster use1-train: quotas on ml.p5.48xlarge add up to 56 accelerators" in issues[0].problem


def test_a_team_error_on_a_cluster_maps_the_members_team_index_to_the_fleets(fleet_data):
    # hpc is the only team of use1-hpc (member teams[0]) but the third of the fleet (teams[2])
    assert member_path("teams[0].slurm.users", fleet_data, "use1-hpc") == "teams[2].slurm.users"
    assert member_path("teams[0].quota[0].count", fleet_data, "use1-hpc") == "teams[2].quota.use1-hpc[0].count"
    assert member_path("teams[0].quota", fleet_data, "use1-hpc") == "teams[2].quota.use1-hpc"
    # applied is use1-train's second team and the fleet's second
    assert member_path("teams[1].quota[0]", fleet_data, "use1-train") == "teams[1].quota.use1-train[0]"


def test_accounts_map_to_the_cluster_only_where_it_overrides_them(fleet_data):
    i = cluster_index(fleet_data, "usw2-train")
    assert member_path("accounts.capacity.region", fleet_data, "usw2-train") == f"clusters[{i}].accounts.capacity.region"
    assert member_path("accounts.trusted[0]", fleet_data, "usw2-train") == "accounts.trusted[0]"
    assert member_path("name", fleet_data, "usw2-train") == "name"
    assert member_path("scheduler.mode", fleet_data, "usw2-train") == "scheduler.mode"
    hpc = cluster_index(fleet_data, "use1-hpc")
    assert member_path("scheduler.idleCompute", fleet_data, "use1-hpc") == f"clusters[{hpc}].scheduler.idleCompute"


def test_an_issue_found_alike_on_several_clusters_is_reported_once(fleet_data):
    fleet_data["scheduler"]["idleCompute"] = "round-robin"
    issues = [x for x in _issues(fleet_data) if x.path == "scheduler.idleCompute"]
    assert len(issues) == 1 and "on clusters use1-train, usw2-train, use1-mgr" in issues[0].problem


# --- the fleet-level keys -------------------------------------------------------------------------------------


def test_a_typo_in_a_clusters_item_gets_path_value_and_fix(fleet_data):
    fleet_data["clusters"][0]["acounts"] = {}
    (issue,) = _issues(fleet_data)
    assert issue.path == "clusters[0].acounts" and "did you mean 'accounts'" in issue.fix


def test_a_typo_in_fleet_dispatch_gets_path_and_fix(fleet_data):
    fleet_data["fleet"]["dispatch"]["worker"] = ["use1-train"]
    issues = _issues(fleet_data)
    assert "fleet.dispatch.worker" in [x.path for x in issues]
    assert any("did you mean 'workers'" in x.fix for x in issues)


def test_a_top_level_typo_in_a_fleet_spec_is_refused_once(fleet_data):
    fleet_data["flet"] = {}
    (issue,) = _issues(fleet_data)
    assert issue.path == "flet" and "did you mean 'fleet'" in issue.fix


def test_cluster_beside_clusters_is_refused(fleet_data):
    fleet_data["cluster"] = fleet_data["clusters"][0]["cluster"]
    (issue,) = _issues(fleet_data)
    assert issue.path == "cluster" and "clusters[]" in issue.problem


def test_a_list_quota_in_a_fleet_says_quota_is_per_cluster(fleet_data):
    fleet_data["teams"][0]["quota"] = [{"instanceType": "ml.p5.48xlarge", "accelerators": 8}]
    (issue,) = _issues(fleet_data)
    assert issue.path == "teams[0].quota" and "per cluster" in issue.problem


def test_a_quota_key_that_names_no_cluster_is_refused_with_the_nearest(fleet_data):
    fleet_data["teams"][0]["quota"]["usw2-trian"] = fleet_data["teams"][0]["quota"].pop("usw2-train")
    (issue,) = _issues(fleet_data)
    assert issue.path == "teams[0].quota.usw2-trian" and "'usw2-train'" in issue.fix


def test_a_team_on_no_cluster_is_refused(fleet_data):
    fleet_data["teams"][0]["quota"] = {}
    (issue,) = _issues(fleet_data)
    assert issue.path == "teams[0].quota" and "no cluster" in issue.problem


def test_a_clusters_item_that_is_not_a_mapping_is_an_issue_not_a_traceback(fleet_data):
    fleet_data["clusters"][1] = "usw2-train"
    (issue,) = _issues(fleet_data)
    assert issue.path == "clusters[1]" and issue.fix == "write a mapping with keys: accounts, cluster, name, ring, scheduler"


def test_clusters_must_not_be_empty(fleet_data):
    fleet_data["clusters"] = []
    issues = _issues(fleet_data)
    assert issues[0].path == "clusters"


# --- environments compose with clusters -----------------------------------------------------------------------


def test_an_environment_overrides_a_cluster_by_name_before_the_fleet_expands(fleet_data, tmp_path):
    fleet_data["environments"] = [{"name": "stg", "overrides": {"clusters": [
        {"name": "usw2-train", "cluster": {"instanceGroups": [{"name": "gpu-worker", "count": 1}]}}]}}]
    fleet_data["teams"][0]["quota"]["usw2-train"] = [{"instanceType": "ml.p5.48xlarge", "accelerators": 4}]
    fleet_data["teams"][1]["quota"]["usw2-train"] = [{"instanceType": "ml.p5.48xlarge", "accelerators": 4}]
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(fleet_data, sort_keys=False))
    fleet = load_fleet(path, environment="stg", today=TODAY)
    assert fleet.name == "acme-stg"
    assert fleet.members["usw2-train"].name == "acme-stg-usw2-train"
    assert fleet.members["usw2-train"].cluster.instance_groups[0].count == 1
    assert fleet.members["use1-train"].cluster.instance_groups[0].count == 4
    base = load_fleet(path, today=TODAY)
    assert base.members["usw2-train"].cluster.instance_groups[0].count == 2


def test_a_quota_entry_error_points_to_that_clusters_list(fleet_data):
    fleet_data["teams"][2]["quota"]["use1-hpc"][0]["count"] = -3
    issues = _issues(fleet_data)
    assert "teams[2].quota.use1-hpc[0].count" in [x.path for x in issues], [str(x) for x in issues]


def test_load_spec_of_a_fleet_says_to_read_it_as_a_fleet():
    with pytest.raises(SpecError) as exc:
        load_spec(EXAMPLES / "fleet.yaml")
    (issue,) = exc.value.issues
    assert issue.path == "clusters" and "fleet spec" in issue.problem and "load_fleet" in issue.fix


def test_a_single_cluster_command_on_a_fleet_says_which_commands_read_one(capsys):
    from hyperpod_gov.cli import main

    assert main(["onboard", str(EXAMPLES / "fleet.yaml"), "research"]) == 1
    err = capsys.readouterr().err
    assert "clusters: makes this a fleet spec" in err and "Traceback" not in err


# --- acknowledgements with paths into the fleet spec ---------------------------------------------------------


def test_an_acknowledgement_of_one_clusters_warning_covers_that_cluster_only(fleet_data):
    mgr = cluster_index(fleet_data, "use1-mgr")
    fleet_data["acknowledgements"] = [{"id": "HPG-D001", "reason": "the manager runs no GPU work",
                                       "path": f"clusters[{mgr}].cluster"}]
    fleet = parse_fleet(fleet_data, today=TODAY)
    warned = {i.path for i in fleet.warnings if i.rule == "HPG-D001"}
    assert warned == {"clusters[0].cluster.dependenciesChart", "clusters[1].cluster.dependenciesChart"}
    members = fleet_members(fleet_data)
    assert members["use1-mgr"]["acknowledgements"][0]["path"] == "cluster"
    assert members["use1-train"]["acknowledgements"] == []


def test_an_acknowledgement_of_a_teams_quota_on_one_cluster_reads_as_the_members_path(fleet_data):
    fleet_data["acknowledgements"] = [
        {"id": "HPG-C001", "reason": "r", "path": "teams[2].quota.use1-hpc[0]"},
        {"id": "HPG-C001", "reason": "r", "path": "teams[1]"},
        {"id": "HPG-C001", "reason": "r", "path": "clusters[3]"},
        {"id": "HPG-C001", "reason": "r"}]
    members = fleet_members(fleet_data)
    assert [a.get("path") for a in members["use1-hpc"]["acknowledgements"]] == ["teams[0].quota[0]", None, None]
    assert [a.get("path") for a in members["usw2-train"]["acknowledgements"]] == ["teams[1]", None]


def test_without_dispatch_the_manager_holds_only_its_own_teams(fleet_data):
    del fleet_data["fleet"]
    assert fleet_members(fleet_data)["use1-mgr"]["teams"] == []


def test_a_slurm_worker_is_not_mirrored_onto_the_manager(fleet_data):
    fleet_data["fleet"]["dispatch"]["workers"] = ["use1-hpc"]  # refused by HPG-F008, not by the members
    assert [t["name"] for t in fleet_members(fleet_data)["use1-mgr"]["teams"]] == []


def test_a_team_error_on_the_manager_maps_to_the_fleets_team(fleet_data):
    assert member_path("teams[1].access.viewers[0]", fleet_data, "use1-mgr") == "teams[1].access.viewers[0]"
