"""How the cluster schedules and shares work: mode, idle compute, priority classes, gang scheduling, topology."""

from __future__ import annotations

import difflib
import re
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from ._base import SpecModel, check_label, spec_error
from .types import MAX_NAME

# A Go duration as Kueue's metav1.Duration reads it, in the units a scheduling timeout needs: one or more
# <number><unit> parts, unit h, m or s ("10m", "1h30m", "90s", "1.5h").
GO_DURATION = re.compile(r"\A(?:[0-9]+(?:\.[0-9]+)?(?:h|m|s))+\Z", re.ASCII)
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(h|m|s)", re.ASCII)
_UNIT_SECONDS = {"h": 3600, "m": 60, "s": 1}
MAX_TIMEOUT_SECONDS = 7 * 24 * 3600  # a week: beyond it a job that cannot start holds its quota for nothing
INT32_MAX = 2**31 - 1  # Kueue's requeuing counters are int32

# The AWS pages the scheduling controls follow (docs/governance.md quotes them).
GANG_SCHEDULING_PAGE = ("https://docs.aws.amazon.com/sagemaker/latest/dg/"
                        "sagemaker-hyperpod-eks-operate-console-ui-governance-tasks-gang-scheduling.html")
TOPOLOGY_PAGE = ("https://docs.aws.amazon.com/sagemaker/latest/dg/"
                 "sagemaker-hyperpod-eks-operate-console-ui-governance-tasks-scheduling.html")
# TOPOLOGY_PAGE: "make sure that your version of HyperPod task governance is v1.2.2-eksbuild.1 or higher".
TOPOLOGY_MIN_ADDON = (1, 2, 2)
# TOPOLOGY_PAGE: "Topology-aware scheduling supports the following instance types".
TOPOLOGY_INSTANCE_TYPES = frozenset({
    "ml.p3dn.24xlarge", "ml.p4d.24xlarge", "ml.p4de.24xlarge", "ml.p5.48xlarge", "ml.p5e.48xlarge",
    "ml.p5en.48xlarge", "ml.p6e-gb200.36xlarge", "ml.trn1.2xlarge", "ml.trn1.32xlarge", "ml.trn1n.32xlarge",
    "ml.trn2.48xlarge", "ml.trn2u.48xlarge",
})

# The node labels a topology level may name, outermost first: the network layers HyperPod (and EKS) put on the
# nodes of the instance types that support topology-aware scheduling, then the node itself
# (https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-operate-console-ui-governance-tasks-scheduling.html).
TOPOLOGY_LABELS = (
    "topology.k8s.aws/network-node-layer-1",
    "topology.k8s.aws/network-node-layer-2",
    "topology.k8s.aws/network-node-layer-3",
    "kubernetes.io/hostname",
)


def duration_seconds(value: str) -> float:
    """The seconds a Go duration string (``GO_DURATION``) stands for."""
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in _DURATION_PART.findall(value))


def check_duration(value: str, *, allow_zero: bool) -> str:
    if not GO_DURATION.match(value):
        raise spec_error("is not a Go duration", "write a number and a unit (h, m or s), e.g. '10m', '90s' or "
                         "'1h30m'")
    seconds = duration_seconds(value)
    if seconds == 0 and not allow_zero:
        raise spec_error("is zero: Kueue needs a timeout to wait for", "use at least '1s', e.g. '10m'")
    if seconds > MAX_TIMEOUT_SECONDS:
        raise spec_error("is longer than a week (168h)", "use at most '168h'; a job that cannot start in that "
                         "time holds its quota for nothing")
    return value


class PriorityClass(SpecModel):
    """A class of work; higher weight goes first and may preempt lower."""

    name: str = Field(description="DNS-1123 label, at most 40 characters.")
    weight: int = Field(ge=0, le=100, description="0..100, 100 is the highest priority.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_label(v, what="priority class name", max_len=MAX_NAME)


class Requeuing(SpecModel):
    """How work evicted by gang scheduling goes back to its queue (Kueue's waitForPodsReady.requeuingStrategy)."""

    timestamp: Literal["Eviction", "Creation"] = Field(
        default="Eviction",
        description="Where an evicted workload goes in its queue: Eviction (default) orders it by when it was "
        "evicted, behind what waited meanwhile; Creation by when it was created, so it keeps its place.",
    )
    backoff_limit_count: Optional[int] = Field(
        default=None, ge=0, le=INT32_MAX,
        description="How many times a workload is requeued before Kueue deactivates it (spec.active: false); "
        "default: none, requeued for as long as it takes.",
    )
    backoff_base_seconds: int = Field(
        default=60, ge=1, le=INT32_MAX,
        description="The first requeue delay in seconds; each next one doubles (60, 120, 240 ...; default: 60).",
    )
    backoff_max_seconds: int = Field(
        default=3600, ge=1, le=INT32_MAX,
        description="The longest requeue delay in seconds (default: 3600).",
    )

    @model_validator(mode="after")
    def _max_covers_base(self) -> "Requeuing":
        if self.backoff_max_seconds < self.backoff_base_seconds:
            raise spec_error(
                f"backoffMaxSeconds ({self.backoff_max_seconds}) is shorter than backoffBaseSeconds "
                f"({self.backoff_base_seconds}): every delay would be cut to the maximum",
                f"raise backoffMaxSeconds to at least {self.backoff_base_seconds}, or lower backoffBaseSeconds",
            )
        return self


class GangScheduling(SpecModel):
    """All-or-nothing start of a job's pods: Kueue's waitForPodsReady (kueue mode renders it; in task-governance
    mode HyperPod documents it as the cluster's gang scheduling setting, see docs/governance.md)."""

    timeout: str = Field(
        default="5m",
        description="How long an admitted workload may take until all its pods are ready (scheduled, running, "
        "passing readiness probes) before it is evicted and requeued; a Go duration (default: 5m, HyperPod's).",
    )
    recovery_timeout: Optional[str] = Field(
        default=None,
        description="How long a running workload may have a pod not ready (a node failed, its replacement is "
        "awaited) before it is evicted and requeued; '0s' turns the check off (default: the timeout).",
    )
    block_admission: bool = Field(
        default=False,
        description="Admit one workload at a time: none is admitted until the last one's pods are all ready "
        "(avoids deadlocks on a full cluster, slows admission; default: false).",
    )
    requeuing: Requeuing = Field(default_factory=Requeuing, description="How evicted work is requeued.")

    @field_validator("timeout")
    @classmethod
    def _timeout(cls, v: str) -> str:
        return check_duration(v, allow_zero=False)

    @field_validator("recovery_timeout")
    @classmethod
    def _recovery(cls, v: Optional[str]) -> Optional[str]:
        return None if v is None else check_duration(v, allow_zero=True)


class Topology(SpecModel):
    """Topology-aware scheduling: the network levels a job's pods are packed into, outermost first."""

    levels: tuple[str, ...] = Field(
        min_length=1, max_length=len(TOPOLOGY_LABELS),
        description="Node labels from the outermost level to the innermost, each at most once, "
        "kubernetes.io/hostname last: topology.k8s.aws/network-node-layer-1, -2, -3 (the labels HyperPod puts on "
        "nodes of the instance types that support it) and kubernetes.io/hostname.",
    )

    @field_validator("levels")
    @classmethod
    def _levels(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for label in v:
            if label not in TOPOLOGY_LABELS:
                near = difflib.get_close_matches(label, TOPOLOGY_LABELS, n=1)
                raise spec_error(
                    f"names {label!r}, which is not a label HyperPod puts on nodes",
                    (f"did you mean {near[0]!r}? " if near else "") + "use levels from "
                    + ", ".join(TOPOLOGY_LABELS) + ", outermost first",
                )
        repeated = sorted({label for label in v if v.count(label) > 1})
        if repeated:
            raise spec_error(f"names {repeated[0]!r} twice", "list each level once")
        rank = [TOPOLOGY_LABELS.index(label) for label in v]
        if rank != sorted(rank):
            ordered = [label for label in TOPOLOGY_LABELS if label in v]
            raise spec_error(
                "is not ordered from the outermost level to the innermost (network layer 1 holds layer 2, which "
                "holds layer 3, which holds the node; kubernetes.io/hostname comes last)",
                "write them as [" + ", ".join(ordered) + "]",
            )
        return v


class Scheduler(SpecModel):
    """How the cluster schedules and shares work."""

    mode: Literal["task-governance", "kueue"] = Field(
        default="task-governance",
        description="task-governance (default): the managed HyperPod feature; kueue: open-source Kueue objects.",
    )
    idle_compute: Literal["fair-share", "first-come-first-serve"] = Field(
        default="fair-share",
        description="How idle capacity is handed out while idleResourceSharing is on (default: fair-share, by "
        "fairShareWeight; SchedulerConfig.FairShare).",
    )
    idle_resource_sharing: bool = Field(
        default=True,
        description="Whether teams may borrow capacity others leave idle at all (SchedulerConfig.IdleResourceSharing; "
        "default: true). idleCompute says how idle capacity is handed out when it is shared (fair-share or "
        "first-come-first-serve); false switches sharing off for every team whatever its sharing strategy: each "
        "team runs on what it owns alone (kueue mode: every borrowingLimit is 0).",
    )
    priority_classes: tuple[PriorityClass, ...] = Field(
        default=(),
        max_length=10,
        description="At most 10. Work without a class has priority 0, the lowest (default: none).",
    )
    task_governance_resources: Literal["auto", "native", "custom-resource"] = Field(
        default="auto",
        description="How the cluster policy and compute quotas are deployed in task-governance mode. auto (default): "
        "the native CloudFormation types (AWS::SageMaker::ClusterSchedulerConfig, ComputeQuota) where the region's "
        "CloudFormation has them, an SDK-backed custom resource with the same properties elsewhere; native or "
        "custom-resource force one. `hyperpod-gov explain` says which was chosen.",
    )
    gang_scheduling: Optional[GangScheduling] = Field(
        default=None,
        description="Gang scheduling (Kueue's waitForPodsReady): a job whose pods are not all ready in time is "
        "evicted and requeued. kueue mode renders it into Kueue's configuration; in task-governance mode AWS "
        "documents it as a SageMaker console action (Configure gang scheduling), so hyperpod-gov prints the settings "
        "and warns (HPG-Q012, docs/governance.md). Default: kueue mode keeps waitForPodsReady on with Kueue's "
        "defaults and blockAdmission off; task-governance mode leaves the add-on's setting alone.",
    )
    topology: Optional[Topology] = Field(
        default=None,
        description="Topology-aware scheduling: kueue mode emits a Kueue Topology with these levels and points the "
        "flavors of accelerated types whose nodes carry its labels at it; task-governance mode relies on the topology labels HyperPod puts on nodes "
        "(add-on v1.2.2 or later). Jobs ask for a level with the kueue.x-k8s.io/podset-required-topology or "
        "podset-preferred-topology annotation. Default: none.",
    )
