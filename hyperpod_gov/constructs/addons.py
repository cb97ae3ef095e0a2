"""EKS add-ons every HyperPod cluster needs, and the one scheduler a spec asks for."""

from __future__ import annotations

from typing import Optional

from aws_cdk import Duration, aws_eks_v2 as eks
from constructs import Construct

from ..plan.tables import ADDON_CONFIGURATION
from ..spec.models import AddonVersions

TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
KUEUE_CHART_REPOSITORY = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_NAMESPACE = "kueue-system"


def _addon(scope: Construct, id: str, cluster: eks.ICluster, name: str, version: Optional[str],
           config: Optional[dict] = None) -> eks.Addon:
    return eks.Addon(
        scope,
        id,
        cluster=cluster,
        addon_name=name,
        addon_version=version,
        preserve_on_delete=False,
        configuration_values=config,
    )


class ClusterAddons(Construct):
    """vpc-cni with NetworkPolicy enforcement, kube-proxy, the Pod Identity agent and CoreDNS.

    ``networking`` (vpc-cni, kube-proxy, Pod Identity agent) must exist before the
    HyperPod nodes join; ``coredns`` needs nodes to run on, so callers make it
    depend on the HyperPod cluster.
    """

    def __init__(self, scope: Construct, id: str, *, versions: AddonVersions, cluster: eks.ICluster) -> None:
        super().__init__(scope, id)
        v = versions
        # NetworkPolicies are enforced only when the VPC CNI runs its network policy agent.
        self.vpc_cni = _addon(self, "VpcCni", cluster, "vpc-cni", v.vpc_cni, dict(ADDON_CONFIGURATION["vpc-cni"]))
        self.kube_proxy = _addon(self, "KubeProxy", cluster, "kube-proxy", v.kube_proxy)
        self.pod_identity_agent = _addon(self, "PodIdentityAgent", cluster, "eks-pod-identity-agent",
                                         v.pod_identity_agent)
        self.coredns = _addon(self, "CoreDns", cluster, "coredns", v.coredns)
        self.networking: tuple[eks.Addon, ...] = (self.vpc_cni, self.kube_proxy, self.pod_identity_agent)


class SchedulerInstall(Construct):
    """Exactly one scheduler: the HyperPod task-governance add-on, or open-source Kueue from its Helm chart.

    The task-governance add-on installs its own Kueue and owns the Kueue objects;
    installing both would make two controllers fight over the same CRDs.
    """

    def __init__(self, scope: Construct, id: str, *, task_governance: bool, versions: AddonVersions,
                 kueue_config: str, cluster: eks.ICluster) -> None:
        super().__init__(scope, id)
        v = versions
        self.resource: Construct
        if task_governance:
            self.resource = _addon(self, "TaskGovernance", cluster, TASK_GOVERNANCE_ADDON, v.task_governance)
        else:
            self.resource = eks.HelmChart(
                self,
                "Kueue",
                cluster=cluster,
                chart="kueue",
                repository=KUEUE_CHART_REPOSITORY,
                version=v.kueue_chart,
                release="kueue",
                namespace=KUEUE_NAMESPACE,
                create_namespace=True,
                wait=True,
                timeout=Duration.minutes(15),
                values={
                    "enableCertManager": False,
                    "enablePrometheus": False,
                    "managerConfig": {"controllerManagerConfigYaml": kueue_config},
                },
            )
