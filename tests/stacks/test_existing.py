"""Governance-only mode (cluster.existing): what synth creates on a cluster that runs already, in a region with
the native task-governance types (us-east-1) and in one without (us-west-2)."""

from __future__ import annotations

import copy
import json
import re

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY
from tests.synth_helpers import cfn_lint, minimal_app, resources, synthesize
from tests.table_rows import unreached
from tests.test_app_quality import KEPT_WARNINGS

ARN = "arn:aws:sagemaker:{region}:111111111111:cluster/abcd1234efgh"
SUBNETS = ["subnet-0aaaaaaaaaaaaaaa1", "subnet-0bbbbbbbbbbbbbbb2"]
CAPACITY_TYPES = ("AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::NatGateway", "AWS::EC2::VPCEndpoint",
                  "AWS::EKS::Cluster", "AWS::SageMaker::Cluster", "AWS::S3::Bucket", "Custom::CDKBucketDeployment",
                  "AWS::EKS::Nodegroup")


def _spec(region: str, *, installs: bool):
    data = copy.deepcopy(read_yaml(EXAMPLES / "existing.yaml"))
    data["accounts"]["capacity"]["region"] = region
    e = data["cluster"]["existing"]
    e["hyperPodClusterArn"] = ARN.format(region=region)
    if installs:  # the scheduler and observability installed by hyperpod-gov; a team without a contract
        e["installs"] = {"scheduler": True, "observability": True}
        data["teams"].append({"name": "adhoc", "quota": [], "sharing": {"strategy": "LendAndBorrow"}})
    return parse_spec(data, today=TODAY)


@pytest.fixture(scope="module", params=[("us-east-1", False), ("us-west-2", True)], ids=["east-native", "west-cr"])
def governed(request, tmp_path_factory):
    region, installs = request.param
    spec = _spec(region, installs=installs)
    return build_plan(spec), synthesize(spec, tmp_path_factory.mktemp(f"existing-{region}"))


def test_every_planned_table_row_reaches_the_templates(governed):
    """Each field-table row a governance-only spec plans a value for is in its templates (``tests/table_rows.py``):
    quotas, the cluster policy, access entries and Pod Identity associations; not the cluster, its groups, admins
    or add-ons, which the existing cluster has."""
    plan, synthesized = governed
    assert unreached(plan, synthesized.templates) == {}


def _all(synthesized, type_):
    return [(name, lid, p) for name, t in synthesized.templates.items() for lid, p in resources(t, type_)]


def _references(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "Ref" and isinstance(v, str):
                yield v
            elif k == "Fn::GetAtt":
                yield v[0] if isinstance(v, list) else v.split(".")[0]
            elif k == "Condition" and isinstance(v, str):
                yield v
            else:
                yield from _references(v)
    elif isinstance(node, list):
        for v in node:
            yield from _references(v)


def test_the_layout_has_no_capacity_stack(governed):
    plan, s = governed
    assert sorted(s.templates) == sorted(plan.stacks.all_names)
    assert plan.stacks.capacity is None and f"{plan.name}-capacity" not in s.templates
    assert f"{plan.name}-governance" in s.templates


def test_no_capacity_resource_is_created(governed):
    _, s = governed
    for type_ in CAPACITY_TYPES:
        assert not _all(s, type_), type_


def test_no_stack_imports_or_exports_a_value(governed):
    _, s = governed
    for name, template in s.templates.items():
        text = json.dumps(template)
        assert "Fn::ImportValue" not in text, name
        # Outputs only for people to read (the cluster's, the teams'): none is exported for another stack.
        assert not [k for k, o in template.get("Outputs", {}).items() if "Export" in o], name
        # every Ref and GetAtt names something of this template: no value comes from another stack
        own = set(template["Resources"]) | set(template.get("Parameters", {})) | set(template.get("Conditions", {}))
        assert not {r for r in _references(template) if not r.startswith("AWS::")} - own, name


def test_policy_and_quotas_apply_to_the_given_cluster_arn(governed):
    plan, s = governed
    arn = plan.hyperpod_cluster_arn
    if plan.task_governance_backend == "native":
        policies = _all(s, "AWS::SageMaker::ClusterSchedulerConfig")
        quotas = _all(s, "AWS::SageMaker::ComputeQuota")
    else:
        policies = _all(s, "Custom::ClusterSchedulerConfig")
        quotas = _all(s, "Custom::ComputeQuota")
    assert [p["ClusterArn"] for _, _, p in policies] == [arn]
    assert len(quotas) == len(plan.tenants) and all(p["ClusterArn"] == arn for _, _, p in quotas)


def test_the_kubectl_handler_runs_in_the_given_subnets_with_the_given_security_group(governed):
    plan, s = governed
    functions = [p for _, _, p in _all(s, "AWS::Lambda::Function") if "VpcConfig" in p]
    kubectl = [p for p in functions if p.get("FunctionName") == plan.kubectl_provider_function]
    assert len(kubectl) == 1
    handler = [p for p in functions if p.get("Description") == "onEvent handler for EKS kubectl resource provider"]
    assert len(handler) == 1
    for p in (kubectl[0], handler[0]):
        assert p["VpcConfig"]["SubnetIds"] == SUBNETS
        assert p["VpcConfig"]["SecurityGroupIds"] == ["sg-0123456789abcdef0"]


def test_the_kubectl_handler_is_cluster_admin_of_the_existing_cluster_only(governed):
    plan, s = governed
    entries = [p for _, p in resources(s.template("governance"), "AWS::EKS::AccessEntry")]
    assert len(entries) == 1
    (entry,) = entries
    assert entry["ClusterName"] == "lab-eks"
    assert json.dumps(entry["AccessPolicies"][0]["PolicyArn"]).endswith(
        ':eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"]]}')
    assert entry["AccessPolicies"][0]["AccessScope"] == {"Type": "cluster"}
    assert "Fn::GetAtt" in json.dumps(entry["PrincipalArn"])  # the handler's own role, nobody else


def test_every_stacks_kubernetes_objects_go_through_the_named_kubectl_provider(governed):
    plan, s = governed
    token = plan.kubectl_service_token
    assert token == f"arn:aws:lambda:{plan.region}:111111111111:function:lab-ml-kubectl-provider"
    for name, template in s.templates.items():
        for lid, r in template["Resources"].items():
            if r["Type"].startswith("Custom::AWSCDK-EKS-"):
                service_token = r["Properties"]["ServiceToken"]
                if name == f"{plan.name}-governance":
                    assert "Fn::GetAtt" in service_token, lid  # the provider itself, in the same stack
                else:
                    assert service_token == token, (name, lid)
                assert r["Properties"]["ClusterName"] == "lab-eks"


def test_the_team_and_access_stacks_deploy_after_the_governance_stack(governed):
    plan, s = governed
    manifest = json.loads((s.out_dir / "cdk.out" / "manifest.json").read_text())
    for shard in plan.stacks.teams:
        assert f"{plan.name}-governance" in manifest["artifacts"][shard.name]["dependencies"]


def test_only_what_the_spec_installs_is_installed(governed):
    plan, s = governed
    addons = sorted(p["AddonName"] for _, _, p in _all(s, "AWS::EKS::Addon"))
    e = plan.cluster.existing
    expected = (["amazon-cloudwatch-observability"] if e.installs_observability else []) + (
        ["amazon-sagemaker-hyperpod-taskgovernance"] if e.installs_scheduler else [])
    assert addons == expected
    if e.installs_scheduler:
        (addon,) = [r for r in s.template("governance")["Resources"].values() if r["Type"] == "AWS::EKS::Addon"
                    and r["Properties"]["AddonName"] == "amazon-sagemaker-hyperpod-taskgovernance"]
        assert addon["Properties"]["ClusterName"] == "lab-eks"
        policy = next(lid for lid, r in s.template("governance")["Resources"].items()
                      if r["Type"].endswith("ClusterSchedulerConfig"))
        assert any(d.startswith("SchedulerTaskGovernance")
                   for d in s.template("governance")["Resources"][policy].get("DependsOn", []))


def test_templates_are_cfn_lint_clean(governed):
    plan, s = governed
    for path in s.template_files():
        matches = cfn_lint(path, plan.region)
        assert not [str(m) for m in matches if m.rule.id not in KEPT_WARNINGS], path.name


def test_cdk_nag_acknowledgements_of_the_kubectl_handler_name_a_finding(governed):
    """Synth fails on an unacknowledged AwsSolutions finding; the handler's are exact findings with reasons."""
    plan, s = governed
    meta = json.loads((s.out_dir / "cdk.out" / f"{plan.name}-governance.metadata.json").read_text())
    acks = {k: v for construct, entries in meta.items() if "/Kubectl/" in construct for e in entries
            if e["type"] == "aws:cdk:acknowledged-rules" for k, v in e["data"].items()}
    assert acks and all(re.match(r"AwsSolutions::AwsSolutions-(IAM4\[|IAM5\[|L1$)", k) for k in acks)
    assert all(len(reason) > 40 for reason in acks.values())


def test_the_plans_resource_estimate_holds_for_team_and_access_stacks(governed):
    from tests.test_app_quality import _estimated_resources

    plan, s = governed
    estimate = _estimated_resources(plan)
    assert estimate == {name: len(s.templates[name]["Resources"]) for name in estimate}


def test_the_pipeline_deploys_the_same_stacks_without_a_capacity_stack(tmp_path):
    import aws_cdk as cdk

    from stacks.pipeline import build_pipeline_app

    spec = _spec("us-west-2", installs=False)
    plan = build_plan(spec)
    app = minimal_app(outdir=str(tmp_path), context={
        "pipelineRepository": "acme/ml-governance",
        "pipelineConnectionArn": "arn:aws:codeconnections:us-west-2:111111111111:connection/"
                                 "4f7e2a10-9c1b-4d2e-8f3a-6b5c4d3e2f1a"})
    pipeline_app = build_pipeline_app(spec, spec_path="spec.yaml", app=app, nag=False)
    (stage,) = pipeline_app.node.find_child(plan.stacks.pipeline).stages  # no consumer or studio stage here
    names = sorted(s.stack_name for s in stage.stacks)
    assert names == sorted(plan.stacks.all_names)
    assert not any(n.endswith("-capacity") for n in names)
