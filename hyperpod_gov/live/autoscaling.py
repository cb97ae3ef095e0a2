"""preflight's checks of HyperPod-managed Karpenter autoscaling (``cluster.autoScaling``, issue 57).

AWS's prerequisites (SageMaker developer guide, "Autoscaling on SageMaker HyperPod EKS", Prerequisites): continuous
provisioning (``NodeProvisioningMode: Continuous``), ``NodeRecovery`` automatic, and the health-monitoring agent at
version 1.0.742.0_1.0.241.0 or later, configured before autoscaling is enabled. The first two are DescribeCluster's;
the agent's version is the tag of its image in the DaemonSets the HyperPod dependencies chart installs
(``aws-hyperpod/health-monitoring-agent`` and ``-non-nvidia``, helm_chart/HyperPodHelmChart of
aws/sagemaker-hyperpod-cli: ``<account>.dkr.ecr.<region>.amazonaws.com/hyperpod-health-monitoring-agent:<tag>``).

Each check gives ``(status, detail, fix)``, as ``isolation.py``'s do; ``preflight.py`` makes them ``Check``s.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

from .aws import LiveError
from .k8s import KubeApi, KubeUnavailable

MIN_AGENT = "1.0.742.0_1.0.241.0"
AGENT_NAMESPACE = "aws-hyperpod"
AGENT_DAEMONSETS = ("health-monitoring-agent", "health-monitoring-agent-non-nvidia")
AGENT_IMAGE = "hyperpod-health-monitoring-agent"
_TAG = re.compile(r"\A(\d+(?:\.\d+)*)_(\d+(?:\.\d+)*)\Z")
CHART = "the HyperPod dependencies chart (helm_chart/HyperPodHelmChart of github.com/aws/sagemaker-hyperpod-cli)"

SOURCES = {
    "continuous-provisioning": "SageMaker API DescribeCluster (NodeProvisioningMode, NodeRecovery); SageMaker "
                               "developer guide, 'Autoscaling on SageMaker HyperPod EKS', Prerequisites (continuous "
                               "provisioning, NodeRecovery automatic)",
    "autoscaling": "the spec's cluster.dependenciesChart (installed before the cluster); SageMaker developer guide, "
                   "'Autoscaling on SageMaker HyperPod EKS', Prerequisites (continuous provisioning, NodeRecovery "
                   f"automatic, Health Monitoring Agent {MIN_AGENT} or above)",
    "health-agent": "Kubernetes API GET daemonsets aws-hyperpod/health-monitoring-agent(-non-nvidia) (the image tag); "
                    "SageMaker developer guide, 'Autoscaling on SageMaker HyperPod EKS', Prerequisites (Health "
                    f"Monitoring Agent version {MIN_AGENT} or above)",
}

Result = tuple[str, str, str]


def agent_version(tag: str) -> Optional[tuple[tuple[int, ...], tuple[int, ...]]]:
    """``1.0.742.0_1.0.241.0`` as two version tuples (the agent's, then its detector's), compared in that order;
    None for a tag in another form (``latest``, a digest)."""
    m = _TAG.match(tag)
    if m is None:
        return None
    return tuple(map(int, m[1].split("."))), tuple(map(int, m[2].split(".")))


def provisioning(described: dict[str, Any]) -> Result:
    """NodeProvisioningMode Continuous and NodeRecovery Automatic on the live cluster (DescribeCluster)."""
    name = described.get("ClusterName", "")
    mode, recovery = described.get("NodeProvisioningMode"), described.get("NodeRecovery", "Automatic")
    problems, fixes = [], []
    if mode != "Continuous":
        problems.append(f"node provisioning is {mode or 'the standard mode'}, not Continuous")
        fixes.append("--node-provisioning-mode Continuous")
    if recovery != "Automatic":
        problems.append(f"node recovery is {recovery}, not Automatic")
        fixes.append("--node-recovery Automatic")
    if problems:
        return ("fix", f"HyperPod cluster {name}: {'; '.join(problems)}: Karpenter autoscaling needs both (AWS "
                "prerequisite)", f"aws sagemaker update-cluster --cluster-name {name} {' '.join(fixes)}, before "
                "autoscaling is enabled (or remove cluster.autoScaling)")
    return "pass", f"HyperPod cluster {name}: continuous provisioning, automatic node recovery", ""


def _images(daemonset: dict[str, Any]) -> list[str]:
    containers = (((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    return [c.get("image", "") for c in containers if AGENT_IMAGE in c.get("image", "")]


def health_agent(kube: Optional[Callable[[], KubeApi]]) -> Result:
    """The health-monitoring agent's version, from the image tag of its DaemonSets: every one found must be at
    least ``MIN_AGENT``."""
    if kube is None:
        return "skipped", ("not asked (--no-kubernetes): the health-monitoring agent's version, which autoscaling "
                           f"needs at {MIN_AGENT} or later, is unknown"), ""
    try:
        api = kube()
        found = {n: api.get_json(f"/apis/apps/v1/namespaces/{AGENT_NAMESPACE}/daemonsets/{n}")
                 for n in AGENT_DAEMONSETS}
    except KubeUnavailable as exc:
        return ("not checked", f"the Kubernetes API could not be read: {exc.reason}",
                "give --kubeconfig, or run where the EKS endpoint is reachable (or --no-kubernetes)")
    except LiveError as exc:
        return "not checked", f"the EKS endpoint could not be read: {exc}", ""
    images = [(n, image) for n, d in sorted(found.items()) if d is not None for image in _images(d)]
    if not images:
        return ("fix", f"no health-monitoring agent runs (no DaemonSet {AGENT_NAMESPACE}/{AGENT_DAEMONSETS[0]} with "
                f"its image): Karpenter autoscaling needs it at {MIN_AGENT} or later, configured before autoscaling "
                "is enabled (AWS prerequisite)", f"install {CHART} with a health-monitoring-agent image tag of "
                f"{MIN_AGENT} or later (cluster.dependenciesChart installs it on a cluster hyperpod-gov creates)")
    minimum = agent_version(MIN_AGENT)
    old, unread = [], []
    for name, image in images:
        tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
        version = agent_version(tag)
        if version is None:
            unread.append(f"{name} ({image})")
        elif minimum is not None and version < minimum:
            old.append(f"{name} runs {tag}")
    if old:
        return ("fix", f"the health-monitoring agent is older than {MIN_AGENT}, which Karpenter autoscaling needs "
                f"(AWS prerequisite): {'; '.join(old)}", f"upgrade {CHART} to a version whose "
                f"health-monitoring-agent imageTag is {MIN_AGENT} or later (helm upgrade ... --set "
                f"health-monitoring-agent.imageTag=...), then enable autoscaling")
    if unread:
        return ("not checked", f"the health-monitoring agent's image tag is not a version this check can read: "
                f"{'; '.join(unread)}", f"check by hand that it is {MIN_AGENT} or later")
    tags = ", ".join(sorted({f"{n} {image.rsplit(':', 1)[-1]}" for n, image in images}))
    return "pass", f"health-monitoring agent {tags} (at least {MIN_AGENT})", ""


def new_cluster(spec: Any) -> Result:
    """A cluster hyperpod-gov creates: continuous provisioning is the spec's (validate checks it, HPG-K001); the
    agent comes from cluster.dependenciesChart, installed before the cluster, whose version is read once it runs."""
    c = spec.cluster
    if getattr(c, "dependencies_chart", None) is None:
        return ("fix", "cluster.autoScaling is set and cluster.dependenciesChart is not: no health-monitoring agent "
                f"runs, and Karpenter autoscaling needs it at {MIN_AGENT} or later, configured before autoscaling is "
                "enabled (AWS prerequisite)", f"set cluster.dependenciesChart to {CHART}, at a version whose "
                f"health-monitoring-agent imageTag is {MIN_AGENT} or later")
    return ("pass", "cluster.dependenciesChart installs the health-monitoring agent before the cluster (its version "
            f"must be {MIN_AGENT} or later: preflight reads it once the cluster runs, with cluster.existing); "
            "continuous provisioning and node recovery are the spec's (validate)", "")
