"""Kubernetes manifests applied through the cluster's kubectl handler (which runs in the VPC)."""

from __future__ import annotations

import json
from typing import Any, Sequence

import jsii
from aws_cdk import aws_eks_v2 as eks
from constructs import Construct, IValidation

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
