"""HyperPod task governance through the SageMaker API, as a CloudFormation custom resource.

Resource types ``Custom::ClusterSchedulerConfig`` and ``Custom::ComputeQuota`` take the same
properties as ``AWS::SageMaker::ClusterSchedulerConfig`` and ``AWS::SageMaker::ComputeQuota`` (the
API's member names) and stand in for them in regions whose CloudFormation lacks those types.

Runs under the CDK provider framework (``custom_resources.Provider``): ``on_event`` starts a change
and returns the physical id (the API's id); ``is_complete`` polls the resource's ``Status``.
Plain boto3 and the standard library; every handler takes the SageMaker client as a parameter.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Optional

import boto3
from botocore import xform_name
from botocore.config import Config
from botocore.exceptions import ClientError

LOG = logging.getLogger(__name__)
LOG.setLevel(logging.INFO)

API_ID = re.compile(r"[a-z0-9]{12}")
DONE = ("Created", "Updated")
GONE = ("Deleting", "Deleted")  # a resource in these states is never adopted
NOT_FOUND = "ResourceNotFound"
ACCESS_DENIED = ("AccessDeniedException", "AccessDenied")


class ResourceError(Exception):
    """A request this provider cannot carry out; the message is ``path: problem (value); fix``."""


@dataclass(frozen=True)
class Kind:
    """One SageMaker task-governance resource: its API nouns and what cannot change in place."""

    resource_type: str
    noun: str
    plural: str
    # CloudFormation's createOnlyProperties of the native type: a change means a new resource.
    create_only: tuple[tuple[str, ...], ...]

    @property
    def id_key(self) -> str:
        return f"{self.noun}Id"

    @property
    def arn_key(self) -> str:
        return f"{self.noun}Arn"

    @property
    def version_key(self) -> str:
        return f"{self.noun}Version"

    @property
    def summaries_key(self) -> str:
        return f"{self.noun}Summaries"

    def operation(self, verb: str) -> str:
        return f"{verb}{self.plural if verb == 'List' else self.noun}"

    def call(self, client: Any, verb: str, **params: Any) -> dict[str, Any]:
        operation = self.operation(verb)
        try:
            return getattr(client, xform_name(operation))(**params)
        except ClientError as exc:
            if _code(exc) in ACCESS_DENIED:
                raise ResourceError(
                    f"{operation}: access denied ({exc.response['Error'].get('Message', '')}); allow "
                    f"sagemaker:{operation} to the provider's role"
                ) from None
            raise


KINDS = {
    kind.resource_type: kind
    for kind in (
        Kind("Custom::ClusterSchedulerConfig", "ClusterSchedulerConfig", "ClusterSchedulerConfigs",
             (("Name",), ("ClusterArn",))),
        Kind("Custom::ComputeQuota", "ComputeQuota", "ComputeQuotas",
             (("Name",), ("ClusterArn",), ("ComputeQuotaTarget", "TeamName"))),
    )
}


def sagemaker_client() -> Any:
    """The Lambda's client: region and credentials from its environment, throttling retried."""
    return boto3.client("sagemaker", config=Config(retries={"mode": "standard", "max_attempts": 8}))


# ---------------------------------------------------------------------------------------------
# Properties: CloudFormation sends every scalar as a string; the service model says what it was.

def _coerce(value: Any, shape: Any, path: str) -> Any:
    kind = shape.type_name
    if kind == "structure":
        if not isinstance(value, dict):
            raise ResourceError(f"{path}: is not an object ({value!r}); give the members of {shape.name}")
        unknown = sorted(set(value) - set(shape.members))
        if unknown:
            raise ResourceError(f"{path}.{unknown[0]}: is not a member of {shape.name} ({value[unknown[0]]!r}); "
                                f"use one of {', '.join(shape.members)}")
        return {k: _coerce(v, shape.members[k], f"{path}.{k}") for k, v in value.items()}
    if kind == "list":
        if not isinstance(value, list):
            raise ResourceError(f"{path}: is not a list ({value!r}); give a list of {shape.member.name}")
        return [_coerce(v, shape.member, f"{path}[{i}]") for i, v in enumerate(value)]
    if kind == "map":
        return {k: _coerce(v, shape.value, f"{path}.{k}") for k, v in value.items()}
    if kind in ("integer", "long"):
        if isinstance(value, bool) or not isinstance(value, (int, str)) or not re.fullmatch(r"-?\d+", str(value)):
            raise ResourceError(f"{path}: is not an integer ({value!r}); give a whole number, e.g. 4")
        return int(value)
    if kind in ("float", "double"):
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ResourceError(f"{path}: is not a number ({value!r}); give a number, e.g. 1.5") from None
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("true", "false"):
            return str(value).lower() == "true"
        raise ResourceError(f"{path}: is not a boolean ({value!r}); give true or false")
    return value


def request_properties(kind: Kind, properties: dict[str, Any], client: Any) -> dict[str, Any]:
    """The ``Create*`` request the properties describe, typed as the API model wants."""
    given = {k: v for k, v in properties.items() if k != "ServiceToken"}
    shape = client.meta.service_model.operation_model(kind.operation("Create")).input_shape
    request = _coerce(given, shape, "Properties")
    missing = [k for k in shape.required_members if k not in request]
    if missing:
        raise ResourceError(f"Properties.{missing[0]}: is missing ({kind.resource_type}); "
                            f"set it as for AWS::SageMaker::{kind.noun}")
    return request


def _get(properties: dict[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = properties
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _code(exc: ClientError) -> str:
    return exc.response.get("Error", {}).get("Code", "")


def _response(kind: Kind, resource_id: str, arn: str, version: Optional[int] = None) -> dict[str, Any]:
    data: dict[str, Any] = {"Arn": arn, "Id": resource_id}
    if version is not None:
        # is_complete waits for this version, not an earlier one; a string, like every attribute
        data["Version"] = str(version)
    return {"PhysicalResourceId": resource_id, "Data": data}


# ---------------------------------------------------------------------------------------------
# on_event

def find(kind: Kind, client: Any, name: str, cluster_arn: str) -> Optional[dict[str, Any]]:
    """The live resource called ``name`` on ``cluster_arn`` (every page of ``List*``), if any."""
    paginator = client.get_paginator(xform_name(kind.operation("List")))
    for page in paginator.paginate(ClusterArn=cluster_arn, NameContains=name):
        for summary in page.get(kind.summaries_key, []):
            if summary["Name"] == name and summary["Status"] not in GONE:
                return summary
    return None


def update_in_place(kind: Kind, client: Any, resource_id: str, request: dict[str, Any]) -> tuple[str, int]:
    """``Update*`` from the current version; returns the ARN and the new version."""
    current = kind.call(client, "Describe", **{kind.id_key: resource_id})
    members = client.meta.service_model.operation_model(kind.operation("Update")).input_shape.members
    fields = {k: v for k, v in request.items() if k in members}
    out = kind.call(client, "Update", **{kind.id_key: resource_id, "TargetVersion": current[kind.version_key]},
                    **fields)
    return out[kind.arn_key], out[kind.version_key]


def retag(client: Any, arn: str, old: Optional[list[dict[str, str]]], new: Optional[list[dict[str, str]]]) -> None:
    """Bring the resource's tags from ``old`` to ``new`` (``Update*`` takes no tags)."""
    before = {t["Key"]: t["Value"] for t in old or []}
    after = {t["Key"]: t["Value"] for t in new or []}
    removed = sorted(set(before) - set(after))
    changed = [{"Key": k, "Value": v} for k, v in sorted(after.items()) if before.get(k) != v]
    if removed:
        client.delete_tags(ResourceArn=arn, TagKeys=removed)
    if changed:
        client.add_tags(ResourceArn=arn, Tags=changed)


def create(kind: Kind, client: Any, request: dict[str, Any]) -> dict[str, Any]:
    """Create, or adopt the resource of that name on that cluster (a retried or re-run create)."""
    existing = find(kind, client, request["Name"], request["ClusterArn"])
    if existing is None:
        out = kind.call(client, "Create", **request)
        LOG.info("created %s %s (%s)", kind.noun, request["Name"], out[kind.id_key])
        return _response(kind, out[kind.id_key], out[kind.arn_key])
    resource_id = existing[kind.id_key]
    LOG.info("adopting %s %s (%s)", kind.noun, request["Name"], resource_id)
    arn, version = update_in_place(kind, client, resource_id, request)
    retag(client, arn, None, request.get("Tags"))
    return _response(kind, resource_id, arn, version)


def update(kind: Kind, client: Any, resource_id: str, request: dict[str, Any],
           old: dict[str, Any]) -> dict[str, Any]:
    """Update in place, or create a replacement when a create-only property changed."""
    changed = [path for path in kind.create_only if _get(request, path) != _get(old, path)]
    if changed:
        same_place = request["Name"] == old.get("Name") and request["ClusterArn"] == old.get("ClusterArn")
        if same_place:
            first = changed[0]
            raise ResourceError(
                f"Properties.{'.'.join(first)}: cannot change in place ({_get(old, first)!r} -> "
                f"{_get(request, first)!r}); give the {kind.noun} a new Name so that a replacement is created"
            )
        LOG.info("replacing %s %s: %s changed", kind.noun, resource_id, ", ".join(".".join(p) for p in changed))
        return create(kind, client, request)
    arn, version = update_in_place(kind, client, resource_id, request)
    retag(client, arn, old.get("Tags"), request.get("Tags"))
    return _response(kind, resource_id, arn, version)


def delete(kind: Kind, client: Any, resource_id: str) -> dict[str, Any]:
    """Delete; a resource already gone, or never created (failed create), is done."""
    if not API_ID.fullmatch(resource_id):
        LOG.info("nothing to delete: %s is not a %s id (its create failed)", resource_id, kind.noun)
        return {"PhysicalResourceId": resource_id}
    try:
        kind.call(client, "Delete", **{kind.id_key: resource_id})
    except ClientError as exc:
        if _code(exc) != NOT_FOUND:
            raise
        LOG.info("%s %s was already deleted", kind.noun, resource_id)
    return {"PhysicalResourceId": resource_id}


def kind_of(event: dict[str, Any]) -> Kind:
    resource_type = event.get("ResourceType", "")
    if resource_type not in KINDS:
        raise ResourceError(f"ResourceType: is not handled by this provider ({resource_type!r}); "
                            f"use one of {', '.join(sorted(KINDS))}")
    return KINDS[resource_type]


def on_event(event: dict[str, Any], context: Any, client: Any = None) -> dict[str, Any]:
    """Provider framework ``onEvent``: start the create, update or delete."""
    client = client or sagemaker_client()
    kind = kind_of(event)
    request_type = event["RequestType"]
    LOG.info("%s %s %s", request_type, kind.resource_type, event.get("PhysicalResourceId", ""))
    if request_type == "Delete":
        return delete(kind, client, event["PhysicalResourceId"])
    request = request_properties(kind, event["ResourceProperties"], client)
    if request_type == "Create":
        return create(kind, client, request)
    if request_type == "Update":
        old = request_properties(kind, event.get("OldResourceProperties", {}), client)
        return update(kind, client, event["PhysicalResourceId"], request, old)
    raise ResourceError(f"RequestType: is not Create, Update or Delete ({request_type!r}); this is a CloudFormation "
                        "event the provider does not know")


# ---------------------------------------------------------------------------------------------
# is_complete

def is_complete(event: dict[str, Any], context: Any, client: Any = None) -> dict[str, Any]:
    """Provider framework ``isComplete``: done once the resource reached its state; raise if that failed."""
    client = client or sagemaker_client()
    kind = kind_of(event)
    resource_id = event["PhysicalResourceId"]
    deleting = event["RequestType"] == "Delete"
    if deleting and not API_ID.fullmatch(resource_id):
        return {"IsComplete": True}
    try:
        current = kind.call(client, "Describe", **{kind.id_key: resource_id})
    except ClientError as exc:
        if _code(exc) != NOT_FOUND:
            raise
        if deleting:
            return {"IsComplete": True}
        # A resource just created can be missing from Describe for a moment; the provider's total
        # timeout bounds the wait if it never appears.
        LOG.info("%s %s is not visible yet", kind.noun, resource_id)
        return {"IsComplete": False}
    status = current["Status"]
    name = current.get("Name", "")
    if status.endswith("Failed"):
        raise ResourceError(f"{kind.noun} {name} ({resource_id}): {status} "
                            f"({current.get('FailureReason', 'no reason given')}); fix the cause and deploy again")
    if deleting:
        return {"IsComplete": status == "Deleted"}
    wanted = int(event.get("Data", {}).get("Version", 0))
    if status in DONE and current[kind.version_key] >= wanted:
        return {"IsComplete": True, "Data": {"Arn": current[kind.arn_key], "Id": resource_id}}
    LOG.info("%s %s (%s) is %s, version %s", kind.noun, name, resource_id, status, current[kind.version_key])
    return {"IsComplete": False}
