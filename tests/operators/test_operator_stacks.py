"""The operators' add-ons as synthesized: pinned, after the nodes and the Pod Identity agent, with their roles
(trust limited to this cluster) and Pod Identity associations; in the governance stack on an existing cluster."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from cfnlint.api import ManualArgs, lint_file

from hyperpod_gov.spec import parse_spec, read_yaml
from tests.conftest import BASE, EXAMPLES, TODAY
from tests.synth_helpers import resources, synthesize
from tests.test_app_quality import KEPT_WARNINGS

TRAINING = "amazon-sagemaker-hyperpod-training-operator"
TRUST = {
    "StringEquals": {"aws:SourceAccount": "111111111111"},
    "ArnEquals": {"aws:SourceArn": "arn:aws:eks:us-east-1:111111111111:cluster/ml-eks"},
}


@pytest.fixture(scope="module")
def all_operators(tmp_path_factory):
    data = copy.deepcopy(BASE)
    data["cluster"]["operators"] = ["training", "spaces"]
    return synthesize(parse_spec(data, today=TODAY), tmp_path_factory.mktemp("operators"))


def _addons(template) -> dict[str, tuple[str, dict]]:
    return {p["AddonName"]: (lid, p) for lid, p in resources(template, "AWS::EKS::Addon")}


def _depends(template, logical_id) -> set[str]:
    depends = template["Resources"][logical_id].get("DependsOn", [])
    return set([depends] if isinstance(depends, str) else depends)


def _role(template, ref) -> dict:
    return template["Resources"][ref["Fn::GetAtt"][0]]["Properties"]


def test_default_installs_the_training_operator_and_cert_manager_pinned(enterprise):
    found = _addons(enterprise.template("capacity"))
    assert found[TRAINING][1]["AddonVersion"] == "v1.0.1-eksbuild.1"
    assert found["cert-manager"][1]["AddonVersion"] == "v1.18.2-eksbuild.2"
    assert "amazon-sagemaker-spaces" not in found and "aws-ebs-csi-driver" not in found


def test_operator_addons_wait_for_the_nodes_the_pod_identity_agent_and_cert_manager(all_operators):
    t = all_operators.template("capacity")
    (hyperpod, _), = resources(t, "AWS::SageMaker::Cluster")
    found = _addons(t)
    agent = found["eks-pod-identity-agent"][0]
    for name in ("cert-manager", TRAINING, "aws-ebs-csi-driver", "amazon-sagemaker-spaces"):
        assert {hyperpod, agent} <= _depends(t, found[name][0]), name
    assert found["cert-manager"][0] in _depends(t, found[TRAINING][0])
    assert {found["cert-manager"][0], found["aws-ebs-csi-driver"][0]} <= _depends(t, found["amazon-sagemaker-spaces"][0])


def test_training_operator_role_trusts_pod_identity_of_this_cluster_only(all_operators):
    t = all_operators.template("capacity")
    _, addon = _addons(t)[TRAINING]
    (assoc,) = addon["PodIdentityAssociations"]
    assert assoc["ServiceAccount"] == "hp-training-operator-controller-manager"
    role = _role(t, assoc["RoleArn"])
    (statement,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(statement["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    assert statement["Condition"] == TRUST
    assert [json.dumps(p) for p in role["ManagedPolicyArns"]] == [json.dumps({"Fn::Join": ["", [
        "arn:", {"Ref": "AWS::Partition"}, ":iam::aws:policy/AmazonSageMakerHyperPodTrainingOperatorAccess"]]})]


def test_spaces_controller_and_ebs_csi_roles(all_operators):
    t = all_operators.template("capacity")
    found = _addons(t)
    (spaces,) = found["amazon-sagemaker-spaces"][1]["PodIdentityAssociations"]
    assert spaces["ServiceAccount"] == "jupyter-k8s-controller-manager"
    assert _role(t, spaces["RoleArn"])["AssumeRolePolicyDocument"]["Statement"][0]["Condition"] == TRUST
    (ebs,) = found["aws-ebs-csi-driver"][1]["PodIdentityAssociations"]
    assert ebs["ServiceAccount"] == "ebs-csi-controller-sa"
    role_id = ebs["RoleArn"]["Fn::GetAtt"][0]
    (policy,) = [p for _, p in resources(t, "AWS::IAM::Policy") if {"Ref": role_id} in p["Roles"]]
    by_action = {json.dumps(s["Action"]): s["Resource"] for s in policy["PolicyDocument"]["Statement"]}
    (hyperpod, _), = resources(t, "AWS::SageMaker::Cluster")
    # volumes attach on this HyperPod cluster only, not cluster/*
    assert by_action[json.dumps(["sagemaker:AttachClusterNodeVolume", "sagemaker:DetachClusterNodeVolume"])] == {
        "Fn::GetAtt": [hyperpod, "ClusterArn"]}
    assert by_action[json.dumps("eks:DescribeCluster")] == "arn:aws:eks:us-east-1:111111111111:cluster/ml-eks"


def test_operator_templates_pass_cfn_lint(all_operators):
    for path in all_operators.template_files():
        matches = lint_file(Path(path), config=ManualArgs(regions=["us-east-1"]))
        assert not [str(m) for m in matches if m.rule.id not in KEPT_WARNINGS], path.name


def test_existing_cluster_gets_the_listed_operators_from_the_governance_stack(tmp_path):
    data = copy.deepcopy(read_yaml(EXAMPLES / "existing.yaml"))
    data["cluster"]["existing"]["hyperPodClusterArn"] = "arn:aws:sagemaker:us-west-2:111111111111:cluster/abcd1234efgh"
    data["cluster"]["operators"] = ["training"]
    synthesized = synthesize(parse_spec(data, today=TODAY), tmp_path)
    t = synthesized.template("governance")
    found = _addons(t)
    assert found[TRAINING][1]["AddonVersion"] == "v1.0.1-eksbuild.1"
    assert found[TRAINING][1]["ClusterName"] == synthesized.spec.cluster.existing.eks_cluster_name
    assert found["cert-manager"][0] in _depends(t, found[TRAINING][0])
