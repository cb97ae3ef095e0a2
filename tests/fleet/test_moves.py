"""Capacity moves (fleet.moves, MoveClusterNodes): HPG-F011's checks, each failing when its property breaks, and the
exact command explain prints, its flags derived from botocore's MoveClusterNodes input shape."""

from __future__ import annotations

import botocore.session
import pytest
from botocore import xform_name
from botocore.validate import ParamValidator

from hyperpod_gov.fleet_commands import fleet_section
from hyperpod_gov.plan.fleet import build_fleet
from hyperpod_gov.plan.fleet_moves import move_commands
from hyperpod_gov.spec import SpecError
from hyperpod_gov.spec.fleet import parse_fleet
from tests.conftest import ROOT, TODAY
from tests.fleet.conftest import cluster_index


def _fleet(data):
    return build_fleet(parse_fleet(data, today=TODAY, base_dir=ROOT / "examples"), today=TODAY)


def _errors(data):
    try:
        _fleet(data)
    except SpecError as exc:
        return list(exc.issues)
    return []


@pytest.fixture
def moving(fleet_data):
    """The example fleet after moving 2 p5 nodes from the manager's spare group to use1-train's workers (both in
    us-east-1, Continuous provisioning): the spec shows the counts after the move."""
    for name in ("use1-train", "use1-mgr"):
        fleet_data["clusters"][cluster_index(fleet_data, name)]["cluster"]["nodeProvisioningMode"] = "Continuous"
    mgr = fleet_data["clusters"][cluster_index(fleet_data, "use1-mgr")]["cluster"]
    mgr["instanceGroups"].append({"name": "gpu-spare", "instanceType": "ml.p5.48xlarge", "count": 1,
                                  "volumeSizeGb": 500})
    fleet_data["fleet"]["moves"] = [{"from": {"cluster": "use1-mgr", "instanceGroup": "gpu-spare"},
                                     "to": {"cluster": "use1-train", "instanceGroup": "gpu-worker"}, "count": 2}]
    return fleet_data


def _move_errors(data):
    return [(i.path, i.rule) for i in _errors(data) if i.rule == "HPG-F011" or i.path.startswith("fleet.moves")]


def test_a_move_between_continuous_eks_clusters_of_one_region_passes(moving):
    assert _errors(moving) == []


def test_explain_prints_the_move_and_its_exact_command(moving):
    text = fleet_section(_fleet(moving))
    arn = ("$(aws sagemaker describe-cluster --cluster-name {} --region us-east-1 --query ClusterArn "
           "--output text)")
    assert "2 nodes from use1-mgr/gpu-spare to use1-train/gpu-worker (us-east-1" in text
    assert (f"    aws sagemaker move-cluster-nodes --source-cluster-arn {arn.format('acme-use1-mgr')} "
            f"--source-instance-group-name gpu-spare --target-cluster-arn {arn.format('acme-use1-train')} "
            "--target-instance-group-name gpu-worker --instance-count 2 --region us-east-1\n") in text


def test_the_request_is_botocores_move_cluster_nodes_input_and_the_flags_its_members():
    model = botocore.session.get_session().get_service_model("sagemaker").operation_model("MoveClusterNodes")
    assert xform_name(model.name, "-") == "move-cluster-nodes"
    shape = model.input_shape
    assert set(shape.required_members) <= {"SourceClusterArn", "SourceInstanceGroupName", "TargetClusterArn",
                                           "TargetInstanceGroupName"}
    assert shape.members["InstanceCount"].metadata == {"min": 1, "max": 50}


def test_the_request_of_a_known_arn_validates_against_botocore(moving):
    arn = "arn:aws:sagemaker:us-east-1:111111111111:cluster/abcdef012345"
    fleet = _fleet(moving)
    (command,) = move_commands(fleet.fleet, fleet.plans)
    params = {**command.parameters, "SourceClusterArn": arn, "TargetClusterArn": arn.replace("abc", "fed")}
    shape = botocore.session.get_session().get_service_model("sagemaker").operation_model(
        "MoveClusterNodes").input_shape
    report = ParamValidator().validate(params, shape)
    assert not report.has_errors(), report.generate_report()
    assert ParamValidator().validate({**params, "InstanceCount": "2"}, shape).has_errors()


@pytest.mark.parametrize("count, ok", [(1, True), (50, None), (0, False), (51, False)])
def test_the_count_is_1_to_50(moving, count, ok):
    moving["fleet"]["moves"][0]["count"] = count
    moving["clusters"][cluster_index(moving, "use1-train")]["cluster"]["instanceGroups"][0]["count"] = max(count, 4)
    paths = [i.path for i in _errors(moving)]
    if ok is False:
        assert "fleet.moves[0].count" in paths
    else:
        assert "fleet.moves[0].count" not in paths


def test_a_target_count_below_the_moved_nodes_breaks_f011(moving):
    moving["fleet"]["moves"][0]["count"] = 5  # use1-train/gpu-worker shows 4 after the move
    assert _move_errors(moving) == [("fleet.moves[0].count", "HPG-F011")]


def test_clusters_in_two_regions_break_f011(moving):
    i = cluster_index(moving, "usw2-train")
    moving["clusters"][i]["cluster"]["nodeProvisioningMode"] = "Continuous"
    moving["fleet"]["moves"][0]["to"]["cluster"] = "usw2-train"
    moving["clusters"][i]["cluster"]["instanceGroups"][0]["count"] = 2
    issues = [i for i in _errors(moving) if i.rule == "HPG-F011"]
    assert [i.path for i in issues] == ["fleet.moves[0]"] and "us-west-2" in issues[0].problem


def test_a_cluster_without_continuous_provisioning_breaks_f011(moving):
    del moving["clusters"][cluster_index(moving, "use1-train")]["cluster"]["nodeProvisioningMode"]
    assert _move_errors(moving) == [("fleet.moves[0].to.cluster", "HPG-F011")]


def test_a_slurm_cluster_breaks_f011(moving):
    moving["fleet"]["moves"][0]["from"] = {"cluster": "use1-hpc", "instanceGroup": "gpu-worker"}
    assert _move_errors(moving) == [("fleet.moves[0].from.cluster", "HPG-F011")]


def test_an_unknown_group_or_cluster_breaks_f011(moving):
    moving["fleet"]["moves"][0]["to"]["instanceGroup"] = "gpu-workers"
    assert _move_errors(moving) == [("fleet.moves[0].to.instanceGroup", "HPG-F011")]
    moving["fleet"]["moves"][0]["to"]["cluster"] = "use1-trian"
    assert _move_errors(moving) == [("fleet.moves[0].to.cluster", "HPG-F011")]


def test_groups_of_different_instance_types_break_f011(moving):
    moving["fleet"]["moves"][0]["from"]["instanceGroup"] = "cpu-worker"
    assert _move_errors(moving) == [("fleet.moves[0].to.instanceGroup", "HPG-F011")]


def test_a_move_into_its_own_group_breaks_f011(moving):
    moving["fleet"]["moves"][0]["to"] = dict(moving["fleet"]["moves"][0]["from"])
    assert _move_errors(moving) == [("fleet.moves[0].to", "HPG-F011")]


def test_a_move_with_an_unknown_key_is_a_structure_error(moving):
    moving["fleet"]["moves"][0]["nodes"] = 2
    assert "fleet.moves[0].nodes" in [i.path for i in _errors(moving)]
