"""AWS CDK constructs, one concern per module."""

from .addons import ClusterAddons, SchedulerInstall
from .eks import EksCluster
from .hyperpod_cluster import HyperPodCluster, LifecycleScripts
from .network import Network
from .observability import Observability

__all__ = [
    "ClusterAddons",
    "EksCluster",
    "HyperPodCluster",
    "LifecycleScripts",
    "Network",
    "Observability",
    "SchedulerInstall",
]
