"""AWS CDK constructs, one concern per module."""

from .access import TeamAccessEntry
from .addons import ClusterAddons, SchedulerInstall
from .eks import EksCluster
from .hyperpod_cluster import HyperPodCluster
from .lifecycle import LifecycleScripts
from .identity import WorkloadIdentityRole
from .manifests import AppliedManifests
from .network import Network
from .observability import Observability
from .task_governance import ClusterPolicy, TeamQuota

__all__ = [
    "AppliedManifests",
    "ClusterPolicy",
    "TeamAccessEntry",
    "TeamQuota",
    "WorkloadIdentityRole",
    "ClusterAddons",
    "EksCluster",
    "HyperPodCluster",
    "LifecycleScripts",
    "Network",
    "Observability",
    "SchedulerInstall",
]
