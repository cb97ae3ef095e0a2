"""A HyperPod cluster extension through the SageMaker API, as a CloudFormation custom resource.

Resource type ``Custom::ClusterExtension`` takes the members of CreateClusterExtension: ``ClusterArn``,
``ExtensionName``, ``ExtensionVersion`` and ``ConfigurationValues`` (a JSON object as a string). Runs under the CDK
provider framework (``custom_resources.Provider``): ``on_event`` starts a change and returns the extension's ARN as
the physical id; ``is_complete`` polls DescribeClusterExtension until the extension is ``Active`` (or gone, on
delete) and fails with the health issues HyperPod reports. Plain boto3 and the standard library; every handler
takes the SageMaker client as a parameter.

API facts (SageMaker API reference): a cluster has at most one extension of a name; UpdateClusterExtension moves
the version only upwards and merges ``ConfigurationValues`` into the stored settings; a deleted extension is
``ResourceNotFound`` once HyperPod removed it from every node.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, Optional

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

LOG = logging.getLogger(__name__)
LOG.setLevel(logging.INFO)

RESOURCE_TYPE = "Custom::ClusterExtension"
REQUIRED = ("ClusterArn", "ExtensionName", "ExtensionVersion", "ConfigurationValues")
VERSION = re.compile(r"\A([0-9]+)\.([0-9]+)\.([0-9]+)\Z")
ACTIVE = "Active"
IN_PROGRESS = ("Creating", "Updating", "Deleting")
FAILED = ("CreateFailed", "UpdateFailed", "DeleteFailed", "Degraded")
NOT_FOUND = ("ResourceNotFound", "ResourceNotFoundException")
ACCESS_DENIED = ("AccessDeniedException", "AccessDenied")


class ExtensionError(Exception):
    """A request this provider cannot carry out; the message names the problem and the fix."""


def sagemaker_client() -> Any:
    """The SageMaker client of the function's region, retrying throttling (standard mode)."""
    return boto3.client("sagemaker", config=Config(retries={"mode": "standard", "max_attempts": 8}))


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _call(client: Any, operation: str, **params: Any) -> dict[str, Any]:
    try:
        return getattr(client, re.sub(r"(?<!^)(?=[A-Z])", "_", operation).lower())(**params)
    except ClientError as exc:
        if _code(exc) in ACCESS_DENIED:
            raise ExtensionError(f"{operation}: access denied ({exc.response['Error'].get('Message', '')}); allow "
                                 f"sagemaker:{operation} to the provider's role") from None
        raise


def _version(text: str) -> tuple[int, ...]:
    match = VERSION.match(text or "")
    if match is None:
        raise ExtensionError(f"ExtensionVersion: {text!r} is not MAJOR.MINOR.PATCH; pin a version that "
                             "list-cluster-extension-versions lists")
    return tuple(int(g) for g in match.groups())


def properties_of(event: dict[str, Any], key: str = "ResourceProperties") -> dict[str, str]:
    """The request's members, checked: every one present, the version MAJOR.MINOR.PATCH, the settings a JSON object."""
    props = event.get(key) or {}
    missing = [k for k in REQUIRED if not props.get(k)]
    if missing:
        raise ExtensionError(f"{RESOURCE_TYPE}: properties lack {', '.join(missing)}; pass {', '.join(REQUIRED)}")
    _version(props["ExtensionVersion"])
    try:
        settings = json.loads(props["ConfigurationValues"])
    except ValueError as exc:
        raise ExtensionError(f"ConfigurationValues: not JSON ({exc}); pass a JSON object as a string") from None
    if not isinstance(settings, dict):
        raise ExtensionError("ConfigurationValues: not a JSON object; pass {...} as a string")
    return {k: str(props[k]) for k in REQUIRED}


def find(client: Any, cluster_arn: str, name: str) -> Optional[dict[str, Any]]:
    """The cluster's extension of that name (ListClusterExtensions, every page), None if it has none."""
    token: Optional[str] = None
    while True:
        page = _call(client, "ListClusterExtensions", ClusterArn=cluster_arn, **({"NextToken": token} if token else {}))
        for summary in page.get("Extensions", ()):
            if summary.get("ExtensionName") == name and summary.get("Status") != "Deleting":
                return summary
        token = page.get("NextToken")
        if not token:
            return None


def _update(client: Any, props: dict[str, str], arn: str, current_version: str, token: str,
            configuration: Optional[str]) -> dict[str, Any]:
    """UpdateClusterExtension towards ``props``: the version if it differs (upwards only), the settings if given."""
    wanted, now = _version(props["ExtensionVersion"]), _version(current_version)
    if wanted < now:
        raise ExtensionError(f"ExtensionVersion: {props['ExtensionVersion']} is older than the installed "
                             f"{current_version}, and HyperPod updates an extension only to a later version; pin "
                             f"{current_version} or later, or delete the extension and deploy again")
    request: dict[str, Any] = {"ClusterArn": props["ClusterArn"], "ExtensionArn": arn, "ClientToken": token}
    if wanted != now:
        request["ExtensionVersion"] = props["ExtensionVersion"]
    if configuration is not None:
        request["ConfigurationValues"] = configuration
    _call(client, "UpdateClusterExtension", **request)
    return {"PhysicalResourceId": arn, "Data": {"Arn": arn}}


def create(client: Any, props: dict[str, str], token: str) -> dict[str, Any]:
    """CreateClusterExtension; an extension of that name on the cluster already is adopted and brought to the
    pinned version and settings (a cluster has at most one of a name)."""
    existing = find(client, props["ClusterArn"], props["ExtensionName"])
    if existing is not None:
        LOG.info("adopting %s", existing["ExtensionArn"])
        return _update(client, props, existing["ExtensionArn"], existing["ExtensionVersion"], token,
                       props["ConfigurationValues"])
    arn = _call(client, "CreateClusterExtension", ClusterArn=props["ClusterArn"],
                ExtensionName=props["ExtensionName"], ExtensionVersion=props["ExtensionVersion"],
                ConfigurationValues=props["ConfigurationValues"], ClientToken=token)["ExtensionArn"]
    return {"PhysicalResourceId": arn, "Data": {"Arn": arn}}


def update(client: Any, arn: str, props: dict[str, str], old: dict[str, str], token: str) -> dict[str, Any]:
    """A new cluster or name is a new extension (CloudFormation then deletes the old one); a new version or new
    settings update this one in place."""
    if props["ClusterArn"] != old["ClusterArn"] or props["ExtensionName"] != old["ExtensionName"]:
        return create(client, props, token)
    configuration = None if props["ConfigurationValues"] == old["ConfigurationValues"] else props["ConfigurationValues"]
    if configuration is None and props["ExtensionVersion"] == old["ExtensionVersion"]:
        return {"PhysicalResourceId": arn, "Data": {"Arn": arn}}
    return _update(client, props, arn, old["ExtensionVersion"], token, configuration)


def delete(client: Any, arn: str, props: dict[str, Any]) -> dict[str, Any]:
    """DeleteClusterExtension; an extension (or cluster) already gone is deleted. A failed create leaves a physical
    id that is no extension ARN: nothing to delete."""
    if not arn.startswith("arn:") or not props.get("ClusterArn"):
        return {"PhysicalResourceId": arn}
    try:
        _call(client, "DeleteClusterExtension", ClusterArn=props["ClusterArn"], ExtensionArn=arn)
    except ClientError as exc:
        if _code(exc) not in NOT_FOUND:
            raise
    return {"PhysicalResourceId": arn}


def on_event(event: dict[str, Any], context: Any, client: Any = None) -> dict[str, Any]:
    """The provider framework's onEvent handler: start the change."""
    client = client or sagemaker_client()
    request_type = event["RequestType"]
    LOG.info("%s %s %s", request_type, RESOURCE_TYPE, event.get("PhysicalResourceId", ""))
    token = str(event.get("RequestId", ""))[:64] or "hyperpod-gov"
    if request_type == "Delete":
        return delete(client, event["PhysicalResourceId"], event.get("ResourceProperties") or {})
    props = properties_of(event)
    if request_type == "Create":
        return create(client, props, token)
    return update(client, event["PhysicalResourceId"], props, properties_of(event, "OldResourceProperties"), token)


def _issues(described: dict[str, Any]) -> str:
    issues = described.get("Health", {}).get("Issues", ())
    return "; ".join(f"{i.get('Code')} on {i.get('NodeCount')} node(s): {i.get('Message')}" for i in issues) or \
        "no health issue reported"


def is_complete(event: dict[str, Any], context: Any, client: Any = None) -> dict[str, Any]:
    """The provider framework's isComplete handler: poll DescribeClusterExtension."""
    client = client or sagemaker_client()
    arn = event["PhysicalResourceId"]
    props = event.get("ResourceProperties") or {}
    deleting = event["RequestType"] == "Delete"
    if deleting and (not arn.startswith("arn:") or not props.get("ClusterArn")):
        return {"IsComplete": True}
    try:
        described = _call(client, "DescribeClusterExtension", ClusterArn=props["ClusterArn"], ExtensionArn=arn)
    except ClientError as exc:
        if deleting and _code(exc) in NOT_FOUND:
            return {"IsComplete": True}
        raise
    details = described["ExtensionDetails"]
    status = details["Status"]
    LOG.info("%s %s: %s", RESOURCE_TYPE, arn, status)
    if status in FAILED:
        nodes = described.get("NodeSummary", {})
        raise ExtensionError(f"{details.get('ExtensionName')} {details.get('ExtensionVersion')} is {status} on "
                             f"{nodes.get('ActiveCount', '?')} of {nodes.get('TotalCount', '?')} nodes active "
                             f"({_issues(described)}); fix the cause and deploy again (an update that changes "
                             "nothing retries the failed nodes)")
    if deleting or status != ACTIVE:
        return {"IsComplete": False}
    return {"IsComplete": True, "Data": {"Arn": arn}}
