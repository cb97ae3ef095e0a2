"""AppliedManifests refuses a manifest too large for one custom resource."""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_eks_v2 as eks

from hyperpod_gov.constructs.manifests import MAX_MANIFEST_BYTES, AppliedManifests
from tests.synth_helpers import minimal_app


def test_an_oversized_manifest_is_a_synth_error():
    app = minimal_app()
    stack = cdk.Stack(app, "S")
    provider = eks.KubectlProvider.from_kubectl_provider_attributes(
        stack, "Provider", service_token="arn:aws:lambda:us-east-1:111111111111:function:handler",
        role=None)
    cluster = eks.Cluster.from_cluster_attributes(stack, "C", cluster_name="c", kubectl_provider=provider)
    big = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},
            "data": {"blob": "a" * (MAX_MANIFEST_BYTES + 1)}}]
    small = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y"}}]
    too_big = AppliedManifests(stack, "Big", cluster=cluster, manifest=big)
    fine = AppliedManifests(stack, "Small", cluster=cluster, manifest=small)
    assert any("split it (one per team)" in e for e in too_big.node.validate())
    assert fine.node.validate() == []
