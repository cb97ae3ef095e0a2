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
INCLUDE_ID = "Resources"  # the CfnInclude under an AppliedManifests


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


# aws-cdk-lib's aws-eks-v2 (k8s-manifest.ts, k8s-object-value.ts): the custom resource types and the label that
# marks the objects of one KubernetesManifest for pruning.
MANIFEST_TYPE = "Custom::AWSCDK-EKS-KubernetesResource"
OBJECT_VALUE_TYPE = "Custom::AWSCDK-EKS-KubernetesObjectValue"
PRUNE_LABEL_PREFIX = "aws.cdk.eks/prune-"
# A Cluster's child that a KubernetesManifest on it depends on (_dependOnKubectlBarrier): kubectl is ready.
KUBECTL_BARRIER = "KubectlReadyBarrier"
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
    ``KubernetesManifest`` renders at ``<below>/Resource`` (``prune``: each object labelled with its address;
    tests/constructs/test_plain_teams.py and test_plain_pinned.py build one and compare). None, and nothing
    added, for a manifest the ``KubernetesManifest`` of an ``AppliedManifests`` must build: one holding tokens,
    or one too large (its validation reports it)."""
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


class AppliedManifests(Construct):
    """One ``kubectl apply`` of a list of objects; objects dropped from the list are pruned.

    A manifest of plain values is plain data (:func:`plain_manifest`, the one emitter of that case, which a teams
    stack also calls into its own fragment) in one ``CfnInclude``. A manifest holding tokens (only
    ``Stack.to_json_string`` renders them inside its JSON) or too large (the validation reports it) is aws-cdk-lib's
    ``KubernetesManifest``, the one emitter of those cases. ``resource`` is the included custom resource
    (``CfnResource``) or the ``KubernetesManifest``.
    """

    def __init__(self, scope: Construct, id: str, *, cluster: eks.ICluster, manifest: Sequence[dict[str, Any]]) -> None:
        super().__init__(scope, id)
        self.resource: Construct
        fragment = Fragment(self)
        provider = cluster.kubectl_provider
        if provider is None:
            raise ValueError(f"{fragment.path}: the cluster has no kubectl provider to apply the manifest with")
        logical = plain_manifest(fragment, [], service_token=provider.service_token,
                                 cluster_name=cluster.cluster_name, manifest=manifest)
        if logical is not None:
            self.resource = fragment.include_resources(INCLUDE_ID).get_resource(logical)
            if isinstance(cluster, eks.Cluster):  # KubernetesManifest's dependency (getKubectlProvider)
                self.node.add_dependency(cluster.node.find_child(KUBECTL_BARRIER))
            return
        size = manifest_size(manifest)
        if size > MAX_MANIFEST_BYTES:  # a check that passes adds nothing but jsii calls and a callback at synth
            self.node.add_validation(_ManifestSize(size))
        self.resource = eks.KubernetesManifest(self, "Resource", cluster=cluster, manifest=list(manifest), prune=True)
