"""The task governance provider's low findings of issue 55, fixed: its log groups encrypted with a key of its own,
its handler's functions in the VPC when given a placement, the waiter state machine's role trusted by this account's
state machines only. The construct alone on a stack (one app, cdk-nag on, synthesized once)."""

from __future__ import annotations

import pytest

from tests.synth_helpers import minimal_app

ACCOUNT, REGION = "111111111111", "us-west-2"
CLUSTER = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/abcdef123456"
CIDR = "10.20.0.0/16"
HANDLERS = {"index.on_event", "index.is_complete"}


@pytest.fixture(scope="module")
def templates(tmp_path_factory) -> dict[str, dict]:
    """Two stacks: the provider placed in a VPC's private subnets, and the provider without a placement."""
    import aws_cdk as cdk
    from aws_cdk import aws_ec2 as ec2
    from cdk_nag import AwsSolutionsChecks

    from hyperpod_gov.constructs.task_governance_provider import HandlerPlacement, TaskGovernanceProvider
    from hyperpod_gov.stacks.base import apply_feature_flags

    out = tmp_path_factory.mktemp("provider-security")
    app = minimal_app(outdir=str(out), analytics_reporting=False)
    apply_feature_flags(app)
    env = cdk.Environment(account=ACCOUNT, region=REGION)
    placed = cdk.Stack(app, "Placed", env=env)
    vpc = ec2.Vpc.from_vpc_attributes(placed, "Vpc", vpc_id="vpc-0123456789abcdef0", vpc_cidr_block=CIDR,
                                      availability_zones=["us-west-2a", "us-west-2b"],
                                      private_subnet_ids=["subnet-0aaaaaaaaaaaaaaa1", "subnet-0bbbbbbbbbbbbbbb2"])
    TaskGovernanceProvider(placed, "TaskGovernance", cluster_arn=CLUSTER, eks_cluster_name="ml-eks",
                           placement=HandlerPlacement(vpc, ec2.SubnetSelection(
                               subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS), CIDR))
    TaskGovernanceProvider(cdk.Stack(app, "Outside", env=env), "TaskGovernance", cluster_arn=CLUSTER,
                           eks_cluster_name="ml-eks")
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    assembly = app.synth()  # raises on any unacknowledged cdk-nag finding
    return {name: assembly.get_stack_by_name(name).template for name in ("Placed", "Outside")}


def _of(template: dict, kind: str) -> dict[str, dict]:
    return {k: v.get("Properties", {}) for k, v in template["Resources"].items() if v["Type"] == kind}


@pytest.mark.parametrize("stack", ["Placed", "Outside"])
def test_every_log_group_is_encrypted_with_the_providers_rotated_key(templates, stack):
    template = templates[stack]
    (key_id, key), = _of(template, "AWS::KMS::Key").items()
    assert key["EnableKeyRotation"] is True
    assert template["Resources"][key_id]["DeletionPolicy"] == "Retain"  # the kept log groups stay readable
    groups = _of(template, "AWS::Logs::LogGroup")
    assert len(groups) == 2
    assert all(g["KmsKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]} for g in groups.values())
    (logs,) = [s for s in key["KeyPolicy"]["Statement"] if s.get("Sid") == "CloudWatchLogsOfThisAccount"]
    assert logs["Principal"] == {"Service": f"logs.{REGION}.amazonaws.com"}
    context = logs["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"]
    assert context == {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":logs:{REGION}:{ACCOUNT}:log-group:*"]]}


def test_the_waiter_role_is_assumed_by_this_accounts_state_machines_only(templates):
    roles = [r for r in _of(templates["Outside"], "AWS::IAM::Role").values()
             if r["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": "states.amazonaws.com"}]
    (role,) = roles
    (statement,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Condition"] == {
        "StringEquals": {"aws:SourceAccount": ACCOUNT},
        "ArnLike": {"aws:SourceArn": {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                                                        f":states:{REGION}:{ACCOUNT}:stateMachine:*"]]}},
    }


def _handlers(template: dict) -> dict[str, dict]:
    return {f["Handler"]: f for f in _of(template, "AWS::Lambda::Function").values() if f.get("Handler") in HANDLERS}


def test_placed_handlers_run_in_the_private_subnets_and_reach_the_vpc_on_443_only(templates):
    template = templates["Placed"]
    (group_id, group), = _of(template, "AWS::EC2::SecurityGroup").items()
    assert "SecurityGroupIngress" not in group
    assert group["SecurityGroupEgress"] == [{"CidrIp": CIDR, "Description": "HTTPS to the SageMaker API "
                                             "endpoint of the VPC", "FromPort": 443, "IpProtocol": "tcp", "ToPort": 443}]
    handlers = _handlers(template)
    assert set(handlers) == HANDLERS
    for fn in handlers.values():
        assert fn["VpcConfig"] == {"SecurityGroupIds": [{"Fn::GetAtt": [group_id, "GroupId"]}],
                                   "SubnetIds": ["subnet-0aaaaaaaaaaaaaaa1", "subnet-0bbbbbbbbbbbbbbb2"]}
    # The CDK provider framework's own functions stay outside (docs/security.md).
    others = [f for f in _of(template, "AWS::Lambda::Function").values() if f.get("Handler") not in HANDLERS]
    assert len(others) == 3 and not any("VpcConfig" in f for f in others)
    (role,) = [r for r in _of(template, "AWS::IAM::Role").values()
               if r["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": "lambda.amazonaws.com"}
               and "hyperpod-gov" in r.get("Description", "")]
    assert {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                              ":iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole"]]} in role["ManagedPolicyArns"]


def test_without_a_placement_the_handlers_run_outside_with_no_vpc_rights(templates):
    template = templates["Outside"]
    assert not _of(template, "AWS::EC2::SecurityGroup")
    assert not any("VpcConfig" in f for f in _handlers(template).values())
    assert "AWSLambdaVPCAccessExecutionRole" not in str(_of(template, "AWS::IAM::Role"))

