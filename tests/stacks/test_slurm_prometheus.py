"""monitoring.prometheus on a Slurm cluster (examples/enterprise-slurm.yaml, continuous provisioning, with a workspace
and Grafana): the capacity stack holds the workspace (KMS, no alert manager), aps:RemoteWrite on it for the
cluster's execution role, the sagemaker-observability extension as a custom resource at the pinned version writing
to the workspace's remote-write URL, its provider's least-privilege role, and the Grafana workspace; no rule, no
alarm; explain's counts equal the template's; every table row reaches it; cfn-lint clean, cdk-nag clean (synth fails
on a finding)."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from hyperpod_gov.cost import resource_counts
from hyperpod_gov.explain import explain
from hyperpod_gov.plan import build_plan, names
from hyperpod_gov.spec import parse_spec
from tests.conftest import EXAMPLES, TODAY
from tests.cost.test_inventory import explained_counts, mismatches
from tests.synth_helpers import cfn_lint, resources, synthesize
from tests.table_rows import unreached
from tests.test_app_quality import KEPT_WARNINGS

ADMIN = "group:94f1e5b1-2c5e-4b8e-9f3a-1b2c3d4e5f60"


def slurm_prometheus_spec() -> dict:
    """examples/enterprise-slurm.yaml (nodeProvisioningMode: Continuous) with a workspace of its own and Grafana."""
    d = yaml.safe_load((EXAMPLES / "enterprise-slurm.yaml").read_text())
    d.setdefault("monitoring", {})["prometheus"] = {"workspace": "create"}
    d["monitoring"]["grafana"] = {"workspace": "create", "admins": [ADMIN]}
    return d


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    return synthesize(parse_spec(slurm_prometheus_spec(), today=TODAY), tmp_path_factory.mktemp("slurm-prometheus"))


def _one(template: dict, kind: str) -> tuple[str, dict]:
    (found,) = list(resources(template, kind))
    return found


def _statements(template: dict, policy: dict) -> list[dict]:
    return policy["PolicyDocument"]["Statement"]


def test_the_workspace_is_created_encrypted_and_without_an_alert_manager(synth):
    template = synth.template("capacity")
    _, workspace = _one(template, "AWS::APS::Workspace")
    key = workspace["KmsKeyArn"]["Fn::GetAtt"][0]
    assert template["Resources"][key]["Properties"]["EnableKeyRotation"] is True
    assert workspace["Alias"] == names.prometheus_workspace(synth.spec.name)
    assert "AlertManagerDefinition" not in workspace
    assert list(resources(template, "AWS::APS::RuleGroupsNamespace")) == []
    assert list(resources(template, "AWS::CloudWatch::Alarm")) == []


def test_the_extension_is_pinned_and_writes_to_the_workspaces_remote_write_url(synth):
    template = synth.template("capacity")
    ws, _ = _one(template, "AWS::APS::Workspace")
    cluster, _ = _one(template, "AWS::SageMaker::Cluster")
    _, ext = _one(template, "Custom::ClusterExtension")
    assert ext["ExtensionName"] == "sagemaker-observability"
    assert ext["ExtensionVersion"] == "1.0.0" == build_plan(synth.spec).cluster.addon_versions.observability_extension
    assert ext["ClusterArn"] == {"Fn::GetAtt": [cluster, "ClusterArn"]}
    parts = ext["ConfigurationValues"]["Fn::Join"][1]
    assert parts == ['{"prometheus":{"remoteWriteUrl":"', {"Fn::GetAtt": [ws, "PrometheusEndpoint"]},
                     'api/v1/remote_write"}}']


def test_the_execution_role_may_remote_write_to_this_workspace_only_before_the_extension_runs(synth):
    template = synth.template("capacity")
    ws, _ = _one(template, "AWS::APS::Workspace")
    cluster_role = template["Resources"][_one(template, "AWS::SageMaker::Cluster")[0]]["Properties"][
        "InstanceGroups"][0]["ExecutionRole"]["Fn::GetAtt"][0]
    writes = [(lid, p) for lid, p in resources(template, "AWS::IAM::Policy")
              if any("aps:RemoteWrite" in json.dumps(s["Action"]) for s in _statements(template, p))]
    ((policy_id, policy),) = writes
    assert policy["Roles"] == [{"Ref": cluster_role}]
    assert _statements(template, policy) == [{"Action": "aps:RemoteWrite", "Effect": "Allow",
                                              "Resource": {"Fn::GetAtt": [ws, "Arn"]}, "Sid": "PrometheusAccess"}]
    ext_id, _ = _one(template, "Custom::ClusterExtension")
    assert policy_id in template["Resources"][ext_id]["DependsOn"]


def test_the_handler_may_manage_extensions_of_this_cluster_and_nothing_else(synth):
    template = synth.template("capacity")
    cluster, _ = _one(template, "AWS::SageMaker::Cluster")
    (policy,) = [p for _, p in resources(template, "AWS::IAM::Policy")
                 if any("ClusterExtension" in json.dumps(s["Action"]) for s in p["PolicyDocument"]["Statement"])]
    actions = {a for s in policy["PolicyDocument"]["Statement"] for a in
               ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
    assert actions == {"sagemaker:CreateClusterExtension", "sagemaker:ListClusterExtensions",
                       "sagemaker:DescribeClusterExtension", "sagemaker:UpdateClusterExtension",
                       "sagemaker:DeleteClusterExtension"}
    for s in policy["PolicyDocument"]["Statement"]:
        targets = s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]]
        assert {"Fn::GetAtt": [cluster, "ClusterArn"]} in targets
        for t in targets:
            assert t == {"Fn::GetAtt": [cluster, "ClusterArn"]} or json.dumps(t).endswith(
                ':111111111111:extension/sagemaker-*"]]}'), t


def test_grafana_reads_the_workspace_and_gets_no_per_team_dashboards(synth):
    template = synth.template("capacity")
    ws, _ = _one(template, "AWS::APS::Workspace")
    _one(template, "AWS::Grafana::Workspace")
    plan = build_plan(synth.spec)
    assert plan.prometheus.grafana.dashboards == () and plan.prometheus.rules == ()
    assert not plan.prometheus.alerts_in_prometheus
    role = [p for _, p in resources(template, "AWS::IAM::Role")
            if "grafana.amazonaws.com" in json.dumps(p["AssumeRolePolicyDocument"])]
    (statement,) = role[0]["Policies"][0]["PolicyDocument"]["Statement"]
    assert statement["Resource"] == {"Fn::GetAtt": [ws, "Arn"]}


def test_explain_counts_equal_the_template_and_say_what_is_observed(synth):
    plan = build_plan(synth.spec)
    counts = resource_counts(plan)
    assert mismatches(counts, synth.templates) == {}
    text = explain(plan, today=TODAY)
    assert explained_counts(text) == counts
    assert counts["AWS::APS::Workspace"] == 1 and counts["AWS::Grafana::Workspace"] == 1
    flat = " ".join(text.split())
    assert "the sagemaker-observability extension 1.0.0 writes node" in flat
    assert "not observed: per-team usage against quota" in flat


def test_every_planned_row_reaches_the_template(synth):
    assert unreached(build_plan(synth.spec), synth.templates) == {}


def test_a_dropped_extension_member_is_reported(synth):
    """The check can fail: without ExtensionVersion in the template, the row is unreached."""
    templates = json.loads(json.dumps(synth.templates))
    for template in templates.values():
        for r in template["Resources"].values():
            if r["Type"] == "Custom::ClusterExtension":
                del r["Properties"]["ExtensionVersion"]
    assert unreached(build_plan(synth.spec), templates) == {
        "ClusterExtension (HyperPod cluster extension)": ["ExtensionVersion"]}


def test_cfn_lint_finds_no_error_and_no_warning_beyond_the_kept_ones(synth):
    for path in synth.template_files():
        matches = cfn_lint(path, synth.spec.accounts.capacity.region)
        assert [str(m) for m in matches if m.rule.id.startswith("E")] == [], path.name
        assert not {m.rule.id for m in matches} - set(KEPT_WARNINGS), [str(m) for m in matches]


def test_an_existing_workspace_is_written_to_and_nothing_is_created(tmp_path):
    d = slurm_prometheus_spec()
    arn = "arn:aws:aps:us-east-1:111111111111:workspace/ws-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"
    d["monitoring"] = {"prometheus": {"workspace": arn}}
    plan = build_plan(parse_spec(d, today=TODAY))
    assert plan.prometheus.workspace_arn == arn and not plan.prometheus.creates
    from hyperpod_gov.constructs.prometheus import _workspace_endpoint
    from hyperpod_gov.plan.slurm_observability import configuration_text, remote_write_url

    assert json.loads(configuration_text(plan.prometheus.extension, remote_write_url(_workspace_endpoint(arn)))) == {
        "prometheus": {"remoteWriteUrl": "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/"
                                         "ws-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d/api/v1/remote_write"}}
    assert resource_counts(plan).get("AWS::APS::Workspace", 0) == 0


def test_cfn_lint_sets_aside_only_its_unknown_cluster_extension_actions(synth, tmp_path):
    """Without the handler policy's cfn-lint metadata, W3037 names exactly the five cluster extension actions (its
    IAM action list predates the API): the suppression hides nothing else."""
    (path,) = [p for p in synth.template_files() if p.name.endswith("-capacity.template.json")]
    template = json.loads(path.read_text())
    for r in template["Resources"].values():
        r.get("Metadata", {}).pop("cfn-lint", None)
    bare = tmp_path / path.name
    bare.write_text(json.dumps(template))
    flagged = {re.search(r"'(\w+)' is not one of", str(m)).group(1)
               for m in cfn_lint(bare, synth.spec.accounts.capacity.region) if m.rule.id == "W3037"}
    assert flagged == {f"{verb}clusterextension" for verb in ("create", "describe", "update", "delete")} | {
        "listclusterextensions"}


def test_the_handler_runs_in_the_private_subnets_and_reaches_only_https_in_the_vpc(synth):
    """The VPC has the SageMaker API endpoint (plan.invariants.provider_in_vpc), so the handler's two functions run
    there, as the task governance handler's do, behind a security group that sends HTTPS to the VPC only."""
    template = synth.template("capacity")
    handlers = {lid: p for lid, p in resources(template, "AWS::Lambda::Function")
                if p.get("Handler") in ("index.on_event", "index.is_complete") and lid.startswith("PrometheusExtension")}
    assert len(handlers) == 2
    (sg_id, sg), = [(lid, p) for lid, p in resources(template, "AWS::EC2::SecurityGroup")
                    if "cluster extension handler" in p["GroupDescription"]]
    assert sg["SecurityGroupEgress"] == [{"CidrIp": build_plan(synth.spec).network.cidr, "Description":
                                          "HTTPS to the SageMaker API endpoint of the VPC", "FromPort": 443,
                                          "IpProtocol": "tcp", "ToPort": 443}]
    for p in handlers.values():
        assert p["VpcConfig"]["SecurityGroupIds"] == [{"Fn::GetAtt": [sg_id, "GroupId"]}]
        assert len(p["VpcConfig"]["SubnetIds"]) >= 1
