"""drift, preflight and diff of a fleet spec: each member checked in its own account and region (botocore Stubber
for the AWS side, the loopback API server of tests/live for the Kubernetes side), the exit status the worst of the
members', and the diff of two fleets per cluster."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
import yaml
from botocore.stub import Stubber

from hyperpod_gov.cli import main
from hyperpod_gov.fleet_commands import fleet_review
from hyperpod_gov.fleet_construct import fleet_manifests
from hyperpod_gov.fleet_live import run_fleet_drift, run_fleet_preflight, worst
from hyperpod_gov.live import configure_drift
from hyperpod_gov.live.k8s import connect_kubeconfig
from hyperpod_gov.live.preflight import configure_preflight
from tests.live.conftest import Aws, queue_drift
from tests.live.fake_aws import cluster_from_plan
from tests.live.fake_k8s import FakeKubernetes, kubeconfig
from tests.test_cli_json import check

from .conftest import cluster_index

MANAGER = "use1-mgr"


def write(tmp_path: Path, data, name: str = "fleet.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def drift_args(*argv: str) -> argparse.Namespace:
    return configure_drift(argparse.ArgumentParser(prog="hyperpod-gov drift")).parse_args(list(argv))


def preflight_args(*argv: str) -> argparse.Namespace:
    return configure_preflight(argparse.ArgumentParser(prog="hyperpod-gov preflight")).parse_args(list(argv))


@pytest.fixture
def fleet_file(tmp_path, fleet_data):
    return write(tmp_path, fleet_data)


@pytest.fixture
def served(tmp_path):
    """serve(cluster objects): a loopback API server holding them, and a kubeconfig that reaches it."""
    started = []

    def serve(objects, name: str = "kubeconfig"):
        fake = FakeKubernetes(objects)
        url = fake.start()
        started.append(fake)
        path = tmp_path / name
        path.write_text(kubeconfig(url))
        return fake, str(path)

    yield serve
    for fake in started:
        fake.stop()


def _manager_served(fleet_file, served):
    fleet = fleet_review(fleet_file, warn=False)
    plan = fleet.plans[MANAGER]
    fake, path = served(fleet_manifests(fleet)[MANAGER].all())
    return fleet, plan, fake, path


def _run_manager_drift(fleet_file, plan, path, *argv):
    with Aws() as aws:
        queue_drift(aws, None, plan, cluster_from_plan(plan))
        code = run_fleet_drift(drift_args(fleet_file, "--cluster", MANAGER, *argv),
                               clients=lambda c: aws.factory, kube=lambda c: (lambda: connect_kubeconfig(path)))
        aws.assert_all_used()
    return code


# --- drift ---------------------------------------------------------------------------------------------------------


def test_drift_of_one_member_compares_its_multikueue_objects_and_finds_none(fleet_file, served, capsys):
    _, plan, fake, path = _manager_served(fleet_file, served)
    assert _run_manager_drift(fleet_file, plan, path) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"cluster {MANAGER} (account {plan.account}, {plan.region}; {plan.cluster_name}):")
    assert "cluster use1-train" not in out and f"fleet acme: {MANAGER} no drift" in out
    read = {p.split("?")[0].rsplit("/", 1)[-1] for _, p, _ in fake.requests}
    assert {"multikueueclusters", "multikueueconfigs", "admissionchecks"} <= read


def test_a_changed_multikueue_config_and_a_deleted_admission_check_are_drift(fleet_file, served, capsys):
    _, plan, fake, path = _manager_served(fleet_file, served)
    config = next(o for (k, _, _), o in fake.objects.items() if k == "MultiKueueConfig")
    config["spec"]["clusters"] = config["spec"]["clusters"][:1]
    check_name = next(n for (k, _, n) in fake.objects if k == "AdmissionCheck")
    fake.remove("AdmissionCheck", check_name)
    assert _run_manager_drift(fleet_file, plan, path, "--format", "json") == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["exitCode"] == 1 and list(doc["clusters"]) == [MANAGER]
    items = {(i["kind"], i["change"]) for i in doc["clusters"][MANAGER]["drift"]}
    assert items == {("MultiKueueConfig", "changed"), ("AdmissionCheck", "missing")}
    assert doc["clusters"][MANAGER]["kubernetes"]["checked"] is True


def test_an_unknown_cluster_is_refused_with_the_fleets_clusters(fleet_file, capsys):
    assert run_fleet_drift(drift_args(fleet_file, "--cluster", "euw1-train"), clients=lambda c: None) == 2
    err = capsys.readouterr().err
    assert "--cluster euw1-train: fleet acme has no such cluster; its clusters: use1-train, usw2-train, use1-mgr, " \
           "use1-hpc" in err
    assert run_fleet_preflight(preflight_args(fleet_file, "--cluster", "nope"), clients=lambda c: None) == 2
    assert "its clusters: use1-train" in capsys.readouterr().err


def test_a_kubeconfig_without_cluster_is_refused_it_addresses_one_cluster(fleet_file, capsys):
    assert run_fleet_drift(drift_args(fleet_file, "--kubeconfig", "k"), clients=lambda c: None) == 2
    assert "--kubeconfig address one cluster; fleet acme has 4" in capsys.readouterr().err


def test_cluster_on_a_single_cluster_spec_is_refused(capsys):
    from hyperpod_gov.live import run_drift
    from hyperpod_gov.live.preflight import run_preflight
    from tests.conftest import EXAMPLES

    spec = str(EXAMPLES / "startup.yaml")
    assert run_drift(drift_args(spec, "--cluster", "x"), clients=lambda s: None) == 2
    assert run_preflight(preflight_args(spec, "--cluster", "x"), clients=lambda s: None) == 2
    err = capsys.readouterr().err
    assert err.count("is one cluster's spec (cluster:)") == 2


def test_every_member_is_checked_and_the_worst_exit_wins(fleet_file, capsys):
    fleet = fleet_review(fleet_file, warn=False)
    stubs: dict[str, Aws] = {}
    for cluster, plan in fleet.plans.items():
        aws = stubs[cluster] = Aws().__enter__()
        if plan.slurm is not None:  # no such cluster: could not check
            aws.sm_stub.add_client_error("describe_cluster", "ResourceNotFound", "not found", 400)
            continue
        fake = cluster_from_plan(plan)
        if cluster == "usw2-train":  # an instance group resized in the console
            fake.instance_groups[0]["TargetCount"] = 7
        queue_drift(aws, None, plan, fake)
    code = run_fleet_drift(drift_args(fleet_file, "--no-kubernetes", "--format", "json"),
                           clients=lambda c: stubs[c].factory)
    doc = json.loads(capsys.readouterr().out)
    for aws in stubs.values():
        aws.assert_all_used()
        aws.__exit__()
    assert {c: d["exitCode"] for c, d in doc["clusters"].items()} == {
        "use1-train": 0, "usw2-train": 1, "use1-mgr": 0, "use1-hpc": 2}
    assert code == 2 and doc["exitCode"] == 2
    assert "could not read the cluster" in doc["clusters"]["use1-hpc"]["error"]
    assert [(i["kind"], i["expected"], i["actual"]) for i in doc["clusters"]["usw2-train"]["drift"]] == [
        ("InstanceGroup", 2, 7)]


def test_the_exit_status_follows_each_commands_contract():
    assert worst("drift", [0, 0]) == 0 and worst("drift", [0, 1]) == 1 and worst("drift", [1, 2, 0]) == 2
    assert worst("preflight", [0, 2]) == 2 and worst("preflight", [2, 1]) == 1 and worst("preflight", []) == 0


def test_the_cli_hands_a_fleet_to_fleet_drift_and_names_each_member(fleet_file, capsys, monkeypatch):
    seen = []
    monkeypatch.setattr("hyperpod_gov.fleet_live.drift_plan",
                        lambda args, plan, clients=None, kube=None, extra=():
                        seen.append((plan.region, len(extra))) or 0)
    assert main(["drift", fleet_file]) == 0
    out = capsys.readouterr().out
    assert [line.split(" (")[0] for line in out.splitlines() if line.startswith("cluster ")] == [
        "cluster use1-train", "cluster usw2-train", "cluster use1-mgr", "cluster use1-hpc"]
    assert [r for r, _ in seen] == ["us-east-1", "us-west-2", "us-east-1", "us-east-1"]
    assert all(n > 0 for _, n in seen[:3]) and seen[3][1] == 0  # MultiKueue objects for the dispatch members


# --- preflight -----------------------------------------------------------------------------------------------------


def test_preflight_of_one_member_checks_its_names_in_its_region(fleet_file, capsys):
    fleet = fleet_review(fleet_file, warn=False)
    name = fleet.fleet.members["usw2-train"].cluster.name
    with Aws() as aws:
        aws.sm_stub.add_client_error("describe_cluster", "ResourceNotFound", "not found",
                                     expected_params={"ClusterName": name})
        aws.eks_stub.add_client_error("describe_cluster", "ResourceNotFoundException", "No cluster found", 404,
                                      expected_params={"name": f"{name}-eks"})
        code = run_fleet_preflight(preflight_args(fleet_file, "--cluster", "usw2-train"),
                                   clients=lambda c: aws.factory)
        aws.assert_all_used()
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("cluster usw2-train (account 111111111111, us-west-2;")
    assert "ok  names-free" in out and "fleet acme: usw2-train ready" in out


# --- diff ----------------------------------------------------------------------------------------------------------


def _quota_change_and_new_cluster(tmp_path, fleet_data):
    old = write(tmp_path, fleet_data, "old.yaml")
    research = next(t for t in fleet_data["teams"] if t["name"] == "research")
    research["quota"]["usw2-train"][0]["accelerators"] = 16
    fleet_data["clusters"][cluster_index(fleet_data, "usw2-train")]["cluster"]["instanceGroups"][0]["count"] = 4
    hpc = fleet_data["clusters"][cluster_index(fleet_data, "use1-hpc")]
    fleet_data["clusters"].remove(hpc)
    for team in fleet_data["teams"]:
        team["quota"].pop("use1-hpc", None)
    fleet_data["teams"] = [t for t in fleet_data["teams"] if t["quota"]]
    extra = json.loads(json.dumps(fleet_data["clusters"][cluster_index(fleet_data, "use1-mgr")]))
    extra.update(name="euw1-mgr", accounts={"capacity": {"region": "eu-west-1"}})
    extra["cluster"].update(name="acme-euw1-mgr")
    extra["cluster"]["vpc"]["cidr"] = "10.50.0.0/16"
    fleet_data["clusters"].append(extra)
    return old, write(tmp_path, fleet_data, "new.yaml")


def test_diff_of_two_fleets_shows_a_quota_change_under_its_cluster_only(tmp_path, fleet_data, capsys):
    old, new = _quota_change_and_new_cluster(tmp_path, fleet_data)
    assert main(["diff", old, new, "--governance-only", "--fail"]) == 1
    out = capsys.readouterr().out
    sections = {}
    for line in out.splitlines():
        if line.startswith("cluster "):
            name = line.split()[1].rstrip(":")
            sections[name] = [line]
        else:
            sections[name].append(line)
    assert "team research owns: 8 GPUs" in "\n".join(sections["usw2-train"])
    assert not any("team research owns" in line for c, s in sections.items() if c != "usw2-train" for line in s)
    assert sections["use1-train"][1:] == [
        f"  Governance changes ({old} -> {new}, cluster use1-train):", "    none",
        "  Contract reviews (event-driven) and retirement:", "    none"]
    assert sections["euw1-mgr"][0].startswith("cluster euw1-mgr: added (account 111111111111, eu-west-1;")
    assert sections["use1-hpc"][0].startswith("cluster use1-hpc: removed")


def test_diff_json_of_two_fleets_is_valid_and_per_cluster(tmp_path, fleet_data, capsys):
    old, new = _quota_change_and_new_cluster(tmp_path, fleet_data)
    assert main(["diff", old, new, "--governance-only", "--format", "json"]) == 0
    doc = check("fleet-diff", json.loads(capsys.readouterr().out))
    assert doc["added"] == ["euw1-mgr"] and doc["removed"] == ["use1-hpc"] and doc["changed"] is True
    assert sorted(doc["clusters"]) == ["use1-mgr", "use1-train", "usw2-train"]
    changed = {c for c, d in doc["clusters"].items() if d["changed"]}
    assert changed == {"usw2-train"}
    assert all(d["resources"] is None for d in doc["clusters"].values())
    assert doc["dispatch"] is None


def test_an_unchanged_fleet_has_no_change(fleet_file, capsys):
    assert main(["diff", fleet_file, fleet_file, "--governance-only", "--fail", "--format", "json"]) == 0
    doc = check("fleet-diff", json.loads(capsys.readouterr().out))
    assert doc["changed"] is False and doc["added"] == doc["removed"] == []


def test_a_fleet_against_a_single_cluster_spec_is_a_usage_error(fleet_file, capsys):
    from tests.conftest import EXAMPLES

    for pair in ([fleet_file, str(EXAMPLES / "startup.yaml")], [str(EXAMPLES / "startup.yaml"), fleet_file]):
        assert main(["diff", *pair, "--governance-only"]) == 2
        err = capsys.readouterr().err
        assert "usage error" in err and "a fleet spec (clusters:)" in err and "a single-cluster spec" in err


def test_the_resource_diff_splits_one_synth_of_each_fleet_by_member(tmp_path, fleet_data, capsys):
    old = write(tmp_path, fleet_data, "old.yaml")
    research = next(t for t in fleet_data["teams"] if t["name"] == "research")
    research["quota"]["usw2-train"][0]["accelerators"] = 4
    assert main(["diff", old, write(tmp_path, fleet_data, "new.yaml"), "--format", "json"]) == 0
    doc = check("fleet-diff", json.loads(capsys.readouterr().out))
    resources = {c: [r["words"] for r in d["resources"]] for c, d in doc["clusters"].items()}
    assert resources["use1-train"] == resources["use1-hpc"] == []
    stacks = [w for w in resources["usw2-train"] if not w.startswith("~ k8s ")]
    assert stacks and all(w.startswith("~ acme-usw2-train-") for w in stacks)
    assert "~ k8s ClusterQueue hyperpod-ns-research-clusterqueue" in resources["usw2-train"]
    # the manager's derived fleet queue (the sum of the workers' quotas) changed with the worker's quota
    assert "~ k8s ClusterQueue research-fleet" in resources["use1-mgr"]
    assert doc["clusters"]["use1-mgr"]["changes"] == []


def test_drift_plans_the_same_multikueue_objects_as_the_synth(fleet_file):
    from hyperpod_gov.fleet_construct import fleet_cluster_objects
    from hyperpod_gov.fleet_live import multikueue_objects_of

    fleet = fleet_review(fleet_file, warn=False)
    assert multikueue_objects_of(fleet) == fleet_cluster_objects(fleet) != {}
