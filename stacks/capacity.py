"""The capacity account: VPC, EKS, HyperPod cluster, add-ons and the scheduler."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from aws_cdk import Environment, Stack, Tags
from constructs import Construct

from hyperpod_gov.constructs import (
    ClusterAddons,
    EksCluster,
    HyperPodCluster,
    LifecycleScripts,
    Network,
    Observability,
    SchedulerInstall,
)
from hyperpod_gov.constructs.hyperpod_cluster import acknowledge_bucket_deployment
from hyperpod_gov.constructs.network import availability_zones
from hyperpod_gov.spec.models import GovernanceSpec


def capacity_env(spec: GovernanceSpec) -> Environment:
    return Environment(account=spec.accounts.capacity.id, region=spec.accounts.capacity.region)


class CapacityStack(Stack):
    """Everything the shared cluster needs before any team is governed on it."""

    def __init__(self, scope: Construct, id: str, *, spec: GovernanceSpec, base_dir: Optional[Path] = None,
                 **kwargs: Any) -> None:
        super().__init__(
            scope,
            id,
            env=capacity_env(spec),
            description=f"hyperpod-gov {spec.name}: HyperPod cluster {spec.cluster.name} and its EKS cluster",
            **kwargs,
        )
        self._azs = availability_zones(spec)
        Tags.of(self).add("hyperpod-gov:spec", spec.name)
        self.network = Network(self, "Network", spec=spec)
        self.eks = EksCluster(self, "Eks", spec=spec, network=self.network)
        self.addons = ClusterAddons(self, "Addons", spec=spec, cluster=self.eks.cluster)
        self.lifecycle = LifecycleScripts(self, "LifecycleScripts", spec=spec)
        self.hyperpod = HyperPodCluster(
            self,
            "HyperPod",
            spec=spec,
            network=self.network,
            cluster=self.eks.cluster,
            lifecycle=self.lifecycle,
            depends_on=self.addons.networking,
            base_dir=base_dir,
        )
        # These run pods, so they need the HyperPod nodes to report healthy.
        self.addons.coredns.node.add_dependency(self.hyperpod.resource)
        self.observability = Observability(self, "Observability", spec=spec, cluster=self.eks.cluster)
        self.observability.node.add_dependency(self.hyperpod.resource, self.addons.pod_identity_agent)
        self.scheduler = SchedulerInstall(self, "Scheduler", spec=spec, cluster=self.eks.cluster)
        self.scheduler.node.add_dependency(self.hyperpod.resource, self.addons.coredns)
        acknowledge_bucket_deployment(self, self.lifecycle)

    @property
    def availability_zones(self) -> list[str]:
        """The spec's AZs: no lookup, so synth needs no credentials."""
        return list(self._azs)
