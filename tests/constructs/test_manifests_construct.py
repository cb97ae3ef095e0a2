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


def _on_a_cluster(build) -> dict:
    """The manifest's resource, applied by ``build`` on an ``eks.Cluster`` of its own stack."""
    from hyperpod_gov.constructs.eks import kubectl_layer

    app = minimal_app()
    stack = cdk.Stack(app, "S")
    cluster = eks.Cluster(stack, "Cluster", version=eks.KubernetesVersion.V1_31,
                          kubectl_provider_options=eks.KubectlProviderOptions(
                              kubectl_layer=kubectl_layer(stack, "Layer", "1.31")))
    build(stack, cluster)
    resources = app.synth().get_stack_by_name("S").template["Resources"]
    (found,) = [r for r in resources.values() if r["Type"] == "Custom::AWSCDK-EKS-KubernetesResource"]
    return found


def test_on_a_cluster_of_its_stack_the_manifest_comes_after_kubectl_is_ready_as_a_kubernetes_manifest_does():
    """A plain manifest (a wrapper of plain_manifest) on an eks.Cluster, not an imported one, depends on the
    cluster's kubectl barrier, as aws-cdk-lib's KubernetesManifest does: the same resource, DependsOn included."""
    from hyperpod_gov.constructs.manifests import KUBECTL_BARRIER
    from tests.constructs import cdk_builds

    objects = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}]
    wrapped = _on_a_cluster(lambda s, c: AppliedManifests(s, "Applied", cluster=c, manifest=objects))
    real = _on_a_cluster(lambda s, c: cdk_builds.manifest(s, "Applied", cluster=c, objects=objects))
    assert wrapped == real
    assert any(d.startswith(f"Cluster{KUBECTL_BARRIER}") for d in wrapped["DependsOn"])
