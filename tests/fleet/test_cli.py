"""validate and explain of a fleet spec: exit codes, every problem with path, value and fix, the summary line, each
cluster explained under its heading, the fleet section's totals, and --format json against the shipped schemas."""

from __future__ import annotations

import pytest
import yaml

from hyperpod_gov.cli import main
from tests.conftest import EXAMPLES
from tests.test_cli_json import check, run_json

FLEET = EXAMPLES / "fleet.yaml"


def _write(tmp_path, data):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_validate_a_fleet_prints_its_clusters_and_teams(capsys):
    assert main(["validate", str(FLEET)]) == 0
    out, err = capsys.readouterr()
    assert out == (f"{FLEET}: valid (fleet of 4 clusters: use1-train, usw2-train, use1-mgr, use1-hpc; 3 teams)\n")
    assert "warning: HPG-D001 clusters[0].cluster.dependenciesChart: on cluster use1-train" in err


def test_validate_a_broken_fleet_exits_1_with_every_problem_path_value_and_fix(tmp_path, fleet_data, capsys):
    fleet_data["clusters"][1]["cluster"]["instanceGroups"][0]["count"] = -1
    fleet_data["fleet"]["dispatch"]["workers"] = ["use1-mgr"]
    fleet_data["teams"][0]["quota"]["use1-train"][0]["acelerators"] = 4
    assert main(["validate", str(_write(tmp_path, fleet_data))]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in err and out == ""
    assert "clusters[1].cluster.instanceGroups[0].count: on cluster usw2-train:" in err
    assert "teams[0].quota.use1-train[0].acelerators: on cluster use1-train: is not a key the spec knows (4)" in err


def test_validate_a_fleet_whose_manager_is_a_worker_exits_1_with_the_rule(tmp_path, fleet_data, capsys):
    fleet_data["fleet"]["dispatch"]["workers"] = ["use1-mgr", "usw2-train"]
    assert main(["validate", str(_write(tmp_path, fleet_data))]) == 1
    err = capsys.readouterr().err
    assert "HPG-F004 fleet.dispatch.workers[0]: is the manager itself" in err and "('use1-mgr')" in err


def test_validate_a_fleet_typo_is_a_problem_not_a_traceback(tmp_path, fleet_data, capsys):
    fleet_data["clusters"][0]["clustr"] = fleet_data["clusters"][0].pop("cluster")
    assert main(["validate", str(_write(tmp_path, fleet_data))]) == 1
    err = capsys.readouterr().err
    assert "clusters[0].clustr: is not a key the spec knows" in err and "did you mean 'cluster'?" in err
    assert "clusters[0].cluster: is required" in err


def test_validate_json_of_a_fleet_names_each_cluster(capsys):
    code, doc, _ = run_json(["validate", str(FLEET)], capsys)
    assert code == 0
    check("validate", doc)
    (checked,) = doc["checked"]
    assert checked["teams"] == 3 and [c["name"] for c in checked["clusters"]] == [
        "use1-train", "usw2-train", "use1-mgr", "use1-hpc"]
    assert [(c["mode"], c["region"]) for c in checked["clusters"]] == [
        ("kueue", "us-east-1"), ("kueue", "us-west-2"), ("kueue", "us-east-1"), ("slurm", "us-east-1")]


def test_validate_json_of_a_broken_fleet_is_valid_json_too(tmp_path, fleet_data, capsys):
    fleet_data["fleet"]["dispatch"]["manager"] = "nowhere"
    code, doc, _ = run_json(["validate", str(_write(tmp_path, fleet_data))], capsys)
    assert code == 1 and not doc["valid"]
    check("validate", doc)
    assert [(i["id"], i["path"], i["value"]) for i in doc["issues"]] == [
        ("HPG-F003", "fleet.dispatch.manager", "nowhere")]


def test_explain_a_fleet_explains_each_cluster_then_the_fleet(capsys):
    assert main(["explain", str(FLEET)]) == 0
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if line.startswith("Cluster ")]
    assert headings == [
        "Cluster use1-train (account 111111111111, us-east-1; stacks acme-use1-train-*)",
        "Cluster usw2-train (account 111111111111, us-west-2; stacks acme-usw2-train-*)",
        "Cluster use1-mgr (account 111111111111, us-east-1; stacks acme-use1-mgr-*)",
        "Cluster use1-hpc (account 111111111111, us-east-1; stacks acme-use1-hpc-*)"]
    fleet = out.split("Fleet acme (", 1)[1]
    # research owns 16 + 8 H100s: 24 in all, per type and per accelerator kind
    assert ("  research\n    use1-train  ml.p5.48xlarge: 16 accelerators (nvidia.com/gpu)\n"
            "    usw2-train  ml.p5.48xlarge: 8 accelerators (nvidia.com/gpu)\n"
            "    use1-mgr    nothing owned (the dispatch manager: sends the team's work to the workers)\n"
            "    total       ml.p5.48xlarge: 24 accelerators (nvidia.com/gpu)\n"
            "                accelerators in all: 24 nvidia.com/gpu\n") in fleet
    assert "  hpc\n    use1-hpc  ml.g5.2xlarge: 6 accelerators (nvidia.com/gpu)\n" in fleet
    assert "Dispatch (Kueue MultiKueue): manager use1-mgr; workers use1-train, usw2-train" in fleet


def test_explain_json_of_a_fleet_sums_each_teams_quota(capsys):
    code, doc, _ = run_json(["explain", str(FLEET)], capsys)
    assert code == 0
    check("fleet-explain", doc)
    assert [c["name"] for c in doc["clusters"]] == ["use1-train", "usw2-train", "use1-mgr", "use1-hpc"]
    assert doc["clusters"][1]["explain"]["spec"] == "acme-usw2-train"
    research = doc["teams"][0]
    assert [(c["cluster"], [q["accelerators"] for q in c["quota"]]) for c in research["clusters"]] == [
        ("use1-train", [16]), ("usw2-train", [8]), ("use1-mgr", [])]
    assert research["total"] == [{"instanceType": "ml.p5.48xlarge", "accelerators": 24, "vcpu": 576,
                                  "memoryGib": 6144, "partitions": {}}]
    assert research["accelerators"] == [{"kind": "nvidia.com/gpu", "count": 24}]
    assert doc["dispatch"] == {"manager": "use1-mgr", "workers": ["use1-train", "usw2-train"]}


def test_explain_totals_change_when_a_clusters_quota_does(tmp_path, fleet_data, capsys):
    fleet_data["teams"][0]["quota"]["usw2-train"][0]["accelerators"] = 4
    code, doc, _ = run_json(["explain", str(_write(tmp_path, fleet_data))], capsys)
    assert code == 0 and doc["teams"][0]["accelerators"] == [{"kind": "nvidia.com/gpu", "count": 20}]


@pytest.mark.parametrize("command", ["validate", "explain"])
def test_a_single_cluster_spec_is_read_as_before(command, capsys):
    assert main([command, str(EXAMPLES / "startup.yaml")]) == 0
    out = capsys.readouterr().out
    assert "fleet" not in out.lower()


def test_validate_a_fleet_with_environments_checks_the_base_and_each(tmp_path, fleet_data, capsys):
    fleet_data["environments"] = [{"name": "stg", "overrides": {"clusters": [
        {"name": "usw2-train", "accounts": {"capacity": {"id": "222222222222"}, "trusted": ["111111111111"]}}]}}]
    assert main(["validate", str(_write(tmp_path, fleet_data))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and "(environment stg: stacks acme-stg-*)" in out[1]
    code, doc, _ = run_json(["explain", str(tmp_path / "fleet.yaml"), "--environment", "stg"], capsys)
    assert code == 0 and doc["fleet"] == "acme-stg"
    assert [(c["name"], c["account"]) for c in doc["clusters"]][:2] == [("use1-train", "111111111111"),
                                                                       ("usw2-train", "222222222222")]


def test_validate_strict_makes_a_members_warning_an_error(capsys):
    assert main(["validate", str(FLEET), "--strict"]) == 1
    err = capsys.readouterr().err
    assert "HPG-D001 clusters[0].cluster.dependenciesChart: on cluster use1-train" in err


def test_a_cluster_moved_to_another_account_names_that_clusters_principals(tmp_path, fleet_data, capsys):
    fleet_data["clusters"][1]["accounts"] = {"capacity": {"id": "222222222222", "region": "us-west-2"}}
    assert main(["validate", str(_write(tmp_path, fleet_data))]) == 1
    err = capsys.readouterr().err
    assert "HPG-A004 clusters[1].cluster.admins[0]: on cluster usw2-train: is in account 111111111111" in err
    assert "HPG-A004 teams[0].access.viewers[0]: on cluster usw2-train:" in err
