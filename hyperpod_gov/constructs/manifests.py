"""Kubernetes manifests applied through the cluster's kubectl handler (which runs in the VPC)."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Optional, Sequence

import jsii
from aws_cdk import aws_eks_v2 as eks
from constructs import Construct, IValidation

from .dashboard_widgets import js_json
from .plain import Fragment

# The manifest travels in the custom resource's properties (inside a template of at
# most 1 MB) and in one Lambda request: keep each well below both.
MAX_MANIFEST_BYTES = 256 * 1024


def manifest_size(manifest: Sequence[dict[str, Any]]) -> int:
    """Bytes of the manifest as it travels in the custom resource's properties."""
    return len(json.dumps(list(manifest)).encode())


@jsii.implements(IValidation)
class _ManifestSize:
    def __init__(self, size: int) -> None:
        self.size = size

    def validate(self) -> list[str]:
        if self.size <= MAX_MANIFEST_BYTES:
            return []
        return [f"manifest is {self.size} bytes, over {MAX_MANIFEST_BYTES}: split it (one per team)"]


class AppliedManifests(Construct):
    """One ``kubectl apply`` of a list of objects; objects dropped from the list are pruned."""

    def __init__(self, scope: Construct, id: str, *, cluster: eks.ICluster, manifest: Sequence[dict[str, Any]]) -> None:
        super().__init__(scope, id)
        size = manifest_size(manifest)
        if size > MAX_MANIFEST_BYTES:  # a check that passes adds nothing but jsii calls and a callback at synth
            self.node.add_validation(_ManifestSize(size))
        self.resource = eks.KubernetesManifest(self, "Resource", cluster=cluster, manifest=list(manifest), prune=True)


# aws-cdk-lib's aws-eks-v2 (k8s-manifest.ts, k8s-object-value.ts): the custom resource types and the label that
# marks the objects of one KubernetesManifest for pruning.
MANIFEST_TYPE = "Custom::AWSCDK-EKS-KubernetesResource"
OBJECT_VALUE_TYPE = "Custom::AWSCDK-EKS-KubernetesObjectValue"
PRUNE_LABEL_PREFIX = "aws.cdk.eks/prune-"
_TOKEN_MARKS = ("${Token[", "#{Token[")  # a string or list token, as jsii hands it to Python


def node_addr(path: Sequence[str]) -> str:
    """The address ``constructs`` gives the construct at ``path`` (its ids from the app's, which is ""): "c8" and
    the SHA-1 of the ids, each followed by a newline, without "Default"."""
    digest = hashlib.sha1()
    for id in path:
        if id != "Default":
            digest.update(id.encode() + b"\n")
    return "c8" + digest.hexdigest()


def holds_tokens(manifest: Sequence[dict[str, Any]], text: Optional[str] = None) -> bool:
    """Whether a deploy-time value (a token) is in ``manifest`` (``text``: its ``json.dumps``, if made already):
    then only ``Stack.to_json_string`` renders it."""
    text = json.dumps(list(manifest)) if text is None else text
    return any(mark in text for mark in _TOKEN_MARKS)


def plain_manifest(fragment: Fragment, below: Sequence[str], *, service_token: str, cluster_name: str,
                   manifest: Sequence[dict[str, Any]], depends_on: Sequence[str] = ()) -> Optional[str]:
    """``AppliedManifests`` at ``below`` as plain data in ``fragment``: the custom resource aws-cdk-lib's
    ``KubernetesManifest`` renders (``prune``: each object labelled with the construct's address). None, and
    nothing added, for a manifest the construct must build: one holding tokens, or one too large (the
    construct's validation reports it)."""
    text = json.dumps(list(manifest))  # as manifest_size measures it
    if holds_tokens(manifest, text) or len(text.encode()) > MAX_MANIFEST_BYTES:
        return None
    # the KubernetesManifest is AppliedManifests' "Resource"
    label = PRUNE_LABEL_PREFIX + node_addr(["", *fragment.path.split("/"), *below, "Resource"])
    labelled = []
    for obj in manifest:
        if isinstance(obj, dict) and obj.get("kind"):
            metadata = dict(obj.get("metadata") or {})
            metadata["labels"] = {label: "", **(metadata.get("labels") or {})}
            obj = {**obj, "metadata": metadata}  # where it was, or last (where JavaScript adds it)
        labelled.append(obj)
    return fragment.add([*below, "Resource", "Resource", "Default"], MANIFEST_TYPE, {
        "ServiceToken": service_token, "Manifest": js_json(labelled), "ClusterName": cluster_name,
        "PruneLabel": label}, depends_on=depends_on, delete=True)


def plain_object_value(fragment: Fragment, below: Sequence[str], *, service_token: str, cluster_name: str,
                       object_type: str, object_name: str, json_path: str, timeout_seconds: int,
                       object_namespace: str = "default", depends_on: Sequence[str] = ()) -> str:
    """aws-cdk-lib's ``KubernetesObjectValue`` at ``below`` as plain data: the custom resource that waits for
    an object and reads ``json_path`` of it."""
    return fragment.add([*below, "Resource", "Default"], OBJECT_VALUE_TYPE, {
        "ServiceToken": service_token, "ClusterName": cluster_name, "ObjectType": object_type,
        "ObjectName": object_name, "ObjectNamespace": object_namespace, "JsonPath": json_path,
        "TimeoutSeconds": timeout_seconds}, depends_on=depends_on, delete=True)
