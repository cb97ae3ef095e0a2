"""Names derived from the spec. They are public API: changing one renames a live object."""

from __future__ import annotations

NAMESPACE_PREFIX = "hyperpod-ns-"


def namespace(team: str) -> str:
    return f"{NAMESPACE_PREFIX}{team}"


def cluster_queue(team: str) -> str:
    return f"{namespace(team)}-clusterqueue"


def local_queue(team: str) -> str:
    return f"{namespace(team)}-localqueue"


def viewers_group(team: str) -> str:
    return f"{namespace(team)}-viewers"


def submitters_group(team: str) -> str:
    return f"{namespace(team)}-submitters"


def priority_class(name: str) -> str:
    return f"{name}-priority"


def cohort(spec_name: str) -> str:
    return f"{spec_name}-cohort"


def flavor(instance_type: str) -> str:
    """ResourceFlavor named after the instance type (DESIGN.md)."""
    return instance_type


QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
