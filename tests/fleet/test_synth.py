"""synth of a fleet: every member's stacks in one assembly, named <fleet>-<cluster>-..., each in its own account and
region, no two alike; each member's files in a folder of its own; the public HyperPodFleet construct."""

from __future__ import annotations

import contextlib
import io
import json
from collections import defaultdict
from pathlib import Path

import pytest

from hyperpod_gov.cli import main
from tests.conftest import EXAMPLES, TODAY
from tests.synth_helpers import minimal_app

FLEET = EXAMPLES / "fleet.yaml"

# The example's stacks per account and region, as hyperpod-gov synth writes them.
EXPECTED = {
    ("111111111111", "us-east-1"): [
        "acme-use1-hpc-capacity",
        "acme-use1-mgr-access", "acme-use1-mgr-capacity", "acme-use1-mgr-governance", "acme-use1-mgr-monitoring",
        "acme-use1-mgr-multikueue", "acme-use1-mgr-teams-04", "acme-use1-mgr-teams-10",
        "acme-use1-train-access", "acme-use1-train-capacity", "acme-use1-train-governance",
        "acme-use1-train-monitoring", "acme-use1-train-multikueue", "acme-use1-train-teams-04",
        "acme-use1-train-teams-10"],
    ("111111111111", "us-west-2"): [
        "acme-usw2-train-access", "acme-usw2-train-capacity", "acme-usw2-train-governance",
        "acme-usw2-train-monitoring", "acme-usw2-train-multikueue", "acme-usw2-train-teams-04",
        "acme-usw2-train-teams-10"],
}


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    """`hyperpod-gov synth examples/fleet.yaml --out DIR` once: (exit code, standard output, DIR)."""
    out = tmp_path_factory.mktemp("fleet")
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["synth", str(FLEET), "--out", str(out)])
    assert "Traceback" not in stderr.getvalue()
    # each warning once: the fleet's review prints it, the app built from that plan does not repeat it
    warned = [line for line in stderr.getvalue().splitlines() if "HPG-D001" in line]
    assert len(warned) == 3, warned
    return code, stdout.getvalue(), out


def _stacks(out: Path) -> dict[tuple[str, str], list[str]]:
    manifest = json.loads((out / "cdk.out" / "manifest.json").read_text())
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for artifact in manifest["artifacts"].values():
        if artifact["type"] == "aws:cloudformation:stack":
            account, region = artifact["environment"].removeprefix("aws://").split("/")
            found[(account, region)].append(artifact["properties"].get("stackName") or artifact["displayName"])
    return {k: sorted(v) for k, v in found.items()}


def test_synth_of_the_fleet_writes_every_members_stacks_in_its_account_and_region(synthesized):
    code, stdout, out = synthesized
    assert code == 0, stdout
    assert _stacks(out) == EXPECTED
    assert "acme-usw2-train-capacity (111111111111/us-west-2): " in stdout


def test_no_two_stacks_of_the_fleet_share_a_name(synthesized):
    names = [n for stacks in _stacks(synthesized[2]).values() for n in stacks]
    assert len(names) == len(set(names)) == 22


def test_each_member_writes_its_files_under_its_cluster(synthesized):
    out = synthesized[2]
    assert sorted(p.name for p in (out / "k8s").iterdir()) == ["use1-mgr", "use1-train", "usw2-train"]
    assert sorted(p.name for p in (out / "k8s" / "usw2-train" / "teams").iterdir()) == ["applied.yaml",
                                                                                        "research.yaml"]
    assert not (out / "k8s" / "cluster.yaml").exists()
    assert sorted(p.name for p in (out / "slurm").iterdir()) == ["use1-hpc"]
    assert (out / "slurm" / "use1-hpc" / "apply.sh").is_file()
    assert sorted(p.name for p in (out / "contracts" / "use1-hpc").iterdir()) == ["hpc.md"]


def test_a_members_manifests_name_its_own_namespaces(synthesized):
    text = (synthesized[2] / "k8s" / "use1-train" / "teams" / "research.yaml").read_text()
    assert "hyperpod-ns-research" in text


def test_the_fleet_construct_builds_each_member_as_its_governance(tmp_path):
    from hyperpod_gov import HyperPodFleet, load_fleet

    app = minimal_app(outdir=str(tmp_path))
    fleet = HyperPodFleet(app, "Fleet", fleet=load_fleet(FLEET, today=TODAY), nag=False)
    assert list(fleet.members) == ["use1-train", "usw2-train", "use1-mgr", "use1-hpc"]
    assert fleet.members["usw2-train"].node.id == "Fleet-usw2-train"
    warnings = [m for m in fleet.node.metadata if m.type == "aws:cdk:warning"]
    assert len(warnings) == 3 and all("HPG-D001" in str(m.data) for m in warnings)
    by_env = defaultdict(list)
    for stack in fleet.stacks:
        by_env[(stack.account, stack.region)].append(stack.stack_name)
    assert {k: sorted(v) for k, v in by_env.items()} == EXPECTED


def test_the_fleet_construct_refuses_a_fleet_that_breaks_a_fleet_rule(tmp_path, fleet_data):
    from hyperpod_gov import HyperPodFleet, SpecError
    from hyperpod_gov.spec.fleet import parse_fleet

    fleet_data["fleet"]["dispatch"]["workers"] = ["use1-train", "use1-hpc"]
    with pytest.raises(SpecError, match="HPG-F008"):
        HyperPodFleet(minimal_app(outdir=str(tmp_path)), "Fleet",
                      fleet=parse_fleet(fleet_data, today=TODAY, base_dir=EXAMPLES))


def test_a_fleet_synth_into_a_single_cluster_synths_folder_removes_the_files_no_member_writes(tmp_path):
    from hyperpod_gov.stacks.fleet_app import write_fleet_files

    # (a single-cluster synth itself, stacks.app.synth, is unchanged: DIR/k8s/cluster.yaml, tests/stacks)
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "cluster.yaml").write_text("stale")
    from hyperpod_gov.plan.fleet import build_fleet
    from hyperpod_gov.spec.fleet import load_fleet
    from hyperpod_gov.fleet_construct import fleet_manifests

    fleet = build_fleet(load_fleet(FLEET, today=TODAY), today=TODAY)
    write_fleet_files(fleet, fleet_manifests(fleet), tmp_path)
    assert not (tmp_path / "k8s" / "cluster.yaml").exists()
    assert (tmp_path / "k8s" / "use1-train" / "cluster.yaml").is_file()


def test_a_members_extra_cluster_wide_objects_follow_its_own(tmp_path):
    """A member's extra objects (the MultiKueue ones) end its cluster.yaml, no other member's."""
    import yaml

    from hyperpod_gov.fleet_construct import fleet_manifests
    from hyperpod_gov.plan.fleet import build_fleet
    from hyperpod_gov.spec.fleet import load_fleet
    from hyperpod_gov.stacks.fleet_app import write_fleet_files

    fleet = build_fleet(load_fleet(FLEET, today=TODAY), today=TODAY)
    extra = {"kind": "AdmissionCheck", "apiVersion": "kueue.x-k8s.io/v1beta2", "metadata": {"name": "fleet"},
             "spec": {"controllerName": "kueue.x-k8s.io/multikueue"}}
    plain = fleet_manifests(fleet, {})
    manifests = fleet_manifests(fleet, {"use1-mgr": [extra]})
    assert manifests["use1-mgr"].cluster == [*plain["use1-mgr"].cluster, extra]
    assert manifests["use1-train"].cluster == plain["use1-train"].cluster
    write_fleet_files(fleet, manifests, tmp_path)
    written = list(yaml.safe_load_all((tmp_path / "k8s" / "use1-mgr" / "cluster.yaml").read_text()))
    assert written[-1]["kind"] == "AdmissionCheck"


def test_the_reference_app_synthesizes_a_fleet(tmp_path):
    """`cdk synth -c spec=examples/fleet.yaml`: app.py builds the fleet (the CDK CLI passes context in
    CDK_CONTEXT_JSON and the output folder in CDK_OUTDIR)."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = {**os.environ, "CDK_CONTEXT_JSON": json.dumps({"spec": str(FLEET)}), "CDK_OUTDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-O", "app.py"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    stacks = sorted(p.name.removesuffix(".template.json") for p in tmp_path.glob("*.template.json"))
    assert stacks == sorted(n for names in EXPECTED.values() for n in names)


def _kinds(path: Path) -> list[tuple[str, str]]:
    import yaml

    return [(o["kind"], o["metadata"]["name"]) for o in yaml.safe_load_all(path.read_text()) if o]


def test_the_manager_gets_the_multikueue_objects_and_the_workers_their_mirrors(synthesized):
    out = synthesized[2]
    manager = _kinds(out / "k8s" / "use1-mgr" / "cluster.yaml")
    both = "hyperpod-gov-fleet-04ddbfdd93"  # plan.multikueue.dispatch_check: research and applied are on both workers
    assert [o for o in manager if o[0] in ("AdmissionCheck", "MultiKueueConfig")] == [
        ("MultiKueueConfig", both), ("AdmissionCheck", both)]
    assert [n for k, n in manager if k == "MultiKueueCluster"] == ["use1-train", "usw2-train"]
    assert {n for k, n in manager if k == "ClusterQueue" and n.endswith("-fleet")} == {"applied-fleet",
                                                                                     "research-fleet"}
    for worker in ("use1-train", "usw2-train"):
        objects = _kinds(out / "k8s" / worker / "cluster.yaml")
        assert ("ClusterRole", "hyperpod-gov-multikueue") in objects
        assert ("LocalQueue", "hyperpod-ns-research-fleet") in objects
        assert not any(k == "MultiKueueCluster" for k, _ in objects)


def test_without_dispatch_no_member_gets_multikueue_objects(fleet_data):
    from hyperpod_gov.fleet_construct import fleet_cluster_objects
    from hyperpod_gov.plan.fleet import build_fleet
    from hyperpod_gov.spec.fleet import parse_fleet

    del fleet_data["fleet"]
    fleet = build_fleet(parse_fleet(fleet_data, today=TODAY, base_dir=EXAMPLES), today=TODAY)
    assert fleet_cluster_objects(fleet) == {}


def test_the_manager_quota_of_a_team_is_the_sum_of_its_worker_quotas():
    from hyperpod_gov.fleet_construct import fleet_cluster_objects
    from hyperpod_gov.plan.fleet import build_fleet
    from hyperpod_gov.spec.fleet import load_fleet

    fleet = build_fleet(load_fleet(FLEET, today=TODAY), today=TODAY)
    (queue,) = [o for o in fleet_cluster_objects(fleet)["use1-mgr"]
                if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == "research-fleet"]
    resources = {r["name"]: r["nominalQuota"] for g in queue["spec"]["resourceGroups"] for f in g["flavors"]
                 for r in f["resources"]}
    assert resources["nvidia.com/gpu"] == 24  # 16 on use1-train + 8 on usw2-train
