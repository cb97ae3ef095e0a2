"""EKS add-ons every HyperPod cluster needs, and the one scheduler a spec asks for.

Every add-on of the library is an :class:`EksAddon`: its ``AWS::EKS::Addon`` is emitted from the ``ADDON`` table
(``plan/tables_addon.py``), the table ``drift`` compares the live add-ons with.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from aws_cdk import Duration, Stack, aws_eks_v2 as eks
from constructs import Construct

from ..plan.tables import ADDON, AddonPart, cfn_kwargs
from ..plan.tables_addon import addon_part
from ..spec.models import AddonVersions

TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
KUEUE_CHART_REPOSITORY = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_NAMESPACE = "kueue-system"


class EksAddon(Construct):
    """One EKS add-on: ``resource`` (``node.default_child``), its ``AWS::EKS::Addon``, built from the ``ADDON``
    table's rows for ``part`` alone.

    ``pod_identity_associations`` (``{"serviceAccount", "roleArn"}`` each) and ``service_account_role_arn``: the
    add-on's own roles, deploy-time references the table takes as context. ``preserveOnDelete`` is the table's
    (False: deleting the stack removes the add-on); a version of None leaves it to EKS's default.
    """

    def __init__(self, scope: Construct, id: str, *, part: AddonPart, cluster: eks.ICluster,
                 pod_identity_associations: Sequence[Mapping[str, str]] = (),
                 service_account_role_arn: Optional[str] = None) -> None:
        super().__init__(scope, id)
        context: dict[str, object] = {"clusterName": cluster.cluster_name}
        if pod_identity_associations:
            # EKS creates each association in the add-on's own namespace with the add-on.
            context["podIdentityAssociations"] = [dict(a) for a in pod_identity_associations]
        if service_account_role_arn is not None:
            context["serviceAccountRoleArn"] = service_account_role_arn
        props = cfn_kwargs(ADDON, part, context)
        if "configuration_values" in props:  # CloudFormation takes the configuration as JSON text
            props["configuration_values"] = Stack.of(self).to_json_string(props["configuration_values"])
        self.part = part
        self.resource = eks.CfnAddon(self, "Resource", **props)


class ClusterAddons(Construct):
    """vpc-cni with NetworkPolicy enforcement, kube-proxy, the Pod Identity agent and CoreDNS.

    ``networking`` (vpc-cni, kube-proxy, Pod Identity agent) must exist before the
    HyperPod nodes join; ``coredns`` needs nodes to run on, so callers make it
    depend on the HyperPod cluster.
    """

    def __init__(self, scope: Construct, id: str, *, versions: AddonVersions, cluster: eks.ICluster) -> None:
        super().__init__(scope, id)
        v = versions
        # NetworkPolicies are enforced only when the VPC CNI runs its network policy agent (its configuration is
        # the table's, ADDON_CONFIGURATION).
        self.vpc_cni = EksAddon(self, "VpcCni", part=addon_part("vpc-cni", v.vpc_cni), cluster=cluster)
        self.kube_proxy = EksAddon(self, "KubeProxy", part=addon_part("kube-proxy", v.kube_proxy), cluster=cluster)
        self.pod_identity_agent = EksAddon(self, "PodIdentityAgent", cluster=cluster,
                                           part=addon_part("eks-pod-identity-agent", v.pod_identity_agent))
        self.coredns = EksAddon(self, "CoreDns", part=addon_part("coredns", v.coredns), cluster=cluster)
        self.networking: tuple[EksAddon, ...] = (self.vpc_cni, self.kube_proxy, self.pod_identity_agent)


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
            self.resource = EksAddon(self, "TaskGovernance", part=addon_part(TASK_GOVERNANCE_ADDON, v.task_governance),
                                     cluster=cluster)
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
