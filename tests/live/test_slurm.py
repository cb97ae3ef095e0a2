"""drift and import for Slurm-orchestrated clusters: DescribeCluster (Stubber) for Orchestrator.Slurm and each
group's SlurmConfig, and the accounting from a sacctmgr dump. ``slurm/accounting.cfg`` and ``slurm/qos.txt`` were
written by real Slurm 22.05.8 (tests/slurm/harness.py) after applying the live spec's governance."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from hyperpod_gov.live import configure_drift, configure_import
from hyperpod_gov.live.cli import run_drift, run_import
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec
from tests.conftest import TODAY
from tests.slurm.live_spec import live_spec

from .fake_aws import WHEN

HERE = Path(__file__).parent / "slurm"
DUMP, QOS = HERE / "accounting.cfg", HERE / "qos.txt"
ARN = "arn:aws:sagemaker:us-east-1:111111111111:cluster/hpgt1234abcd"


def _plan(data: dict[str, Any]):
    return build_plan(parse_spec(data, today=TODAY))


def describe(plan, **change: Any) -> dict[str, Any]:
    """DescribeCluster of a correct deploy of the plan's Slurm cluster."""
    groups = []
    roles = {g.name: g for g in plan.slurm.groups}
    for g in plan.cluster.instance_groups:
        config: dict[str, Any] = {"NodeType": roles[g.name].node_type}
        if roles[g.name].partition:
            config["PartitionNames"] = [roles[g.name].partition]
        groups.append({"InstanceGroupName": g.name, "InstanceType": g.instance_type, "CurrentCount": g.count,
                       "TargetCount": g.count, "ExecutionRole": "arn:aws:iam::111111111111:role/exec",
                       "SlurmConfig": config})
    out = {"ClusterArn": ARN, "ClusterName": plan.cluster_name, "ClusterStatus": "InService", "CreationTime": WHEN,
           "InstanceGroups": groups,
           "Orchestrator": {"Slurm": {"SlurmConfigStrategy": plan.slurm.config_strategy}}}
    out.update(change)
    return out


def _spec_file(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _drift(aws, tmp_path, data, response, *extra: str):
    aws.sm_stub.add_response("describe_cluster", response, {"ClusterName": data["cluster"]["name"]})
    parser = configure_drift(argparse.ArgumentParser())
    args = parser.parse_args([str(_spec_file(tmp_path, data)), "--format", "json", *extra])
    return run_drift(args, clients=aws.factory)


def test_a_slurm_cluster_as_planned_with_its_dump_has_no_drift(aws, tmp_path, capsys):
    data = live_spec()
    assert _drift(aws, tmp_path, data, describe(_plan(data)), "--slurm-dump", str(DUMP), "--slurm-qos",
                  str(QOS)) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {"drift": [], "slurm": {"accounting": "checked", "commands": []}}
    aws.assert_all_used()
    assert aws.operations == ["DescribeCluster"]  # nothing of EKS


def test_without_a_dump_the_accounting_is_reported_not_checked(aws, tmp_path, capsys):
    data = live_spec()
    assert _drift(aws, tmp_path, data, describe(_plan(data))) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["slurm"]["accounting"] == "not checked" and "--slurm-dump" in out["slurm"]["reason"]


def test_slurm_config_strategy_node_type_partition_and_count_changes_are_drift(aws, tmp_path, capsys):
    data = live_spec()
    live = describe(_plan(data), Orchestrator={"Slurm": {"SlurmConfigStrategy": "Managed"}})
    gpu = next(g for g in live["InstanceGroups"] if g["InstanceGroupName"] == "gpu")
    gpu["SlurmConfig"]["PartitionNames"] = ["p5"]
    gpu["TargetCount"] = 3
    live["InstanceGroups"] = [g for g in live["InstanceGroups"] if g["InstanceGroupName"] != "cpu"]
    assert _drift(aws, tmp_path, data, live) == 1
    drift = json.loads(capsys.readouterr().out)["drift"]
    assert drift == [
        {"kind": "Cluster", "name": "hpgtest", "change": "changed", "field": "Orchestrator.Slurm.SlurmConfigStrategy",
         "expected": "Merge", "actual": "Managed"},
        {"kind": "InstanceGroup", "name": "cpu", "change": "missing"},
        {"kind": "InstanceGroup", "name": "gpu", "change": "changed", "field": "SlurmConfig.PartitionNames",
         "expected": ["gpu"], "actual": ["p5"]},
        {"kind": "InstanceGroup", "name": "gpu", "change": "changed", "field": "TargetCount", "expected": 2,
         "actual": 3},
    ]


def test_accounting_changed_by_hand_is_drift_with_the_commands_that_restore_it(aws, tmp_path, capsys):
    data = live_spec()
    vision = "Description='hpgt: team vision on partition gpu':Organization='hpgt':DefaultQOS='hpgt_standard':" \
        "Fairshare=1:GrpTRES=node="
    assert vision + "1" in DUMP.read_text()
    dump = DUMP.read_text().replace(vision + "1", vision + "2")
    dump += "Parent - 'speech'\nAccount - 'speech_extra':Description='by hand':Organization='hpgt'\n"
    qos = QOS.read_text().replace("urgent|hpgt: priority class urgent|100|", "urgent|hpgt: priority class urgent|5|")
    (tmp_path / "a.cfg").write_text(dump)
    (tmp_path / "q.txt").write_text(qos)
    assert _drift(aws, tmp_path, data, describe(_plan(data)), "--slurm-dump", str(tmp_path / "a.cfg"),
                  "--slurm-qos", str(tmp_path / "q.txt")) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["drift"] == [
        {"kind": "SlurmQos", "name": "urgent", "change": "changed", "field": "Priority", "expected": 100,
         "actual": 5},
        {"kind": "SlurmAccount", "name": "speech_extra", "change": "unexpected"},
        {"kind": "SlurmAccount", "name": "vision_gpu", "change": "changed", "field": "GrpTRES", "expected": "node=1",
         "actual": "node=2"},
    ]
    assert out["slurm"]["commands"] == [
        "sacctmgr -i modify qos where name=urgent set Priority=100",
        "sacctmgr -i modify account where name=vision_gpu cluster=hpgtest set GrpTRES=node=1",
        "# with HPG_SLURM_PRUNE=1 (deleting an association cancels its running jobs): "
        "sacctmgr -i delete account where name=speech_extra cluster=hpgtest",
    ]


def test_the_text_output_names_each_change_and_what_accounting_sh_would_run(aws, tmp_path, capsys):
    data = live_spec()
    (tmp_path / "a.cfg").write_text(DUMP.read_text().replace("Fairshare=50", "Fairshare=5", 1))
    aws.sm_stub.add_response("describe_cluster", describe(_plan(data)), {"ClusterName": "hpgtest"})
    args = configure_drift(argparse.ArgumentParser()).parse_args(
        [str(_spec_file(tmp_path, data)), "--slurm-dump", str(tmp_path / "a.cfg"), "--slurm-qos", str(QOS)])
    assert run_drift(args, clients=aws.factory) == 1
    text = capsys.readouterr().out
    assert "team speech\n  Slurm account speech: Fairshare is 5 on the cluster, the spec says 50" in text
    assert "slurm/accounting.sh on the controller would run:\n  sacctmgr -i modify account where name=speech " \
           "cluster=hpgtest set Fairshare=50" in text


def test_an_eks_spec_against_a_slurm_cluster_cannot_be_checked_and_says_why(aws, tmp_path, capsys):
    from tests.conftest import EXAMPLES

    spec = yaml.safe_load((EXAMPLES / "startup.yaml").read_text())
    aws.sm_stub.add_response("describe_cluster", describe(_plan(live_spec()), ClusterName=spec["cluster"]["name"]),
                             {"ClusterName": spec["cluster"]["name"]})
    path = tmp_path / "eks.yaml"
    path.write_text(yaml.safe_dump(spec))
    args = configure_drift(argparse.ArgumentParser()).parse_args([str(path), "--no-kubernetes"])
    assert run_drift(args, clients=aws.factory) == 2
    err = capsys.readouterr().err
    assert "is not orchestrated by EKS but by Slurm" in err and "cluster.orchestrator: slurm" in err


def test_a_dump_it_cannot_read_is_exit_2_with_the_line_and_the_command(aws, tmp_path, capsys):
    (tmp_path / "bad.cfg").write_text("Cluster - 'hpgtest'\nAccount - 'x'\n")
    args = configure_drift(argparse.ArgumentParser()).parse_args(
        [str(_spec_file(tmp_path, live_spec())), "--slurm-dump", str(tmp_path / "bad.cfg")])
    assert run_drift(args, clients=aws.factory) == 2
    assert "bad.cfg:2: Account 'x' comes before any 'Parent - ' line" in capsys.readouterr().err


def test_import_writes_a_slurm_spec_that_validates_and_has_no_drift_against_the_same_cluster(aws, tmp_path, capsys):
    plan = _plan(live_spec())
    response = describe(plan)
    aws.sm_stub.add_response("describe_cluster", response, {"ClusterName": "hpgtest"})
    out = tmp_path / "imported.yaml"
    args = configure_import(argparse.ArgumentParser()).parse_args(
        ["--cluster-name", "hpgtest", "--out", str(out), "--slurm-dump", str(DUMP), "--slurm-qos", str(QOS)])
    assert run_import(args, clients=aws.factory) == 0, capsys.readouterr().err
    imported = yaml.safe_load(out.read_text())
    assert imported["cluster"]["orchestrator"] == "slurm"
    assert [t["name"] for t in imported["teams"]] == ["speech", "vision"]
    vision = imported["teams"][1]
    assert vision["quota"] == [{"instanceType": "ml.p5.48xlarge", "count": 1}]
    assert vision["sharing"] == {"strategy": "LendAndBorrow", "borrowLimitPercent": 100}
    assert vision["slurm"] == {"users": ["hpgt-alice"]}
    assert imported["scheduler"]["priorityClasses"] == [{"name": "urgent", "weight": 100}]
    capsys.readouterr()
    assert _drift(aws, tmp_path, imported, response, "--slurm-dump", str(DUMP), "--slurm-qos", str(QOS)) == 0, \
        capsys.readouterr().out


def test_import_of_a_slurm_cluster_without_a_dump_leaves_the_teams_to_fill_in(aws, tmp_path, capsys):
    aws.sm_stub.add_response("describe_cluster", describe(_plan(live_spec())), {"ClusterName": "hpgtest"})
    args = configure_import(argparse.ArgumentParser()).parse_args(["--cluster-name", "hpgtest"])
    run_import(args, clients=aws.factory)
    text = capsys.readouterr().out
    assert "teams: []  # give --slurm-dump to import the teams from the accounting" in text
    assert "slurm: {nodeType: Compute, partition: gpu}" in text
