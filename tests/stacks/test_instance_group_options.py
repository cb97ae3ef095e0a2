"""The instance-group and cluster options of issue 18 in the capacity template: one assertion per property,
cfn-lint clean, cdk-nag clean (synth fails on an unacknowledged finding)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from cfnlint.api import ManualArgs, lint_file

from hyperpod_gov.plan.fields import emit
from hyperpod_gov.plan.tables import INSTANCE_GROUP
from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY
from tests.synth_helpers import resources, synthesize

PLAN_ARN = "arn:aws:sagemaker:us-east-1:111111111111:training-plan/p5-reserved"
KEY_ARN = "arn:aws:kms:us-east-1:111111111111:key/1234abcd-12ab-34cd-56ef-1234567890ab"
SUBNETS = ["subnet-0bbbbbbbbbbbbbbbb", "subnet-0aaaaaaaaaaaaaaaa"]

OPTIONS = {
    "trainingPlanArn": PLAN_ARN,
    "subnetIds": SUBNETS,
    "labels": {"example.com/pool": "reserved"},
    "taints": [{"key": "example.com/reserved", "value": "p5", "effect": "NoSchedule"},
               {"key": "nvidia.com/gpu", "effect": "NoExecute"}],
    "lifecycle": {"sourceS3Uri": "s3://acme-lifecycle/eks/p5/", "onCreate": "start.sh"},
    "volumeSizeGb": 500,
    "volumeKmsKeyId": KEY_ARN,
    "deepHealthChecks": ["InstanceConnectivity"],
    "threadsPerCore": 1,
}


def every_option() -> dict:
    data = copy.deepcopy(BASE)
    data["cluster"]["instanceGroups"][0].update(copy.deepcopy(OPTIONS))
    data["cluster"]["instanceGroups"][1]["deepHealthChecks"] = []
    data["cluster"].update(nodeRecovery="None", nodeProvisioningMode="Continuous")
    return data


@pytest.fixture(scope="module")
def options(tmp_path_factory):
    return synthesize(parse_spec(every_option(), today=TODAY), tmp_path_factory.mktemp("options"))


def _cluster(synth) -> dict:
    (found,) = list(resources(synth.template("capacity"), "AWS::SageMaker::Cluster"))
    return found[1]


def _group(synth, name: str) -> dict:
    return next(g for g in _cluster(synth)["InstanceGroups"] if g["InstanceGroupName"] == name)


def test_training_plan(options):
    assert _group(options, "gpu")["TrainingPlanArn"] == PLAN_ARN
    assert "TrainingPlanArn" not in _group(options, "small")


def test_own_subnets_keep_the_node_security_group(options):
    override = _group(options, "gpu")["OverrideVpcConfig"]
    assert override["Subnets"] == sorted(SUBNETS)
    (sg,) = override["SecurityGroupIds"]
    assert sg == _cluster(options)["VpcConfig"]["SecurityGroupIds"][0]
    assert "OverrideVpcConfig" not in _group(options, "small")


def test_labels_and_taints(options):
    config = _group(options, "gpu")["KubernetesConfig"]
    assert config["Labels"] == {"example.com/pool": "reserved"}
    assert config["Taints"] == [{"Key": "example.com/reserved", "Value": "p5", "Effect": "NoSchedule"},
                                {"Key": "nvidia.com/gpu", "Effect": "NoExecute"}]
    assert "KubernetesConfig" not in _group(options, "small")


def test_own_lifecycle_scripts(options):
    assert _group(options, "gpu")["LifeCycleConfig"] == {"SourceS3Uri": "s3://acme-lifecycle/eks/p5/",
                                                          "OnCreate": "start.sh"}
    shipped = _group(options, "small")["LifeCycleConfig"]
    assert shipped["OnCreate"] == "on_create.sh" and "acme-lifecycle" not in json.dumps(shipped)


def _execution_policy(synth) -> list[dict]:
    t = synth.template("capacity")
    role_ref = _group(synth, "gpu")["ExecutionRole"]["Fn::GetAtt"][0]
    return [s for _, p in resources(t, "AWS::IAM::Policy")
            if any(r == {"Ref": role_ref} for r in p["Roles"]) for s in p["PolicyDocument"]["Statement"]]


def test_execution_role_reads_exactly_the_own_scripts(options):
    statements = [s for s in _execution_policy(options) if str(s["Action"]).startswith(("s3:", "['s3:"))]
    by_action = {json.dumps(s["Action"]): s for s in statements}
    get = by_action['"s3:GetObject"']
    assert get["Resource"] == {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":s3:::acme-lifecycle/eks/p5/*"]]}
    listing = by_action['"s3:ListBucket"']
    assert listing["Resource"] == {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, ":s3:::acme-lifecycle"]]}
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["eks/p5/*"]}}
    assert len(statements) == 2  # no other bucket, no wildcard bucket


def test_data_volume_key(options):
    (storage,) = _group(options, "gpu")["InstanceStorageConfigs"]
    assert storage == {"EbsVolumeConfig": {"VolumeSizeInGB": 500, "VolumeKmsKeyId": KEY_ARN}}


def test_deep_health_checks_as_given(options):
    assert _group(options, "gpu")["OnStartDeepHealthChecks"] == ["InstanceConnectivity"]
    assert "OnStartDeepHealthChecks" not in _group(options, "small")  # [] runs none


def test_threads_per_core(options):
    assert _group(options, "gpu")["ThreadsPerCore"] == 1
    assert "ThreadsPerCore" not in _group(options, "small")


def test_node_recovery_and_provisioning(options):
    cluster = _cluster(options)
    assert (cluster["NodeRecovery"], cluster["NodeProvisioningMode"]) == ("None", "Continuous")


def test_the_template_is_what_the_table_emits(options):
    """drift's expected state (the table) and the template agree on every member the plan knows."""
    from hyperpod_gov.plan import build_plan

    plan = build_plan(parse_spec(every_option(), today=TODAY))
    for g in plan.instance_groups:
        emitted = emit(INSTANCE_GROUP, g)
        template = _group(options, g.name)
        for member, value in emitted.items():
            if member == "OverrideVpcConfig":
                assert template[member]["Subnets"] == value["Subnets"]
            else:
                assert template[member] == value, member


def test_options_template_passes_cfn_lint(options):
    for path in options.template_files():
        if "capacity" not in Path(path).name:
            continue
        matches = lint_file(Path(path), config=ManualArgs(regions=["us-east-1"]))
        errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, "\n".join(errors)
        assert {m.rule.id for m in matches} <= {"W3005", "W3010"}
