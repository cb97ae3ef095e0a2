"""The SDK-backed task governance custom resource: its Lambda handler (Stubber) and its constructs (synth)."""

from __future__ import annotations

import copy
import datetime as dt
import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_gov.constructs.task_governance_provider import HANDLER_DIR
from tests.synth_helpers import minimal_app

REGION = "us-west-2"
ACCOUNT = "111111111111"
CLUSTER = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/abcdef123456"
OTHER_CLUSTER = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/zyxwvu654321"
POLICY_ID = "policy000001"
QUOTA_ID = "quota0000001"
POLICY_ARN = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster-scheduler-config/{POLICY_ID}"
QUOTA_ARN = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:compute-quota/{QUOTA_ID}"
TOKEN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:provider"
NOW = dt.datetime(2026, 11, 30, tzinfo=dt.timezone.utc)


def _load_handler():
    spec = importlib.util.spec_from_file_location("task_governance_provider_index", HANDLER_DIR / "index.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


index = _load_handler()


def as_cloudformation_sends(value: Any) -> Any:
    """Custom resource events carry every scalar as a string."""
    if isinstance(value, dict):
        return {k: as_cloudformation_sends(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_cloudformation_sends(v) for v in value]
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


POLICY = {
    "Name": "acme-policy",
    "ClusterArn": CLUSTER,
    "Description": "hyperpod-gov cluster policy of ml",
    "SchedulerConfig": {"PriorityClasses": [{"Name": "inference", "Weight": 100}, {"Name": "training", "Weight": 80}],
                        "FairShare": "Enabled"},
}
QUOTA = {
    "Name": "team-a-quota",
    "ClusterArn": CLUSTER,
    "ActivationState": "Enabled",
    "Description": "hyperpod-gov compute quota of team team-a",
    "ComputeQuotaConfig": {
        "ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 8},
                                  {"InstanceType": "ml.g5.8xlarge", "Count": 2}],
        "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 50},
        "PreemptTeamTasks": "LowerPriority",
    },
    "ComputeQuotaTarget": {"TeamName": "team-a", "FairShareWeight": 100},
    "Tags": [{"Key": "hyperpod-gov:cost-owner", "Value": "finance@example.com"}],
}


def event(request_type: str, resource_type: str, properties: dict, *, physical_id: str | None = None,
          old: dict | None = None) -> dict[str, Any]:
    e: dict[str, Any] = {
        "RequestType": request_type,
        "ResourceType": resource_type,
        "ResourceProperties": {"ServiceToken": TOKEN, **as_cloudformation_sends(properties)},
        "LogicalResourceId": "Resource",
        "StackId": f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/s/1",
        "RequestId": "b2c1c2e0-0000-4000-8000-000000000000",
    }
    if physical_id is not None:
        e["PhysicalResourceId"] = physical_id
    if old is not None:
        e["OldResourceProperties"] = {"ServiceToken": TOKEN, **as_cloudformation_sends(old)}
    return e


@pytest.fixture
def sagemaker():
    """A real client of the installed service model: Stubber checks every request against it."""
    client = boto3.client("sagemaker", region_name=REGION)
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def policy_summary(name: str, resource_id: str, status: str = "Created", cluster: str = CLUSTER) -> dict:
    return {"ClusterSchedulerConfigArn": POLICY_ARN.replace(POLICY_ID, resource_id),
            "ClusterSchedulerConfigId": resource_id, "ClusterSchedulerConfigVersion": 1, "Name": name,
            "CreationTime": NOW, "Status": status, "ClusterArn": cluster}


def quota_summary(name: str, resource_id: str, status: str = "Created") -> dict:
    return {"ComputeQuotaArn": QUOTA_ARN.replace(QUOTA_ID, resource_id), "ComputeQuotaId": resource_id,
            "Name": name, "ComputeQuotaVersion": 1, "Status": status, "ClusterArn": CLUSTER,
            "ComputeQuotaTarget": {"TeamName": "team-a"}, "CreationTime": NOW}


def describe_policy(status: str, version: int = 1, **extra: Any) -> dict:
    return {"ClusterSchedulerConfigArn": POLICY_ARN, "ClusterSchedulerConfigId": POLICY_ID, "Name": "acme-policy",
            "ClusterSchedulerConfigVersion": version, "Status": status, "CreationTime": NOW, **extra}


def describe_quota(status: str, version: int = 1, **extra: Any) -> dict:
    return {"ComputeQuotaArn": QUOTA_ARN, "ComputeQuotaId": QUOTA_ID, "Name": "team-a-quota",
            "ComputeQuotaVersion": version, "Status": status, "ClusterArn": CLUSTER,
            "ComputeQuotaTarget": {"TeamName": "team-a"}, "CreationTime": NOW, **extra}


def typed(properties: dict) -> dict:
    """The API request: the properties as given (ints stay ints), ServiceToken dropped."""
    return copy.deepcopy(properties)


# --- properties ---------------------------------------------------------------------------------

def test_strings_from_cloudformation_become_the_integers_the_api_wants(sagemaker):
    client, _ = sagemaker
    request = index.request_properties(index.KINDS["Custom::ComputeQuota"],
                                       {"ServiceToken": TOKEN, **as_cloudformation_sends(QUOTA)}, client)
    assert request == QUOTA
    resources = request["ComputeQuotaConfig"]["ComputeQuotaResources"]
    assert [r.get("Accelerators", r.get("Count")) for r in resources] == [8, 2]
    assert request["ComputeQuotaConfig"]["ResourceSharingConfig"]["BorrowLimit"] == 50
    assert request["ComputeQuotaTarget"]["FairShareWeight"] == 100


def test_policy_weights_become_integers(sagemaker):
    client, _ = sagemaker
    request = index.request_properties(index.KINDS["Custom::ClusterSchedulerConfig"],
                                       as_cloudformation_sends(POLICY), client)
    assert [p["Weight"] for p in request["SchedulerConfig"]["PriorityClasses"]] == [100, 80]


@pytest.mark.parametrize("mutate, message", [
    (lambda p: p["ComputeQuotaTarget"].update(FairShareWeight="heavy"),
     "Properties.ComputeQuotaTarget.FairShareWeight: is not an integer ('heavy'); give a whole number"),
    (lambda p: p["ComputeQuotaConfig"]["ComputeQuotaResources"][1].update(Count="2.5"),
     "Properties.ComputeQuotaConfig.ComputeQuotaResources[1].Count: is not an integer ('2.5')"),
    (lambda p: p.update(Team="team-a"), "Properties.Team: is not a member of CreateComputeQuotaRequest"),
    (lambda p: p.pop("ComputeQuotaTarget"), "Properties.ComputeQuotaTarget: is missing"),
])
def test_bad_properties_are_reported_with_their_path(sagemaker, mutate, message):
    client, _ = sagemaker
    properties = as_cloudformation_sends(QUOTA)
    mutate(properties)
    with pytest.raises(index.ResourceError, match=re.escape(message)):
        index.request_properties(index.KINDS["Custom::ComputeQuota"], properties, client)


def test_the_plans_properties_survive_the_round_trip_through_cloudformation(sagemaker):
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.plan.task_governance import compute_quota_config, compute_quota_target, scheduler_config
    from hyperpod_gov.spec import load_spec
    from tests.conftest import EXAMPLES, TODAY

    client, _ = sagemaker
    plan = build_plan(load_spec(EXAMPLES / "enterprise.yaml", today=TODAY))
    policy = {"Name": "p", "ClusterArn": CLUSTER,
              "SchedulerConfig": scheduler_config([(p.name, p.weight) for p in plan.priority_classes],
                                                  plan.fair_sharing)}
    assert index.request_properties(index.KINDS["Custom::ClusterSchedulerConfig"],
                                    as_cloudformation_sends(policy), client) == policy
    for team in plan.teams:
        quota = {"Name": f"{team.name}-quota", "ClusterArn": CLUSTER, "ComputeQuotaConfig": compute_quota_config(team),
                 "ComputeQuotaTarget": compute_quota_target(team)}
        assert index.request_properties(index.KINDS["Custom::ComputeQuota"], as_cloudformation_sends(quota),
                                        client) == quota, team.name


def test_an_unknown_resource_type_is_refused(sagemaker):
    client, _ = sagemaker
    with pytest.raises(index.ResourceError, match=r"ResourceType: is not handled by this provider \('Custom::X'\)"):
        index.on_event(event("Create", "Custom::X", {}), None, client)


# --- create -------------------------------------------------------------------------------------

def test_create_makes_a_new_quota_when_none_on_the_cluster_has_its_name(sagemaker):
    client, stubber = sagemaker
    stubber.add_response("list_compute_quotas",
                         {"ComputeQuotaSummaries": [quota_summary("team-a-quota-old", "quota0000009")]},
                         {"ClusterArn": CLUSTER, "NameContains": "team-a-quota"})
    stubber.add_response("create_compute_quota", {"ComputeQuotaArn": QUOTA_ARN, "ComputeQuotaId": QUOTA_ID},
                         typed(QUOTA))
    result = index.on_event(event("Create", "Custom::ComputeQuota", QUOTA), None, client)
    assert result == {"PhysicalResourceId": QUOTA_ID, "Data": {"Arn": QUOTA_ARN, "Id": QUOTA_ID}}


def test_create_makes_a_new_policy_when_the_one_of_that_name_was_deleted(sagemaker):
    client, stubber = sagemaker
    stubber.add_response("list_cluster_scheduler_configs",
                         {"ClusterSchedulerConfigSummaries": [policy_summary("acme-policy", "policy000009",
                                                                             status="Deleted")]},
                         {"ClusterArn": CLUSTER, "NameContains": "acme-policy"})
    stubber.add_response("create_cluster_scheduler_config",
                         {"ClusterSchedulerConfigArn": POLICY_ARN, "ClusterSchedulerConfigId": POLICY_ID},
                         typed(POLICY))
    result = index.on_event(event("Create", "Custom::ClusterSchedulerConfig", POLICY), None, client)
    assert result["PhysicalResourceId"] == POLICY_ID


def test_create_adopts_the_quota_of_that_name_found_on_the_second_page(sagemaker):
    client, stubber = sagemaker
    stubber.add_response("list_compute_quotas",
                         {"ComputeQuotaSummaries": [quota_summary("team-a-quota-2", "quota0000009")],
                          "NextToken": "page-2"},
                         {"ClusterArn": CLUSTER, "NameContains": "team-a-quota"})
    stubber.add_response("list_compute_quotas", {"ComputeQuotaSummaries": [quota_summary("team-a-quota", QUOTA_ID)]},
                         {"ClusterArn": CLUSTER, "NameContains": "team-a-quota", "NextToken": "page-2"})
    stubber.add_response("describe_compute_quota", describe_quota("Created", version=3), {"ComputeQuotaId": QUOTA_ID})
    update = {k: v for k, v in typed(QUOTA).items() if k not in ("Name", "ClusterArn", "Tags")}
    stubber.add_response("update_compute_quota", {"ComputeQuotaArn": QUOTA_ARN, "ComputeQuotaVersion": 4},
                         {"ComputeQuotaId": QUOTA_ID, "TargetVersion": 3, **update})
    stubber.add_response("add_tags", {"Tags": QUOTA["Tags"]}, {"ResourceArn": QUOTA_ARN, "Tags": QUOTA["Tags"]})
    result = index.on_event(event("Create", "Custom::ComputeQuota", QUOTA), None, client)
    assert result == {"PhysicalResourceId": QUOTA_ID, "Data": {"Arn": QUOTA_ARN, "Id": QUOTA_ID, "Version": "4"}}


# --- update -------------------------------------------------------------------------------------

def test_update_sends_the_current_version_as_target_version(sagemaker):
    client, stubber = sagemaker
    new = copy.deepcopy(POLICY)
    new["SchedulerConfig"]["FairShare"] = "Disabled"
    stubber.add_response("describe_cluster_scheduler_config", describe_policy("Updated", version=4),
                         {"ClusterSchedulerConfigId": POLICY_ID})
    stubber.add_response("update_cluster_scheduler_config",
                         {"ClusterSchedulerConfigArn": POLICY_ARN, "ClusterSchedulerConfigVersion": 5},
                         {"ClusterSchedulerConfigId": POLICY_ID, "TargetVersion": 4,
                          "SchedulerConfig": new["SchedulerConfig"], "Description": new["Description"]})
    result = index.on_event(event("Update", "Custom::ClusterSchedulerConfig", new, physical_id=POLICY_ID,
                                  old=POLICY), None, client)
    assert result == {"PhysicalResourceId": POLICY_ID, "Data": {"Arn": POLICY_ARN, "Id": POLICY_ID, "Version": "5"}}


def test_update_removes_dropped_tags_and_writes_changed_ones(sagemaker):
    client, stubber = sagemaker
    old = {**QUOTA, "Tags": [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]}
    new = {**QUOTA, "Tags": [{"Key": "b", "Value": "3"}]}
    stubber.add_response("describe_compute_quota", describe_quota("Created"), {"ComputeQuotaId": QUOTA_ID})
    update = {k: v for k, v in typed(QUOTA).items() if k not in ("Name", "ClusterArn", "Tags")}
    stubber.add_response("update_compute_quota", {"ComputeQuotaArn": QUOTA_ARN, "ComputeQuotaVersion": 2},
                         {"ComputeQuotaId": QUOTA_ID, "TargetVersion": 1, **update})
    stubber.add_response("delete_tags", {}, {"ResourceArn": QUOTA_ARN, "TagKeys": ["a"]})
    stubber.add_response("add_tags", {}, {"ResourceArn": QUOTA_ARN, "Tags": [{"Key": "b", "Value": "3"}]})
    index.on_event(event("Update", "Custom::ComputeQuota", new, physical_id=QUOTA_ID, old=old), None, client)


def test_a_new_name_creates_a_replacement_policy(sagemaker):
    client, stubber = sagemaker
    new = {**POLICY, "Name": "acme-policy-2"}
    stubber.add_response("list_cluster_scheduler_configs", {"ClusterSchedulerConfigSummaries": []},
                         {"ClusterArn": CLUSTER, "NameContains": "acme-policy-2"})
    stubber.add_response("create_cluster_scheduler_config",
                         {"ClusterSchedulerConfigArn": POLICY_ARN.replace(POLICY_ID, "policy000002"),
                          "ClusterSchedulerConfigId": "policy000002"}, typed(new))
    result = index.on_event(event("Update", "Custom::ClusterSchedulerConfig", new, physical_id=POLICY_ID,
                                  old=POLICY), None, client)
    assert result["PhysicalResourceId"] == "policy000002"  # CloudFormation then deletes policy000001


def test_another_cluster_creates_a_replacement_quota(sagemaker):
    client, stubber = sagemaker
    new = {**QUOTA, "ClusterArn": OTHER_CLUSTER}
    stubber.add_response("list_compute_quotas", {"ComputeQuotaSummaries": []},
                         {"ClusterArn": OTHER_CLUSTER, "NameContains": "team-a-quota"})
    stubber.add_response("create_compute_quota", {"ComputeQuotaArn": QUOTA_ARN.replace(QUOTA_ID, "quota0000002"),
                                                  "ComputeQuotaId": "quota0000002"}, typed(new))
    result = index.on_event(event("Update", "Custom::ComputeQuota", new, physical_id=QUOTA_ID, old=QUOTA), None,
                            client)
    assert result["PhysicalResourceId"] == "quota0000002"


def test_a_quota_cannot_change_team_under_the_same_name(sagemaker):
    client, _ = sagemaker
    new = copy.deepcopy(QUOTA)
    new["ComputeQuotaTarget"]["TeamName"] = "team-b"
    with pytest.raises(index.ResourceError, match=r"Properties.ComputeQuotaTarget.TeamName: cannot change in place "
                                                  r"\('team-a' -> 'team-b'\); give the ComputeQuota a new Name"):
        index.on_event(event("Update", "Custom::ComputeQuota", new, physical_id=QUOTA_ID, old=QUOTA), None, client)


def test_access_denied_names_the_call_and_the_action(sagemaker):
    client, stubber = sagemaker
    stubber.add_client_error("describe_cluster_scheduler_config", "AccessDeniedException", "not authorized",
                             expected_params={"ClusterSchedulerConfigId": POLICY_ID})
    with pytest.raises(index.ResourceError, match="DescribeClusterSchedulerConfig: access denied .*allow "
                                                  "sagemaker:DescribeClusterSchedulerConfig to the provider's role"):
        index.on_event(event("Update", "Custom::ClusterSchedulerConfig", POLICY, physical_id=POLICY_ID,
                             old=POLICY), None, client)


# --- delete -------------------------------------------------------------------------------------

def test_delete_deletes_the_quota_by_id(sagemaker):
    client, stubber = sagemaker
    stubber.add_response("delete_compute_quota", {}, {"ComputeQuotaId": QUOTA_ID})
    result = index.on_event(event("Delete", "Custom::ComputeQuota", QUOTA, physical_id=QUOTA_ID), None, client)
    assert result == {"PhysicalResourceId": QUOTA_ID}


def test_delete_of_an_already_deleted_policy_succeeds(sagemaker):
    client, stubber = sagemaker
    stubber.add_client_error("delete_cluster_scheduler_config", "ResourceNotFound", "gone",
                             expected_params={"ClusterSchedulerConfigId": POLICY_ID})
    result = index.on_event(event("Delete", "Custom::ClusterSchedulerConfig", POLICY, physical_id=POLICY_ID),
                            None, client)
    assert result == {"PhysicalResourceId": POLICY_ID}


def test_delete_after_a_failed_create_calls_nothing(sagemaker):
    """The framework reports a failed create under the request id; its rollback must not fail too."""
    client, _ = sagemaker  # no stubbed response: any call would raise
    request_id = "b2c1c2e0-0000-4000-8000-000000000000"
    bad = event("Delete", "Custom::ComputeQuota", {"Name": "x"}, physical_id=request_id)
    assert index.on_event(bad, None, client) == {"PhysicalResourceId": request_id}
    assert index.is_complete(bad, None, client) == {"IsComplete": True}


def test_other_delete_errors_are_raised(sagemaker):
    client, stubber = sagemaker
    stubber.add_client_error("delete_compute_quota", "ConflictException", "in use",
                             expected_params={"ComputeQuotaId": QUOTA_ID})
    with pytest.raises(index.ClientError, match="ConflictException"):
        index.on_event(event("Delete", "Custom::ComputeQuota", QUOTA, physical_id=QUOTA_ID), None, client)


# --- is_complete --------------------------------------------------------------------------------

def polled(request_type: str, version: int | None = None) -> dict:
    e = event(request_type, "Custom::ComputeQuota", QUOTA, physical_id=QUOTA_ID,
              old=QUOTA if request_type == "Update" else None)
    if version is not None:
        e["Data"] = {"Arn": QUOTA_ARN, "Id": QUOTA_ID, "Version": str(version)}
    return e


@pytest.mark.parametrize("request_type, status, version, wanted, done", [
    ("Create", "Creating", 1, None, False),
    ("Create", "Created", 1, None, True),
    ("Update", "Updating", 2, 2, False),
    ("Update", "Created", 1, 2, False),  # Describe still shows the version before the update
    ("Update", "Updated", 2, 2, True),
    ("Delete", "Deleting", 2, None, False),
    ("Delete", "Deleted", 2, None, True),
])
def test_is_complete_follows_the_status(sagemaker, request_type, status, version, wanted, done):
    client, stubber = sagemaker
    stubber.add_response("describe_compute_quota", describe_quota(status, version), {"ComputeQuotaId": QUOTA_ID})
    result = index.is_complete(polled(request_type, wanted), None, client)
    assert result["IsComplete"] is done
    if done and request_type != "Delete":
        assert result["Data"] == {"Arn": QUOTA_ARN, "Id": QUOTA_ID}


@pytest.mark.parametrize("request_type, status", [("Create", "CreateFailed"), ("Update", "UpdateFailed"),
                                                  ("Update", "UpdateRollbackFailed"), ("Delete", "DeleteFailed")])
def test_is_complete_raises_a_failure_with_its_reason(sagemaker, request_type, status):
    client, stubber = sagemaker
    stubber.add_response("describe_compute_quota",
                         describe_quota(status, FailureReason="ml.p5.48xlarge: quota exceeds cluster capacity"),
                         {"ComputeQuotaId": QUOTA_ID})
    with pytest.raises(index.ResourceError, match=rf"ComputeQuota team-a-quota \({QUOTA_ID}\): {status} "
                                                  r"\(ml.p5.48xlarge: quota exceeds cluster capacity\)"):
        index.is_complete(polled(request_type), None, client)


def test_a_quota_not_found_after_delete_is_complete(sagemaker):
    client, stubber = sagemaker
    stubber.add_client_error("describe_compute_quota", "ResourceNotFound", "gone",
                             expected_params={"ComputeQuotaId": QUOTA_ID})
    assert index.is_complete(polled("Delete"), None, client) == {"IsComplete": True}


def test_a_quota_not_yet_visible_after_create_keeps_polling(sagemaker):
    client, stubber = sagemaker
    stubber.add_client_error("describe_compute_quota", "ResourceNotFound", "not yet",
                             expected_params={"ComputeQuotaId": QUOTA_ID})
    assert index.is_complete(polled("Create"), None, client) == {"IsComplete": False}


def test_the_handler_uses_only_the_standard_library_and_boto3():
    source = (HANDLER_DIR / "index.py").read_text()
    imported = {line.split()[1].split(".")[0] for line in source.splitlines()
                if line.startswith(("import ", "from ")) and not line.startswith("from __future__")}
    assert imported <= {"logging", "re", "dataclasses", "typing", "boto3", "botocore"}, imported


# --- constructs ---------------------------------------------------------------------------------

EKS_CLUSTER = "ml-eks"
FUNCTIONS = {"index.on_event", "index.is_complete"}


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    """One app, synthesized once, with cdk-nag as a validation plugin: a stack pinned to an account and
    region (as the governance stacks are) and an environment-agnostic one whose cluster ARN is a token."""
    import aws_cdk as cdk
    from cdk_nag import AwsSolutionsChecks

    from hyperpod_gov.constructs.task_governance_provider import (
        SdkClusterPolicy,
        SdkComputeQuota,
        TaskGovernanceProvider,
    )
    from hyperpod_gov.stacks.base import apply_feature_flags

    out = tmp_path_factory.mktemp("sdk-task-governance")
    app = minimal_app(outdir=str(out), analytics_reporting=False)
    apply_feature_flags(app)
    built = {}
    for name, env, cluster_arn in (("Pinned", cdk.Environment(account=ACCOUNT, region=REGION), CLUSTER),
                                   ("Agnostic", None, None)):
        stack = cdk.Stack(app, name, env=env)
        if cluster_arn is None:
            cluster_arn = cdk.CfnParameter(stack, "ClusterArn").value_as_string
        provider = TaskGovernanceProvider(stack, "TaskGovernance", cluster_arn=cluster_arn,
                                          eks_cluster_name=EKS_CLUSTER)
        policy = SdkClusterPolicy(stack, "ClusterPolicy", provider=provider,
                                  properties={**POLICY, "ClusterArn": cluster_arn})
        quota = SdkComputeQuota(stack, "Quota", provider=provider, properties={**QUOTA, "ClusterArn": cluster_arn})
        quota.node.add_dependency(policy)
        built[name] = (stack, provider, policy, quota)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    assembly = app.synth()  # raises on any unacknowledged cdk-nag finding
    stack, provider, policy, quota = built["Pinned"]
    return {
        "out": out,
        "template": assembly.get_stack_by_name("Pinned").template,
        "files": sorted(out.glob("*.template.json")),
        "policy_arn": stack.resolve(policy.attr_arn),
        "policy_id": stack.resolve(policy.attr_id),
        "logical": {"policy": stack.get_logical_id(policy.resource.node.default_child),
                    "quota": stack.get_logical_id(quota.resource.node.default_child),
                    "provider": stack.resolve(provider.service_token)},
    }


def _render(value: Any) -> Any:
    """Fn::Join and pseudo-parameter Refs as one readable string."""
    if isinstance(value, dict) and "Fn::Join" in value:
        sep, parts = value["Fn::Join"]
        return sep.join(str(_render(p)) for p in parts)
    if isinstance(value, dict) and set(value) == {"Ref"} and value["Ref"].startswith("AWS::"):
        return "${" + value["Ref"] + "}"
    if isinstance(value, list):
        return [_render(v) for v in value]
    return value


def _resources(template: dict, kind: str) -> dict[str, dict]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def test_the_handler_role_may_call_exactly_the_task_governance_actions(synthesized):
    policies = [p for p in _resources(synthesized["template"], "AWS::IAM::Policy").values()
                if p["Properties"]["PolicyName"].startswith("TaskGovernanceHandlerPolicy")]
    assert len(policies) == 1
    statements = {s["Sid"]: (sorted([s["Action"]] if isinstance(s["Action"], str) else s["Action"]),
                             _render(s["Resource"]))
                  for s in policies[0]["Properties"]["PolicyDocument"]["Statement"]}
    here = f"arn:${{AWS::Partition}}:sagemaker:{REGION}:{ACCOUNT}"
    eks = f"arn:${{AWS::Partition}}:eks:{REGION}:{ACCOUNT}"
    assert statements == {
        "CreateOnTheCluster": (["sagemaker:CreateClusterSchedulerConfig"],
                               [CLUSTER, f"{here}:cluster-scheduler-config/*"]),
        "CreateQuotaOnTheCluster": (["sagemaker:CreateComputeQuota"], [CLUSTER, f"{here}:compute-quota/*"]),
        "ManagePolicies": (["sagemaker:AddTags", "sagemaker:DeleteClusterSchedulerConfig", "sagemaker:DeleteTags",
                            "sagemaker:DescribeClusterSchedulerConfig", "sagemaker:UpdateClusterSchedulerConfig"],
                           f"{here}:cluster-scheduler-config/*"),
        "ManageQuotas": (["sagemaker:AddTags", "sagemaker:DeleteComputeQuota", "sagemaker:DeleteTags",
                          "sagemaker:DescribeComputeQuota", "sagemaker:UpdateComputeQuota"],
                         f"{here}:compute-quota/*"),
        "FindByName": (["sagemaker:ListClusterSchedulerConfigs", "sagemaker:ListComputeQuotas"], "*"),
        "ReadTheCluster": (["sagemaker:DescribeCluster"], CLUSTER),
        "ReadTheEksCluster": (["eks:DescribeCluster"], f"{eks}:cluster/{EKS_CLUSTER}"),
        "MapTeamAccess": (["eks:AssociateAccessPolicy", "eks:DisassociateAccessPolicy"],
                          f"{eks}:access-entry/{EKS_CLUSTER}/*"),
        "ReadTeamAccess": (["eks:DescribeAccessEntry", "eks:ListAssociatedAccessPolicies"],
                           f"{eks}:access-entry/{EKS_CLUSTER}/*"),
    }


def test_the_handler_runs_the_newest_python_with_its_own_log_group(synthesized):
    functions = {f["Properties"]["Handler"]: f["Properties"]
                 for f in _resources(synthesized["template"], "AWS::Lambda::Function").values()
                 if f["Properties"]["Handler"] in FUNCTIONS}
    assert set(functions) == FUNCTIONS
    for props in functions.values():
        assert props["Runtime"] == "python3.14"
        assert "LoggingConfig" in props and "LogGroup" in props["LoggingConfig"]


def test_the_waiter_polls_every_30_seconds_for_at_most_30_minutes(synthesized):
    (machine,) = _resources(synthesized["template"], "AWS::StepFunctions::StateMachine").values()
    definition = json.loads(json.dumps(_render(machine["Properties"]["DefinitionString"])))
    assert '"IntervalSeconds":30' in definition
    assert '"MaxAttempts":60' in definition
    assert machine["Properties"]["LoggingConfiguration"]["Level"] == "ALL"


def test_the_custom_resources_carry_the_native_properties(synthesized):
    template = synthesized["template"]
    token = synthesized["logical"]["provider"]
    policy = template["Resources"][synthesized["logical"]["policy"]]
    quota = template["Resources"][synthesized["logical"]["quota"]]
    assert policy["Type"] == "Custom::ClusterSchedulerConfig"
    assert quota["Type"] == "Custom::ComputeQuota"
    assert policy["Properties"] == {"ServiceToken": token, **POLICY}
    assert quota["Properties"] == {"ServiceToken": token, **QUOTA}
    assert synthesized["logical"]["policy"] in quota["DependsOn"]


def test_the_policy_exposes_the_arn_and_id_the_handler_returns(synthesized):
    logical = synthesized["logical"]["policy"]
    assert synthesized["policy_arn"] == {"Fn::GetAtt": [logical, "Arn"]}
    assert synthesized["policy_id"] == {"Ref": logical}


def test_every_template_passes_cfn_lint(synthesized):
    from tests.synth_helpers import cfn_lint

    assert len(synthesized["files"]) == 2
    for path in synthesized["files"]:
        matches = cfn_lint(Path(path), REGION)
        # W3005 is kept app-wide (docs/synth.md, "cfn-lint warnings kept"): aws-cdk-lib's Function adds a
        # DependsOn on its role on top of the GetAtt.
        assert not [str(m) for m in matches if m.rule.id != "W3005"]


def test_cdk_nag_acknowledgements_name_one_finding_and_a_reason(synthesized):
    acks = {}
    for path in synthesized["out"].glob("*.metadata.json"):
        for construct, entries in json.loads(path.read_text()).items():
            for entry in entries:
                if entry["type"] == "aws:cdk:acknowledged-rules":
                    acks.update({(construct, k): v for k, v in entry["data"].items()})
    rules = {rule for _, rule in acks}
    assert "AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sagemaker:<AWS::Region>:" \
           "<AWS::AccountId>:compute-quota/*]" in rules  # the environment-agnostic form
    assert f"AwsSolutions::AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sagemaker:{REGION}:{ACCOUNT}:" \
           "compute-quota/*]" in rules
    for (construct, rule), reason in acks.items():
        assert rule.startswith("AwsSolutions::AwsSolutions-"), rule
        if "IAM4" in rule or "IAM5" in rule:
            assert "[" in rule, f"{construct}: {rule} acknowledges a whole rule, not one finding"
        assert len(reason) > 40, (construct, rule, reason)


@pytest.mark.parametrize("kind, missing", [("SdkClusterPolicy", "SchedulerConfig"),
                                           ("SdkComputeQuota", "ComputeQuotaTarget")])
def test_a_resource_without_a_required_property_is_refused_at_synth(kind, missing):
    import aws_cdk as cdk

    from hyperpod_gov.constructs import task_governance_provider as module

    stack = cdk.Stack(minimal_app(), "S")
    provider = module.TaskGovernanceProvider(stack, "TaskGovernance", cluster_arn=CLUSTER, eks_cluster_name="e")
    properties = {k: v for k, v in {**POLICY, **QUOTA}.items() if k != missing}
    with pytest.raises(ValueError, match=f"S/Thing: properties lack {missing} .*; pass the properties of "
                                         "AWS::SageMaker::"):
        getattr(module, kind)(stack, "Thing", provider=provider, properties=properties)


def test_the_handler_asset_carries_the_sdk_the_tests_ran_and_it_knows_every_member_the_project_sends(synthesized):
    """Issue 22: the Lambda runtime's own botocore may predate AcceleratorPartition or IdleResourceSharing and
    refuse the request client-side. The asset carries the installed boto3/botocore; every request the plans of
    the examples and of every allocation kind produce validates against the asset's own service model."""
    import importlib.metadata

    import botocore.loaders
    from botocore.model import ServiceModel
    from botocore.validate import ParamValidator

    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.plan.task_governance import cluster_policy_properties, compute_quota_properties
    from hyperpod_gov.spec import load_spec, parse_spec
    from tests.conftest import EXAMPLES, TODAY
    from tests.spec import test_allocations

    (asset,) = {p.parent for p in synthesized["out"].glob("asset.*/index.py")}
    version = (asset / "botocore" / "__init__.py").read_text().split("__version__ = '", 1)[1].split("'", 1)[0]
    assert version == importlib.metadata.version("botocore")
    assert (asset / "boto3" / "__init__.py").exists() and (asset / "urllib3").is_dir()
    loader = botocore.loaders.Loader(extra_search_paths=[str(asset / "botocore" / "data")],
                                     include_default_search_paths=False)
    model = ServiceModel(loader.load_service_model("sagemaker", "service-2"), "sagemaker")
    assert sorted(p.name for p in (asset / "botocore" / "data").iterdir() if p.is_dir()) == ["sagemaker"]

    plans = [build_plan(load_spec(EXAMPLES / f"{n}.yaml", today=TODAY)) for n in ("enterprise", "startup")]
    plans += [build_plan(parse_spec(test_allocations.spec_with(*changes), today=TODAY))
              for _, changes, _ in test_allocations.VALID]
    requests = []
    for plan in plans:
        if plan.mode != "task-governance":
            continue
        requests.append(("CreateClusterSchedulerConfig", cluster_policy_properties(
            "p", "c", [(p.name, p.weight) for p in plan.priority_classes], plan.fair_sharing, CLUSTER,
            plan.idle_resource_sharing)))
        requests += [("CreateComputeQuota", compute_quota_properties(t, CLUSTER)) for t in plan.teams]
    sent = json.dumps([r for _, r in requests])
    assert "AcceleratorPartition" in sent and "IdleResourceSharing" in sent  # the members issue 22 names
    validator = ParamValidator()
    for operation, request in requests:
        report = validator.validate(request, model.operation_model(operation).input_shape)
        assert not report.has_errors(), (operation, report.generate_report())
