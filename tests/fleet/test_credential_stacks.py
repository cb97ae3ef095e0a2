"""The MultiKueue worker credential's infrastructure (constructs/multikueue_credential.py, stacks/multikueue.py,
charts/multikueue_credential.py), for examples/fleet.yaml's dispatch (manager use1-mgr, workers use1-train and
usw2-train): the worker's secret readable by the manager's copier role alone, the Kubernetes Roles granting one verb
on one name, the schedules, the run at deploy. The constructs alone on stacks (cdk-nag on, cfn-lint), one synth."""

from __future__ import annotations

import json

import pytest

from tests.conftest import EXAMPLES
from tests.synth_helpers import cfn_lint, minimal_app

ACCOUNT = "111111111111"
COPIER_ARN = {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":iam::{ACCOUNT}:role/acme-use1-mgr-mk-copier"]]}
ROOT = {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":iam::{ACCOUNT}:root"]]}


@pytest.fixture(scope="module")
def fleet():
    from hyperpod_gov import load_fleet
    from hyperpod_gov.plan.fleet import build_fleet

    return build_fleet(load_fleet(EXAMPLES / "fleet.yaml"))


@pytest.fixture(scope="module")
def credentials(fleet):
    from hyperpod_gov.fleet_construct import credential_plans

    return credential_plans(fleet)


def build(credentials, out):
    """The manager's copier and the usw2-train worker's credential, each on a stack in its account and region."""
    import aws_cdk as cdk
    from aws_cdk import aws_ec2 as ec2
    from cdk_nag import AwsSolutionsChecks

    from hyperpod_gov.constructs import multikueue_credential as module
    from hyperpod_gov.constructs.multikueue_function import Placement
    from hyperpod_gov.stacks.base import apply_feature_flags

    app = minimal_app(outdir=str(out), analytics_reporting=False)
    apply_feature_flags(app)
    stacks = {}
    for cluster, kind in (("use1-mgr", module.ManagerCopier), ("usw2-train", module.WorkerCredential)):
        cp = credentials[cluster]
        stack = cdk.Stack(app, cp.stack, env=cdk.Environment(account=cp.account, region=cp.region))
        vpc = ec2.Vpc.from_vpc_attributes(stack, "Vpc", vpc_id="vpc-0123456789abcdef0", vpc_cidr_block="10.0.0.0/16",
                                          availability_zones=[f"{cp.region}a", f"{cp.region}b"],
                                          private_subnet_ids=["subnet-0aaaaaaaaaaaaaaa1", "subnet-0bbbbbbbbbbbbbbb2"])
        placement = Placement(vpc, ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
                              cluster_security_group_id="sg-0123456789abcdef0")
        kind(stack, "Credential", cp=cp, placement=placement)
        stacks[cluster] = stack
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app, stacks


@pytest.fixture(scope="module")
def templates(credentials, tmp_path_factory):
    out = tmp_path_factory.mktemp("credential")
    app, stacks = build(credentials, out)
    assembly = app.synth()  # raises on any unacknowledged cdk-nag finding
    return {cluster: (assembly.get_stack_by_name(s.stack_name).template,
                      out / f"{s.stack_name}.template.json", credentials[cluster].region)
            for cluster, s in stacks.items()}


def _of(template, kind):
    return {k: v.get("Properties", {}) for k, v in template["Resources"].items() if v["Type"] == kind}


def test_the_plans_name_each_side_before_it_exists(credentials):
    manager, worker = credentials["use1-mgr"], credentials["usw2-train"]
    assert manager.stack == "acme-use1-mgr-multikueue" and worker.stack == "acme-usw2-train-multikueue"
    assert worker.copier_role == manager.copier_role == "acme-use1-mgr-mk-copier"
    assert worker.secret.secret == "hyperpod-gov/multikueue/acme-usw2-train/kubeconfig"
    assert [w.worker for w in manager.workers] == ["use1-train", "usw2-train"]  # dispatch order
    assert [w.kubeconfig_secret for w in manager.workers] == ["use1-train-kubeconfig", "usw2-train-kubeconfig"]


def test_templates_pass_cfn_lint(templates):
    """No error; W3005 only where aws-cdk-lib's Function adds DependsOn its role on top of the Ref (the warning
    test_app_quality keeps), never on what this construct declares."""
    for template, path, region in templates.values():
        matches = cfn_lint(path, region)
        assert [str(m) for m in matches if m.rule.id != "W3005"] == []
        assert all("Function" in "/".join(map(str, m.path)) and "Role" in m.message for m in matches), matches


def test_the_worker_secret_is_readable_by_the_managers_copier_role_only(templates):
    template = templates["usw2-train"][0]
    (policy,) = _of(template, "AWS::SecretsManager::ResourcePolicy").values()
    assert policy["BlockPublicPolicy"] is True
    (statement,) = policy["ResourcePolicy"]["Statement"]
    assert statement["Effect"] == "Allow" and statement["Action"] == "secretsmanager:GetSecretValue"
    assert statement["Principal"] == {"AWS": ROOT}
    assert statement["Condition"] == {"ArnEquals": {"aws:PrincipalArn": COPIER_ARN}}
    (secret_id, secret), = _of(template, "AWS::SecretsManager::Secret").items()
    assert policy["SecretId"] == {"Ref": secret_id}
    assert "SecretString" not in secret and "GenerateSecretString" not in secret  # the minter writes every value


def test_the_worker_key_is_rotated_and_decrypts_for_the_copier_through_secrets_manager_only(templates):
    template = templates["usw2-train"][0]
    (secret,) = _of(template, "AWS::SecretsManager::Secret").values()
    key_id = secret["KmsKeyId"]["Fn::GetAtt"][0]
    key = template["Resources"][key_id]["Properties"]
    assert key["EnableKeyRotation"] is True
    by_sid = {s.get("Sid"): s for s in key["KeyPolicy"]["Statement"]}
    assert by_sid[None]["Principal"] == {"AWS": ROOT} and by_sid[None]["Action"] == "kms:*"  # the account admin
    copier = by_sid["TheCopierDecryptsThroughSecretsManager"]
    assert copier["Action"] == "kms:Decrypt"
    assert copier["Condition"] == {"StringEquals": {"kms:ViaService": "secretsmanager.us-west-2.amazonaws.com"},
                                   "ArnEquals": {"aws:PrincipalArn": COPIER_ARN}}
    assert set(by_sid) == {None, "TheCopierDecryptsThroughSecretsManager"}  # the minter's use: its role's policy


def _function_policy(template, handler):
    (function,) = [f for f in _of(template, "AWS::Lambda::Function").values() if f["Handler"] == handler]
    role = function["Role"]["Fn::GetAtt"][0]
    policies = [p for p in _of(template, "AWS::IAM::Policy").values() if {"Ref": role} in p["Roles"]]
    return function, role, [s for p in policies for s in p["PolicyDocument"]["Statement"]]


def test_the_minter_may_read_its_cluster_and_write_its_secret_and_nothing_else(templates):
    template = templates["usw2-train"][0]
    function, role, statements = _function_policy(template, "index.mint")
    (secret_id,) = _of(template, "AWS::SecretsManager::Secret")
    (key_id,) = _of(template, "AWS::KMS::Key").keys() - {k for k in _of(template, "AWS::KMS::Key") if "Logs" in k}
    own = {s["Sid"]: (s["Action"], s["Resource"]) for s in statements if "Sid" in s}
    key_use = next(s for s in statements if s.get("Sid") == "UseTheKeyThroughSecretsManager")
    assert key_use["Condition"] == {"StringEquals": {"kms:ViaService": "secretsmanager.us-west-2.amazonaws.com"}}
    assert own == {
        "UseTheKeyThroughSecretsManager": (["kms:Decrypt", "kms:GenerateDataKey"], {"Fn::GetAtt": [key_id, "Arn"]}),
        "ReadTheCluster": ("eks:DescribeCluster", {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                                                                      ":eks:us-west-2:111111111111:cluster/acme-usw2-train-eks"]]}),
        "WriteTheSecret": ("secretsmanager:PutSecretValue", {"Ref": secret_id})}
    # the rest: its own log group only (CDK's grant)
    assert all(s["Action"] in (["logs:CreateLogStream", "logs:PutLogEvents"],) for s in statements if "Sid" not in s)
    (entry,) = _of(template, "AWS::EKS::AccessEntry").values()
    assert entry == {"ClusterName": "acme-usw2-train-eks", "KubernetesGroups": ["hyperpod-gov:multikueue-minter"],
                     "PrincipalArn": {"Fn::GetAtt": [role, "Arn"]}, "Type": "STANDARD"}
    assert function["Environment"]["Variables"]["SECRET_ID"] == "hyperpod-gov/multikueue/acme-usw2-train/kubeconfig"


def test_the_copier_role_has_its_fixed_name_and_reads_only_the_workers_secrets(templates):
    template = templates["use1-mgr"][0]
    function, role, statements = _function_policy(template, "index.copy")
    assert template["Resources"][role]["Properties"]["RoleName"] == "acme-use1-mgr-mk-copier"
    patterns = [{"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":secretsmanager:{region}:{ACCOUNT}:secret:"
                                   f"hyperpod-gov/multikueue/acme-{w}/kubeconfig-??????"]]}
                for w, region in (("use1-train", "us-east-1"), ("usw2-train", "us-west-2"))]
    by_sid = {s["Sid"]: s for s in statements if "Sid" in s}
    assert by_sid["ReadTheWorkersSecrets"]["Resource"] == patterns
    decrypt = by_sid["DecryptTheWorkersSecrets"]
    assert decrypt["Action"] == "kms:Decrypt"
    assert decrypt["Condition"] == {
        "StringEquals": {"kms:ViaService": ["secretsmanager.us-east-1.amazonaws.com",
                                           "secretsmanager.us-west-2.amazonaws.com"]},
        "StringLike": {"kms:EncryptionContext:SecretARN": patterns}}
    assert set(by_sid) == {"ReadTheCluster", "ReadTheWorkersSecrets", "DecryptTheWorkersSecrets"}
    joined = function["Environment"]["Variables"]["WORKERS"]["Fn::Join"]
    workers = json.loads("".join("aws" if p == {"Ref": "AWS::Partition"} else p for p in joined[1]))
    assert workers[1]["secretArn"] == ("arn:aws:secretsmanager:us-west-2:111111111111:secret:"
                                       "hyperpod-gov/multikueue/acme-usw2-train/kubeconfig")  # the partial ARN
    assert [w["kubeconfigSecret"] for w in workers] == ["use1-train-kubeconfig", "usw2-train-kubeconfig"]
    (entry,) = _of(template, "AWS::EKS::AccessEntry").values()
    assert entry["KubernetesGroups"] == ["hyperpod-gov:multikueue-copier"]


@pytest.mark.parametrize("cluster", ["use1-mgr", "usw2-train"])
def test_each_function_runs_in_the_private_subnets_and_reaches_the_api_through_the_cluster_group(templates, cluster):
    template = templates[cluster][0]
    (function,) = _of(template, "AWS::Lambda::Function").values()
    assert function["VpcConfig"]["SubnetIds"] == ["subnet-0aaaaaaaaaaaaaaa1", "subnet-0bbbbbbbbbbbbbbb2"]
    (group_id, group), = _of(template, "AWS::EC2::SecurityGroup").items()
    assert [(e["CidrIp"], e["FromPort"], e["ToPort"]) for e in group["SecurityGroupEgress"]] == [("0.0.0.0/0", 443, 443)]
    assert "SecurityGroupIngress" not in group
    (ingress,) = _of(template, "AWS::EC2::SecurityGroupIngress").values()
    assert (ingress["GroupId"], ingress["FromPort"], ingress["SourceSecurityGroupId"]) == (
        "sg-0123456789abcdef0", 443, {"Fn::GetAtt": [group_id, "GroupId"]})


@pytest.mark.parametrize("cluster", ["use1-mgr", "usw2-train"])
def test_the_schedule_role_is_assumed_by_this_accounts_scheduler_only(templates, cluster):
    template, _, region = templates[cluster]
    roles = [r for r in _of(template, "AWS::IAM::Role").values()
             if r["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": "scheduler.amazonaws.com"}]
    (role,) = roles
    (statement,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Condition"] == {"StringEquals": {
        "aws:SourceAccount": ACCOUNT,
        "aws:SourceArn": {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"},
                                            f":scheduler:{region}:{ACCOUNT}:schedule-group/default"]]}}}


def test_the_copier_runs_half_an_hour_after_each_mint_every_8_hours(templates):
    (mint,) = _of(templates["usw2-train"][0], "AWS::Scheduler::Schedule").values()
    (copy,) = _of(templates["use1-mgr"][0], "AWS::Scheduler::Schedule").values()
    assert (mint["ScheduleExpression"], copy["ScheduleExpression"]) == ("cron(0 0/8 * * ? *)", "cron(30 0/8 * * ? *)")
    assert mint["ScheduleExpressionTimezone"] == copy["ScheduleExpressionTimezone"] == "UTC"


@pytest.mark.parametrize("cluster", ["use1-mgr", "usw2-train"])
def test_the_first_run_at_deploy_waits_for_the_access_entry_and_the_rights(templates, cluster):
    template = templates[cluster][0]
    (run_id,) = [k for k, v in template["Resources"].items() if v["Type"] == "Custom::HyperPodGovMultiKueueCredential"]
    run = template["Resources"][run_id]
    (function_id,) = _of(template, "AWS::Lambda::Function")
    assert run["Properties"]["ServiceToken"] == {"Fn::GetAtt": [function_id, "Arn"]}
    needs = {template["Resources"][d]["Type"] for d in run["DependsOn"]}
    assert {"AWS::EKS::AccessEntry", "AWS::IAM::Policy"} <= needs


def test_an_unacknowledged_finding_fails_the_synth(credentials, tmp_path, monkeypatch):
    """The nag check runs on these stacks: without the rotation acknowledgement, SMG4 fails the synth."""
    from hyperpod_gov.constructs import multikueue_credential as module

    real = module.acknowledge
    monkeypatch.setattr(module, "acknowledge", lambda c, findings: real(
        c, [f for f in findings if f[0] != "AwsSolutions-SMG4"]))
    app, _ = build(credentials, tmp_path)
    with pytest.raises(Exception, match="AwsSolutions-SMG4"):
        app.synth()


def test_the_pipeline_deploys_each_dispatch_members_credential_stack_after_its_governance():
    from stacks.pipeline_fleet import fleet_waves

    stages = {s.stage_name: s for _, _, _, wave in fleet_waves(minimal_app(), str(EXAMPLES / "fleet.yaml"), nag=False)
              for s in wave}
    credential = {name: s.credential.stack_name for name, s in stages.items() if s.credential is not None}
    assert credential == {"Deploy-use1-mgr": "acme-use1-mgr-multikueue", "Deploy-use1-train": "acme-use1-train-multikueue",
                          "Deploy-usw2-train": "acme-usw2-train-multikueue"}
    stage = stages["Deploy-usw2-train"]
    assert stage.governance.stack("acme-usw2-train-governance") in stage.credential.dependencies


def test_on_an_existing_cluster_the_function_uses_its_subnets_and_the_kubectl_handlers_group(credentials, tmp_path):
    """Governance-only mode: no capacity stack; the spec's subnets, and its security group, which reaches the API
    already (the kubectl handler's), so no ingress rule is added to a group this app does not own."""
    import dataclasses

    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from hyperpod_gov import load_spec
    from hyperpod_gov.construct import plan_of
    from hyperpod_gov.constructs.multikueue_credential import WorkerCredential
    from hyperpod_gov.stacks.multikueue import placement

    plan, _ = plan_of(load_spec(EXAMPLES / "existing.yaml"))
    existing = plan.cluster.existing
    app = minimal_app(outdir=str(tmp_path), analytics_reporting=False)
    stack = cdk.Stack(app, "Existing", env=cdk.Environment(account=plan.account, region=plan.region))
    cp = dataclasses.replace(credentials["usw2-train"], eks_cluster=plan.eks_cluster_name)
    WorkerCredential(stack, "Credential", cp=cp, placement=placement(stack, plan, None))
    template = Template.from_stack(stack).to_json()
    (function,) = _of(template, "AWS::Lambda::Function").values()
    assert function["VpcConfig"] == {"SecurityGroupIds": [existing.security_group_id],
                                     "SubnetIds": list(existing.subnet_ids)}
    assert _of(template, "AWS::EC2::SecurityGroup") == _of(template, "AWS::EC2::SecurityGroupIngress") == {}
