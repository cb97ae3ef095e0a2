"""monitoring.prometheus and monitoring.grafana in the templates, on examples/startup.yaml with both keys: the
workspace (KMS), the add-on and its Pod Identity role (aps:RemoteWrite on that workspace only), one rule groups
namespace per team filtered to the team's queue and namespace, the alert manager routing to the owners' topics
(the same topics, now named so it reaches them, and open to it), no CloudWatch alarm beside a rule, the Grafana
workspace whose role reads that workspace only; cfn-lint clean, cdk-nag clean (synth fails on a finding)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yaml

from hyperpod_gov.plan import build_plan, names
from hyperpod_gov.plan.prometheus import ADDON, COLLECTOR_SERVICE_ACCOUNT
from hyperpod_gov.spec import parse_spec
from tests.conftest import EXAMPLES, TODAY
from tests.synth_helpers import cfn_lint, resources, synthesize
from tests.table_rows import unreached

ADMIN = "group:94f1e5b1-2c5e-4b8e-9f3a-1b2c3d4e5f60"


def prometheus_spec() -> dict:
    """examples/startup.yaml with a Prometheus workspace of its own and a Grafana workspace."""
    d = yaml.safe_load((EXAMPLES / "startup.yaml").read_text())
    d.setdefault("monitoring", {})["prometheus"] = {"workspace": "create"}
    d["monitoring"]["grafana"] = {"workspace": "create", "admins": [ADMIN]}
    return d


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    return synthesize(parse_spec(prometheus_spec(), today=TODAY), tmp_path_factory.mktemp("prometheus"))


def _monitoring(synth) -> dict:
    (name,) = [n for n in synth.templates if n.endswith("-monitoring")]
    return synth.templates[name]


def _one(template: dict, kind: str) -> tuple[str, dict]:
    (found,) = list(resources(template, kind))
    return found


def test_the_workspace_is_created_and_encrypted_with_a_rotating_key(synth):
    template = _monitoring(synth)
    _, workspace = _one(template, "AWS::APS::Workspace")
    key = workspace["KmsKeyArn"]["Fn::GetAtt"][0]
    assert template["Resources"][key]["Properties"]["EnableKeyRotation"] is True
    assert workspace["Alias"] == names.prometheus_workspace("startup")


def test_the_collector_role_trusts_pod_identity_of_this_cluster_and_writes_to_this_workspace_only(synth):
    template = _monitoring(synth)
    ws, _ = _one(template, "AWS::APS::Workspace")
    _, addon = next((lid, r) for lid, r in resources(template, "AWS::EKS::Addon")
                    if r["AddonName"] == ADDON)
    (association,) = addon["PodIdentityAssociations"]
    assert association["ServiceAccount"] == COLLECTOR_SERVICE_ACCOUNT
    role = template["Resources"][association["RoleArn"]["Fn::GetAtt"][0]]["Properties"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(trust["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": "444444444444"},
                                  "ArnEquals": {"aws:SourceArn": "arn:aws:eks:us-east-1:444444444444:cluster/"
                                                                 "gpu-cluster-eks"}}
    statements = [s for p in role["Policies"] for s in p["PolicyDocument"]["Statement"]]
    writes = [s for s in statements if "aps:RemoteWrite" in json.dumps(s["Action"])]
    assert writes == [{"Action": "aps:RemoteWrite", "Effect": "Allow", "Resource": {"Fn::GetAtt": [ws, "Arn"]},
                       "Sid": "PrometheusAccess"}]
    assert not any(a.startswith("aps:") and a != "aps:RemoteWrite" for s in statements
                   for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"]))
    assert "ManagedPolicyArns" not in role
    assert addon["AddonVersion"] == "v1.0.5-eksbuild.1"
    config = json.dumps(addon["ConfigurationValues"])
    assert "taskGovernanceMetrics" in config and ws in config  # Kueue's metrics on, written to this workspace


def _rule_groups(template: dict) -> dict[str, dict]:
    return {r["Name"]: json.loads(r["Data"])
            for _, r in resources(template, "AWS::APS::RuleGroupsNamespace")}


def test_each_team_has_its_rules_filtered_to_its_queue_and_namespace(synth):
    groups = _rule_groups(_monitoring(synth))
    plan = build_plan(synth.spec)
    assert sorted(groups) == sorted(t.name for t in plan.tenants)
    for team in plan.tenants:
        (group,) = groups[team.name]["groups"]
        assert {r["alert"] for r in group["rules"]} == {a.kind for a in team.monitoring.alarms}
        shard = next(s.name for s in plan.stacks.teams if team.name in s.members)
        topic = {a.kind: names.alarm_topic("startup", a.topic, shard) for a in team.monitoring.alarms}
        for rule in group["rules"]:
            selectors = re.findall(r'(cluster_queue|namespace)="([^"]+)"', rule["expr"])
            assert selectors, rule["expr"]
            assert set(selectors) <= {("cluster_queue", team.cluster_queue), ("namespace", team.namespace)}
            assert rule["labels"] == {"team": team.name, "topic": topic[rule["alert"]]}


def test_the_alert_manager_routes_each_owner_topic_to_that_topic(synth):
    template = _monitoring(synth)
    _, workspace = _one(template, "AWS::APS::Workspace")
    document, variables = workspace["AlertManagerDefinition"]["Fn::Sub"]
    config = yaml.safe_load(yaml.safe_load(document)["alertmanager_config"])
    routes = {r["matchers"][0]: r["receiver"] for r in config["route"]["routes"]}
    arns = {r["name"]: variables[r["sns_configs"][0]["topic_arn"][2:-1]]["Fn::Join"][1][-1]
            for r in config["receivers"]}
    # Every topic that held a team's alarms, in whichever stack, is named and routed to by its name.
    topics: dict[str, list[str]] = {}
    for stack, t in synth.templates.items():
        for lid, r in resources(t, "AWS::SNS::Topic"):
            topics.setdefault(r["TopicName"], []).append(stack)
    assert all(len(stacks) == 1 for stacks in topics.values()), topics  # one topic per name
    for group in _rule_groups(template).values():
        for rule in group["groups"][0]["rules"]:
            name = rule["labels"]["topic"]
            assert routes[f'topic="{name}"'] == name and arns[name] == f":{name}" and name in topics
    assert config["route"]["receiver"] == names.platform_topic("startup")
    # Each topic's policy lets the alert manager publish.
    policies = [p for t in synth.templates.values() for _, p in resources(t, "AWS::SNS::TopicPolicy")]
    assert len(policies) == len(topics) and all("aps.amazonaws.com" in json.dumps(p) for p in policies)


def test_no_cloudwatch_alarm_duplicates_a_rule(synth):
    assert not [lid for t in synth.templates.values() for lid, _ in resources(t, "AWS::CloudWatch::Alarm")]
    counts = build_plan(synth.spec).monitoring.counts
    assert counts.alarms == 0 and build_plan(synth.spec).monitoring.alarms  # planned, created as rules


def test_the_grafana_role_may_query_the_workspace_and_nothing_else(synth):
    template = _monitoring(synth)
    ws, _ = _one(template, "AWS::APS::Workspace")
    _, workspace = _one(template, "AWS::Grafana::Workspace")
    props = workspace
    assert props["AuthenticationProviders"] == ["AWS_SSO"] and props["PermissionType"] == "CUSTOMER_MANAGED"
    role = template["Resources"][props["RoleArn"]["Fn::GetAtt"][0]]["Properties"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "grafana.amazonaws.com"}
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": "444444444444"}}
    (statement,) = [s for p in role["Policies"] for s in p["PolicyDocument"]["Statement"]]
    assert statement["Resource"] == {"Fn::GetAtt": [ws, "Arn"]}
    assert all(a.startswith("aps:") and not a.startswith(("aps:Create", "aps:Delete", "aps:Put", "aps:Remote"))
               for a in statement["Action"])


def test_every_planned_row_reaches_the_template(synth):
    assert unreached(build_plan(synth.spec), synth.templates) == {}


def test_templates_pass_cfn_lint(synth):
    for path in synth.template_files():
        matches = cfn_lint(Path(path), "us-east-1")
        errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, "\n".join(errors)


def _writes_outside_the_workspace(template: dict) -> list[str]:
    """The statements of the collector role that allow an aps action beyond RemoteWrite on the workspace."""
    ws, _ = _one(template, "AWS::APS::Workspace")
    _, addon = next((lid, r) for lid, r in resources(template, "AWS::EKS::Addon") if r["AddonName"] == ADDON)
    role = template["Resources"][addon["PodIdentityAssociations"][0]["RoleArn"]["Fn::GetAtt"][0]]["Properties"]
    bad = []
    for s in (s for p in role["Policies"] for s in p["PolicyDocument"]["Statement"]):
        actions = [s["Action"]] if isinstance(s["Action"], str) else s["Action"]
        if any(a.startswith("aps:") for a in actions) and (
                actions != ["aps:RemoteWrite"] or s["Resource"] != {"Fn::GetAtt": [ws, "Arn"]}):
            bad.append(json.dumps(s))
    return bad


def test_the_scope_check_fails_on_a_wider_grant(synth):
    template = copy.deepcopy(_monitoring(synth))
    assert _writes_outside_the_workspace(template) == []
    for r in template["Resources"].values():
        for p in r.get("Properties", {}).get("Policies", []):
            for s in p["PolicyDocument"]["Statement"]:
                if s["Action"] == "aps:RemoteWrite":
                    s["Resource"] = "*"
    assert _writes_outside_the_workspace(template)


def test_the_topics_key_lets_the_alert_manager_encrypt(synth):
    template = _monitoring(synth)
    keys = [r for _, r in resources(template, "AWS::KMS::Key")
            if "AlertManagerPublishesToEncryptedTopics" in json.dumps(r)]
    (key,) = keys
    (statement,) = [s for s in key["KeyPolicy"]["Statement"]
                    if s.get("Sid") == "AlertManagerPublishesToEncryptedTopics"]
    assert statement["Principal"] == {"Service": "aps.amazonaws.com"}
    assert statement["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}


EXISTING_WORKSPACE = "arn:aws:aps:us-west-2:111111111111:workspace/ws-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"


@pytest.fixture(scope="module")
def existing(tmp_path_factory):
    """examples/existing.yaml (governance-only) writing to a workspace that exists."""
    d = yaml.safe_load((EXAMPLES / "existing.yaml").read_text())
    d.setdefault("monitoring", {})["prometheus"] = {"workspace": EXISTING_WORKSPACE}
    return synthesize(parse_spec(d, today=TODAY), tmp_path_factory.mktemp("prometheus-existing"))


def test_an_existing_workspace_gets_the_addon_on_the_existing_cluster_and_keeps_cloudwatch_alarms(existing):
    template = _monitoring(existing)
    assert not list(resources(template, "AWS::APS::Workspace"))
    assert not list(resources(template, "AWS::APS::RuleGroupsNamespace"))  # its alert manager is not ours
    _, addon = next((lid, r) for lid, r in resources(template, "AWS::EKS::Addon") if r["AddonName"] == ADDON)
    assert addon["ClusterName"] == existing.spec.cluster.eks_cluster_name
    role = template["Resources"][addon["PodIdentityAssociations"][0]["RoleArn"]["Fn::GetAtt"][0]]["Properties"]
    (write,) = [s for p in role["Policies"] for s in p["PolicyDocument"]["Statement"]
                if s["Action"] == "aps:RemoteWrite"]
    assert write["Resource"] == EXISTING_WORKSPACE
    assert EXISTING_WORKSPACE in json.dumps(addon["ConfigurationValues"])
    assert [lid for t in existing.templates.values() for lid, _ in resources(t, "AWS::CloudWatch::Alarm")]


def test_existing_templates_pass_cfn_lint(existing):
    for path in existing.template_files():
        matches = cfn_lint(Path(path), existing.spec.accounts.capacity.region)
        errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, "\n".join(errors)
