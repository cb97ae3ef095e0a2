"""The cluster extension custom resource's Lambda handler (assets/cluster_extension_provider), against botocore's
Stubber: every request is checked against the SageMaker model of the botocore the asset bundles, so a member the
API does not take fails here."""

from __future__ import annotations

import importlib.util
import json
import sys

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_gov.constructs.cluster_extension import HANDLER_DIR

REGION = "us-west-2"
ACCOUNT = "111111111111"
CLUSTER = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:cluster/abcdef123456"
EXTENSION = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:extension/sagemaker-observability/abcdef123456/ext000000001"
URL = f"https://aps-workspaces.{REGION}.amazonaws.com/workspaces/ws-1/api/v1/remote_write"
SETTINGS = json.dumps({"prometheus": {"remoteWriteUrl": URL}})
PROPS = {"ServiceToken": "arn:aws:lambda:x", "ClusterArn": CLUSTER, "ExtensionName": "sagemaker-observability",
         "ExtensionVersion": "1.0.0", "ConfigurationValues": SETTINGS}
REQUEST = "5a3e1c2b-0d4f-4e6a-9b8c-7d6e5f4a3b2c"


def _load_handler():
    spec = importlib.util.spec_from_file_location("cluster_extension_provider_index", HANDLER_DIR / "index.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


index = _load_handler()


@pytest.fixture
def stubbed():
    client = boto3.client("sagemaker", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def _event(kind: str, props=PROPS, old=None, physical=None) -> dict:
    event = {"RequestType": kind, "RequestId": REQUEST, "ResourceProperties": dict(props)}
    if old is not None:
        event["OldResourceProperties"] = dict(old)
    if physical is not None:
        event["PhysicalResourceId"] = physical
    return event


def _described(status: str, *, version="1.0.0", issues=()) -> dict:
    out = {"ExtensionDetails": {"ClusterArn": CLUSTER, "ExtensionArn": EXTENSION, "ExtensionName":
                                "sagemaker-observability", "ExtensionVersion": version, "Status": status},
           "NodeSummary": {"TotalCount": 4, "ActiveCount": 4 - len(issues)}}
    if issues:
        out["Health"] = {"Issues": [{"Code": c, "Message": m, "NodeCount": 1} for c, m in issues]}
    return out


def test_create_installs_the_pinned_version_with_the_settings_and_returns_its_arn(stubbed):
    client, stubber = stubbed
    stubber.add_response("list_cluster_extensions", {"Extensions": []}, {"ClusterArn": CLUSTER})
    stubber.add_response("create_cluster_extension", {"ExtensionArn": EXTENSION}, {
        "ClusterArn": CLUSTER, "ExtensionName": "sagemaker-observability", "ExtensionVersion": "1.0.0",
        "ConfigurationValues": SETTINGS, "ClientToken": REQUEST})
    assert index.on_event(_event("Create"), None, client) == {"PhysicalResourceId": EXTENSION,
                                                               "Data": {"Arn": EXTENSION}}


def test_create_adopts_the_clusters_extension_of_that_name_on_every_page(stubbed):
    client, stubber = stubbed
    stubber.add_response("list_cluster_extensions", {"Extensions": [], "NextToken": "t"}, {"ClusterArn": CLUSTER})
    stubber.add_response("list_cluster_extensions", {"Extensions": [{
        "ExtensionArn": EXTENSION, "ExtensionName": "sagemaker-observability", "ExtensionVersion": "0.9.0",
        "Status": "Active"}]}, {"ClusterArn": CLUSTER, "NextToken": "t"})
    stubber.add_response("update_cluster_extension", {"ExtensionArn": EXTENSION}, {
        "ClusterArn": CLUSTER, "ExtensionArn": EXTENSION, "ExtensionVersion": "1.0.0",
        "ConfigurationValues": SETTINGS, "ClientToken": REQUEST})
    assert index.on_event(_event("Create"), None, client)["PhysicalResourceId"] == EXTENSION


def test_an_update_of_the_settings_alone_sends_them_and_keeps_the_version(stubbed):
    client, stubber = stubbed
    old = {**PROPS, "ConfigurationValues": json.dumps({"prometheus": {"remoteWriteUrl": "https://old/"}})}
    stubber.add_response("update_cluster_extension", {"ExtensionArn": EXTENSION}, {
        "ClusterArn": CLUSTER, "ExtensionArn": EXTENSION, "ConfigurationValues": SETTINGS, "ClientToken": REQUEST})
    index.on_event(_event("Update", old=old, physical=EXTENSION), None, client)


def test_an_update_that_changes_nothing_calls_nothing(stubbed):
    client, _ = stubbed
    assert index.on_event(_event("Update", old=PROPS, physical=EXTENSION), None, client)["PhysicalResourceId"] == \
        EXTENSION


def test_a_newer_version_is_sent_and_an_older_one_is_refused_with_the_fix(stubbed):
    client, stubber = stubbed
    newer = {**PROPS, "ExtensionVersion": "1.2.0"}
    stubber.add_response("update_cluster_extension", {"ExtensionArn": EXTENSION}, {
        "ClusterArn": CLUSTER, "ExtensionArn": EXTENSION, "ExtensionVersion": "1.2.0", "ClientToken": REQUEST})
    index.on_event(_event("Update", props=newer, old=PROPS, physical=EXTENSION), None, client)
    with pytest.raises(index.ExtensionError, match=r"older than the installed 1\.2\.0.*later version"):
        index.on_event(_event("Update", props=PROPS, old=newer, physical=EXTENSION), None, client)


def test_another_cluster_is_a_new_extension(stubbed):
    client, stubber = stubbed
    other = CLUSTER.replace("abcdef123456", "zyxwvu654321")
    moved = {**PROPS, "ClusterArn": other}
    stubber.add_response("list_cluster_extensions", {"Extensions": []}, {"ClusterArn": other})
    stubber.add_response("create_cluster_extension", {"ExtensionArn": EXTENSION.replace("abcdef123456", "zyxwvu654321")},
                         {"ClusterArn": other, "ExtensionName": "sagemaker-observability", "ExtensionVersion": "1.0.0",
                          "ConfigurationValues": SETTINGS, "ClientToken": REQUEST})
    out = index.on_event(_event("Update", props=moved, old=PROPS, physical=EXTENSION), None, client)
    assert "zyxwvu654321" in out["PhysicalResourceId"]


def test_delete_removes_it_and_an_extension_already_gone_is_deleted(stubbed):
    client, stubber = stubbed
    stubber.add_response("delete_cluster_extension", {"ExtensionArn": EXTENSION},
                         {"ClusterArn": CLUSTER, "ExtensionArn": EXTENSION})
    stubber.add_client_error("delete_cluster_extension", "ResourceNotFound", "gone")
    for _ in range(2):
        assert index.on_event(_event("Delete", physical=EXTENSION), None, client) == {"PhysicalResourceId": EXTENSION}


def test_delete_after_a_failed_create_calls_nothing(stubbed):
    client, _ = stubbed
    event = _event("Delete", physical="cluster-extension-failed")
    assert index.on_event(event, None, client)["PhysicalResourceId"] == "cluster-extension-failed"
    assert index.is_complete(event, None, client) == {"IsComplete": True}


@pytest.mark.parametrize("props, message", [
    ({**PROPS, "ExtensionVersion": "v1.0.0"}, "not MAJOR.MINOR.PATCH"),
    ({**PROPS, "ConfigurationValues": "prometheus"}, "not JSON"),
    ({**PROPS, "ConfigurationValues": "[1]"}, "not a JSON object"),
    ({k: v for k, v in PROPS.items() if k != "ClusterArn"}, "lack ClusterArn"),
])
def test_bad_properties_are_refused_before_any_call(stubbed, props, message):
    client, _ = stubbed
    with pytest.raises(index.ExtensionError, match=message):
        index.on_event(_event("Create", props=props), None, client)


def test_access_denied_names_the_action_to_allow(stubbed):
    client, stubber = stubbed
    stubber.add_client_error("list_cluster_extensions", "AccessDeniedException", "no")
    with pytest.raises(index.ExtensionError, match="allow sagemaker:ListClusterExtensions"):
        index.on_event(_event("Create"), None, client)


@pytest.mark.parametrize("status, complete", [("Creating", False), ("Updating", False), ("Active", True)])
def test_is_complete_waits_for_active(stubbed, status, complete):
    client, stubber = stubbed
    stubber.add_response("describe_cluster_extension", _described(status),
                         {"ClusterArn": CLUSTER, "ExtensionArn": EXTENSION})
    assert index.is_complete(_event("Create", physical=EXTENSION), None, client)["IsComplete"] is complete


@pytest.mark.parametrize("status", ["CreateFailed", "UpdateFailed", "Degraded"])
def test_a_failed_extension_fails_the_deploy_with_its_health_issues(stubbed, status):
    client, stubber = stubbed
    stubber.add_response("describe_cluster_extension",
                         _described(status, issues=[("AccessDenied", "aps:RemoteWrite denied")]),
                         {"ClusterArn": CLUSTER, "ExtensionArn": EXTENSION})
    with pytest.raises(index.ExtensionError, match=rf"is {status} on 3 of 4.*AccessDenied on 1 node\(s\): "
                                                   r"aps:RemoteWrite denied"):
        index.is_complete(_event("Create", physical=EXTENSION), None, client)


def test_delete_completes_once_the_extension_is_not_found(stubbed):
    client, stubber = stubbed
    stubber.add_response("describe_cluster_extension", _described("Deleting"),
                         {"ClusterArn": CLUSTER, "ExtensionArn": EXTENSION})
    stubber.add_client_error("describe_cluster_extension", "ResourceNotFound", "gone")
    event = _event("Delete", physical=EXTENSION)
    assert index.is_complete(event, None, client) == {"IsComplete": False}
    assert index.is_complete(event, None, client) == {"IsComplete": True}


def test_a_not_found_while_creating_is_an_error_not_a_success(stubbed):
    client, stubber = stubbed
    stubber.add_client_error("describe_cluster_extension", "ResourceNotFound", "gone")
    with pytest.raises(Exception, match="ResourceNotFound"):
        index.is_complete(_event("Create", physical=EXTENSION), None, client)
