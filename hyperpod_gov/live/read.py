"""Read the live state of a HyperPod cluster and its EKS cluster. Only Describe and List calls."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from ..plan import names
from .aws import Caller, ClientFactory, LiveError, NotFound

# Quotas and policies in these states are gone (or going): a planned one in them is missing.
GONE = {"Deleting", "Deleted"}

_ARN = re.compile(r"^arn:(?P<partition>[^:]+):(?P<service>[^:]+):(?P<region>[^:]*):(?P<account>\d{12}):"
                  r"(?P<kind>[^/]+)/(?P<name>.+)$")


@dataclass(frozen=True)
class Arn:
    partition: str
    region: str
    account: str
    name: str  # the part after "cluster/"

    @classmethod
    def parse(cls, arn: str) -> "Arn":
        m = _ARN.match(arn)
        if not m:
            raise LiveError("DescribeCluster", f"returned an ARN this tool cannot read ({arn!r})",
                            "report it as a bug with the ARN")
        return cls(m["partition"], m["region"], m["account"], m["name"])


@dataclass(frozen=True)
class LiveCluster:
    """``DescribeCluster`` of the HyperPod cluster, and what its ARNs tell."""

    name: str
    arn: str
    partition: str
    account: str
    region: str
    eks_cluster_arn: str
    eks_cluster_name: str
    instance_groups: tuple[dict[str, Any], ...]  # as DescribeCluster returns them, sorted by name
    raw: dict[str, Any]
    orchestrator: str = "eks"  # "eks" | "slurm" (Orchestrator.Slurm; then the EKS fields are "")


@dataclass(frozen=True)
class LiveGovernance:
    policies: tuple[dict[str, Any], ...]  # DescribeClusterSchedulerConfig, not deleted, sorted by name
    quotas: tuple[dict[str, Any], ...]  # DescribeComputeQuota, not deleted, sorted by team


@dataclass(frozen=True)
class LiveEks:
    access_entries: tuple[dict[str, Any], ...]  # DescribeAccessEntry.accessEntry, sorted by principal
    pod_identities: tuple[dict[str, Any], ...]  # DescribePodIdentityAssociation.association (team namespaces)
    addon_names: tuple[str, ...]  # ListAddons, sorted
    addons: tuple[dict[str, Any], ...]  # DescribeAddon.addon of the add-ons asked for


def sagemaker(clients: ClientFactory) -> Caller:
    return Caller(clients("sagemaker"), "sagemaker")


def eks(clients: ClientFactory) -> Caller:
    return Caller(clients("eks"), "eks")


def read_cluster(sm: Caller, cluster_name: str, region_hint: str = "", orchestrator: str = "eks") -> LiveCluster:
    """``DescribeCluster``; ``orchestrator`` is what the caller governs: "eks", "slurm", or "any" (import)."""
    try:
        raw = sm.call("describe_cluster", ClusterName=cluster_name)
    except NotFound as exc:
        where = f" in {region_hint}" if region_hint else ""
        raise LiveError("DescribeCluster", f"no HyperPod cluster named {cluster_name!r}{where} ({exc.problem})",
                        "check the cluster name, the account of your credentials (--profile) and --region") from None
    arn = Arn.parse(raw["ClusterArn"])
    orch = raw.get("Orchestrator") or {}
    eks_arn = (orch.get("Eks") or {}).get("ClusterArn")
    live = "eks" if eks_arn else "slurm" if "Slurm" in orch else ""
    if orchestrator != "any" and live != orchestrator:
        if orchestrator == "eks":
            raise LiveError("DescribeCluster", f"cluster {cluster_name!r} is not orchestrated by EKS"
                            + (" but by Slurm" if live == "slurm" else ""),
                            "for a Slurm cluster, write the spec with cluster.orchestrator: slurm (hyperpod-gov import "
                            "writes one)" if live == "slurm" else "hyperpod-gov governs EKS- and Slurm-orchestrated "
                            "HyperPod clusters")
        raise LiveError("DescribeCluster", f"cluster {cluster_name!r} is not orchestrated by Slurm"
                        + (" but by EKS" if live == "eks" else ""),
                        "the spec says cluster.orchestrator: slurm; check cluster.name, or drop the orchestrator key "
                        "for an EKS cluster")
    if not live:
        raise LiveError("DescribeCluster", f"cluster {cluster_name!r} has neither an EKS nor a Slurm orchestrator",
                        "report it as a bug with the DescribeCluster output")
    groups = sorted(raw.get("InstanceGroups", []), key=lambda g: g.get("InstanceGroupName", ""))
    return LiveCluster(
        name=raw.get("ClusterName", cluster_name), arn=raw["ClusterArn"], partition=arn.partition,
        account=arn.account, region=arn.region, eks_cluster_arn=eks_arn or "",
        eks_cluster_name=Arn.parse(eks_arn).name if eks_arn else "", instance_groups=tuple(groups), raw=raw,
        orchestrator=live,
    )


def _gone_is_none(caller: Caller, method: str, **params: Any) -> Optional[dict[str, Any]]:
    """Describe something a List call just returned; None if it was deleted in between."""
    try:
        return caller.call(method, **params)
    except NotFound:
        return None


def read_governance(sm: Caller, cluster: LiveCluster) -> LiveGovernance:
    """The cluster policy and every compute quota of the cluster, including ones nobody planned."""
    policies = []
    for summary in sm.pages("list_cluster_scheduler_configs", "ClusterSchedulerConfigSummaries",
                            ClusterArn=cluster.arn):
        if summary.get("Status") in GONE or summary.get("ClusterArn", cluster.arn) != cluster.arn:
            continue
        found = _gone_is_none(sm, "describe_cluster_scheduler_config",
                              ClusterSchedulerConfigId=summary["ClusterSchedulerConfigId"])
        if found is not None:
            policies.append(found)
    quotas = []
    for summary in sm.pages("list_compute_quotas", "ComputeQuotaSummaries", ClusterArn=cluster.arn):
        if summary.get("Status") in GONE or summary.get("ClusterArn", cluster.arn) != cluster.arn:
            continue
        found = _gone_is_none(sm, "describe_compute_quota", ComputeQuotaId=summary["ComputeQuotaId"])
        if found is not None:
            quotas.append(found)
    return LiveGovernance(
        policies=tuple(sorted((p for p in policies if p.get("Status") not in GONE), key=lambda p: p["Name"])),
        quotas=tuple(sorted((q for q in quotas if q.get("Status") not in GONE),
                            key=lambda q: (q["ComputeQuotaTarget"]["TeamName"], q["Name"]))),
    )


def read_eks(ek: Caller, eks_cluster_name: str, *, service_accounts: tuple[tuple[str, str], ...] = (),
             addons: tuple[str, ...] = ()) -> LiveEks:
    """Access entries, Pod Identity associations and add-ons of the EKS cluster.

    Every access entry is described (an unplanned one mapping onto a team group is drift); Pod
    Identity associations in team namespaces (or planned ones); the add-ons named in ``addons``.
    """
    entries = []
    for arn in ek.pages("list_access_entries", "accessEntries", clusterName=eks_cluster_name):
        found = _gone_is_none(ek, "describe_access_entry", clusterName=eks_cluster_name, principalArn=arn)
        if found is not None:
            entries.append({"principalArn": arn, **(found.get("accessEntry") or {})})
    planned = set(service_accounts)
    associations = []
    for summary in ek.pages("list_pod_identity_associations", "associations", clusterName=eks_cluster_name):
        key = (summary.get("namespace", ""), summary.get("serviceAccount", ""))
        if summary.get("associationId") and (key in planned or key[0].startswith(names.NAMESPACE_PREFIX)):
            found = _gone_is_none(ek, "describe_pod_identity_association", clusterName=eks_cluster_name,
                                  associationId=summary["associationId"])
            if found is not None:
                associations.append({"namespace": key[0], "serviceAccount": key[1], **(found.get("association") or {})})
    addon_names = sorted(ek.pages("list_addons", "addons", clusterName=eks_cluster_name))
    described = []
    for n in addon_names:
        if n in set(addons):
            found = _gone_is_none(ek, "describe_addon", clusterName=eks_cluster_name, addonName=n)
            if found is not None:
                described.append({"addonName": n, **(found.get("addon") or {})})
    return LiveEks(
        access_entries=tuple(sorted(entries, key=lambda e: e.get("principalArn", ""))),
        pod_identities=tuple(sorted(associations, key=lambda a: (a.get("namespace", ""), a.get("serviceAccount", "")))),
        addon_names=tuple(addon_names),
        addons=tuple(described),
    )


def read_eks_cluster(ek: Caller, eks_cluster_name: str) -> Optional[dict[str, Any]]:
    """``DescribeCluster`` of the EKS cluster (import reads its Kubernetes version and endpoint access)."""
    return ek.call("describe_cluster", name=eks_cluster_name).get("cluster")


def read_vpc_cidr(ec2: Caller, vpc_id: str) -> Optional[str]:
    """The primary IPv4 CIDR of the VPC (EC2 ``DescribeVpcs``); None if EC2 does not list it."""
    vpcs = ec2.call("describe_vpcs", VpcIds=[vpc_id]).get("Vpcs") or []
    return vpcs[0].get("CidrBlock") if vpcs else None


def read_addon_names(ek: Caller, eks_cluster_name: str) -> tuple[str, ...]:
    return tuple(sorted(ek.pages("list_addons", "addons", clusterName=eks_cluster_name)))
