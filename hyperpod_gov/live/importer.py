"""Write a spec from a live cluster: instance groups, the cluster policy, one team per compute quota.

What the APIs do not hold (access principals, contracts, workload identities, the VPC) is left as
commented placeholders; every value that had to be guessed carries a ``# guessed:`` comment.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Optional

import yaml

from ..plan.fields import imported
from ..plan.tables import CLUSTER_POLICY, COMPUTE_QUOTA, INSTANCE_GROUP
from ..spec import SpecError, SpecIssue, parse_spec
from ..spec.cluster import Cluster as _ClusterModel
from ..spec.models import DEFAULT_BORROW_LIMIT_PERCENT
from .import_elastic import AUTOSCALE_NOTE, autoscaling_enabled, elastic_cluster_lines, type_line
from .read import LiveCluster, LiveGovernance

MAX_SPEC_NAME = 20
# Governance-only mode (``cluster.existing``): import writes it where the spec model has it.
EXISTING_SUPPORTED = "existing" in _ClusterModel.model_fields
TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
OBSERVABILITY_ADDON = "amazon-cloudwatch-observability"


@dataclass(frozen=True)
class LiveNetwork:
    """What governance-only mode needs beyond the clusters: the VPC's CIDR (EC2) and the installed add-ons."""

    vpc_cidr: Optional[str]
    addon_names: tuple[str, ...]
    # the vpc-cni add-on enforces NetworkPolicies in strict mode (live/isolation.py); None: DescribeAddon was denied
    vpc_cni_enforces: Optional[bool] = False
_PLAIN = re.compile(r"^[a-z][a-z0-9._/-]*$")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}


@dataclass(frozen=True)
class ImportResult:
    text: str  # the spec, YAML with comments
    issues: tuple[SpecIssue, ...]  # what load_spec finds in it (empty: it validates)


def _s(value: Any) -> str:
    """A YAML scalar: plain when unambiguous, else double-quoted (JSON strings are YAML)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if _PLAIN.match(text) and text not in _YAML_WORDS:
        return text
    return json.dumps(text)


def _label(value: str, max_len: int) -> str:
    cleaned = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")
    return cleaned[:max_len].rstrip("-") or "imported"


def _spec_name(cluster: LiveCluster, policy: Optional[dict[str, Any]]) -> tuple[str, str]:
    """(name, comment): the planned policy is named ``<name>-policy``, so a matching live policy names the spec."""
    if policy is not None:
        m = re.fullmatch(r"([a-z0-9]([-a-z0-9]*[a-z0-9])?)-policy", policy["Name"])
        if m and len(m.group(1)) <= MAX_SPEC_NAME:
            return m.group(1), f"from the cluster policy's name ({policy['Name']})"
    name = _label(cluster.name, MAX_SPEC_NAME)
    return name, "guessed from the cluster name; it prefixes every AWS resource name hyperpod-gov creates"


def _allocation(r: dict[str, Any]) -> tuple[Optional[str], list[str]]:
    """A ComputeQuotaResourceConfig as a spec entry's flow mapping (None if it holds no amount the spec writes),
    and the members the entry leaves out (the spec gives one amount per entry)."""
    itype = _s(r.get("InstanceType", ""))
    partition = r.get("AcceleratorPartition") or {}
    vcpu, memory = r.get("VCpu"), r.get("MemoryInGiB")
    if partition.get("Type") and partition.get("Count"):
        used, body = {"AcceleratorPartition"}, (f"partitions: {{profile: {_s(partition['Type'])}, "
                                                f"count: {int(partition['Count'])}}}")
    elif r.get("Accelerators"):
        used, body = {"Accelerators"}, f"accelerators: {r['Accelerators']}"
    elif r.get("Count"):
        used, body = {"Count"}, f"count: {r['Count']}"
    elif vcpu and memory and float(vcpu).is_integer() and float(memory).is_integer():
        used, body = {"VCpu", "MemoryInGiB"}, f"vcpu: {int(vcpu)}, memoryGib: {int(memory)}"
    else:
        return None, [k for k, v in r.items() if k != "InstanceType" and v]
    return f"{{instanceType: {itype}, {body}}}", [k for k, v in r.items() if k not in used | {"InstanceType"} and v]


def _partitioned_types(governance: LiveGovernance) -> dict[str, str]:
    """Instance type -> the MIG profile the compute quotas allocate on it (the API does not say how nodes are
    partitioned; a quota in partitions implies it)."""
    out: dict[str, str] = {}
    for q in governance.quotas:
        config = q.get("ComputeQuotaConfig") or {}
        for r in config.get("ComputeQuotaResources", []):
            profile = (r.get("AcceleratorPartition") or {}).get("Type")
            if profile:
                out.setdefault(r.get("InstanceType", ""), profile)
    return out


def _existing_lines(cluster: LiveCluster, eks_cluster: dict[str, Any], network: LiveNetwork) -> list[str]:
    """``cluster.existing`` from SageMaker and EKS ``DescribeCluster``, and the VPC's CIDR from EC2."""
    vpc = eks_cluster.get("resourcesVpcConfig") or {}
    subnets = list(vpc.get("subnetIds") or [])
    sg = vpc.get("clusterSecurityGroupId")
    sg_note = "the EKS cluster security group: its members reach the API on 443"
    if not sg:
        groups = list(vpc.get("securityGroupIds") or [])
        sg = groups[0] if groups else "sg-REPLACE"
        sg_note = ("guessed: the EKS cluster's first additional security group; it must let the kubectl handler "
                   "reach the API on 443")
    out = [
        "  existing:  # governance-only mode: hyperpod-gov creates no capacity, it governs this cluster",
        f"    hyperPodClusterArn: {_s(cluster.arn)}",
        f"    eksClusterName: {_s(cluster.eks_cluster_name)}",
        f"    vpcId: {_s(vpc.get('vpcId') or 'vpc-REPLACE')}",
        f"    subnetIds: [{', '.join(_s(x) for x in subnets)}]  # the EKS cluster's subnets (they reach its "
        "endpoint); the kubectl handler runs in them: keep private ones",
        f"    securityGroupId: {_s(sg)}  # {sg_note}",
    ]
    names = set(network.addon_names)
    installs = []
    if TASK_GOVERNANCE_ADDON not in names:
        installs.append(f"      scheduler: true  # {TASK_GOVERNANCE_ADDON} is not installed: hyperpod-gov installs it "
                        "(preflight checks that no self-managed Kueue runs)")
    if OBSERVABILITY_ADDON not in names:
        installs.append(f"      observability: false  # {OBSERVABILITY_ADDON} is not installed; true installs it "
                        "(the dashboards' Kueue and node metrics)")
    if installs:
        out += ["    installs:", *installs]
    if network.vpc_cni_enforces:
        out.append("    networkPolicyEnforcement: {enforcer: vpc-cni}  # the vpc-cni add-on runs with "
                   "enableNetworkPolicy in strict mode (preflight checks it)")
    elif network.vpc_cni_enforces is None:
        out.append("    # networkPolicyEnforcement: {enforcer: vpc-cni}  # not written: eks:DescribeAddon was denied, "
                   "so import could not read the vpc-cni add-on; `hyperpod-gov preflight` checks it (HPG-E006)")
    else:
        out.append("    # networkPolicyEnforcement: {enforcer: vpc-cni}  # not written: the vpc-cni add-on does not "
                   "enforce NetworkPolicies in strict mode (or is not an EKS add-on); `hyperpod-gov preflight` says "
                   "how to fix it, or name another enforcer with a reason (HPG-E006)")
    version = eks_cluster.get("version")
    out.append(f"  kubernetesVersion: {json.dumps(version)}  # from EKS cluster {cluster.eks_cluster_name}" if version
               else '  kubernetesVersion: "1.33"  # guessed: the EKS cluster did not report its version')
    if network.vpc_cidr:
        out.append(f"  vpc: {{cidr: {_s(network.vpc_cidr)}}}  # from EC2 DescribeVpcs (the teams' NetworkPolicies "
                   "allow HTTPS to it)")
    else:
        out.append("  # vpc: {cidr: REPLACE}  # the CIDR of the VPC (EC2 did not say): required with existing")
    return out


def _cluster_lines(cluster: LiveCluster, eks_cluster: Optional[dict[str, Any]],
                   partitioned: Optional[dict[str, str]] = None, network: Optional[LiveNetwork] = None) -> list[str]:
    out = ["cluster:", f"  name: {_s(cluster.name)}"]
    if network is not None:
        out += _existing_lines(cluster, eks_cluster or {}, network)
        out += elastic_cluster_lines(cluster, _s)
        out.append("  instanceGroups:  # as the cluster has them (the quota checks use them)")
        return out + _group_lines(cluster, partitioned)
    if cluster.eks_cluster_name != f"{cluster.name}-eks":
        out.append(f"  # the EKS cluster is {cluster.eks_cluster_name}; hyperpod-gov names it {cluster.name}-eks "
                   "(drift reports this as a Cluster change)")
    eks_cluster = eks_cluster or {}
    version = eks_cluster.get("version")
    if version:
        out.append(f"  kubernetesVersion: {json.dumps(version)}  # from EKS cluster {cluster.eks_cluster_name}")
    else:
        out.append('  kubernetesVersion: "1.33"  # guessed: the EKS cluster did not report its version')
    vpc = eks_cluster.get("resourcesVpcConfig") or {}
    cidrs = [c for c in vpc.get("publicAccessCidrs", []) if c != "0.0.0.0/0"]
    if vpc.get("endpointPublicAccess") and cidrs:
        out.append("  endpointAccess: public-and-private")
        out.append(f"  adminCidrs: [{', '.join(_s(c) for c in cidrs)}]")
    elif vpc.get("endpointPublicAccess"):
        out.append("  endpointAccess: private  # guessed: the live public endpoint is open to 0.0.0.0/0, which the "
                   "spec does not allow; to keep a public endpoint, set public-and-private and adminCidrs")
    else:
        out.append("  endpointAccess: private")
    out += elastic_cluster_lines(cluster, _s)
    out += [
        "  # vpc: not read by import (guessed: the default 10.192.0.0/16 over 2 AZs); set the cluster's VPC CIDR",
        "  # vpc: {cidr: 10.192.0.0/16, maxAzs: 2}",
        "  # admins: IAM roles given cluster-admin access entries (not read by import)",
        f'  # admins: ["arn:{cluster.partition}:iam::{cluster.account}:role/PlatformAdmin"]',
        "  instanceGroups:",
    ]
    return out + _group_lines(cluster, partitioned)


def _group_lines(cluster: LiveCluster, partitioned: Optional[dict[str, str]]) -> list[str]:
    out: list[str] = []
    autoscaling = autoscaling_enabled(cluster)
    for g in cluster.instance_groups:
        values = imported(INSTANCE_GROUP, g)
        name = values.get("name", "")
        label = _label(name, 63)
        out.append(f"    - name: {_s(label)}" + (f"  # renamed from {name} (not a DNS-1123 label)" if label != name
                                                  else ""))
        out.append(type_line(g, values, _s))
        out.append(f"      count: {values.get('count', 0)}" + ("" if "TargetCount" in g else "  # guessed from CurrentCount"))
        if autoscaling:
            out.append(AUTOSCALE_NOTE)
        out += _other_values(values, _GROUP_WRITTEN, "      ")
        volume = values.get("volumeSizeGb")
        if volume:
            out.append(f"      volumeSizeGb: {volume}")
        profile = (partitioned or {}).get(g.get("InstanceType", ""))
        if profile:
            out.append(f"      mig: {{profile: {_s(profile)}}}  # guessed: the compute quotas allocate {profile} "
                       "partitions of this type")
    return out


def _scheduler_lines(policies: tuple[dict[str, Any], ...]) -> list[str]:
    out = ["scheduler:", "  mode: task-governance"]
    if not policies:
        out.append("  # the cluster has no cluster policy: hyperpod-gov will create one (no priority classes)")
        out.append("  idleCompute: fair-share  # guessed: no cluster policy on the cluster")
        return out
    policy = policies[0]
    if len(policies) > 1:
        out.append(f"  # {len(policies)} cluster policies on the cluster; imported {policy['Name']}")
    values = imported(CLUSTER_POLICY, policy)
    if "idleCompute" not in values:
        out.append("  idleCompute: fair-share  # guessed: the cluster policy does not set FairShare")
    else:
        out.append(f"  idleCompute: {values['idleCompute']}")
    if values.get("idleResourceSharing") is False:
        out.append("  idleResourceSharing: false")
    classes = values.get("priorityClasses") or []
    if classes:
        out.append("  priorityClasses:")
        out += [f"    - {{name: {_s(p['name'])}, weight: {p['weight']}}}" for p in classes]
    return out


# Spec keys the writers above put in place themselves (with comments where a value is guessed); any other value
# a table maps back (a new row with ``to_spec``) is written as it is by ``_other_values``.
_TEAM_WRITTEN = {"name", "active", "fairShareWeight", "sharing.strategy", "sharing.borrowLimitPercent",
                 "preemptTeamTasks"}
_GROUP_WRITTEN = {"name", "instanceType", "count", "volumeSizeGb"}


def _other_values(values: dict[str, Any], written: set[str], indent: str) -> list[str]:
    """``key: value`` lines for the table values the writer does not place itself (flat keys only)."""
    return [f"{indent}{key}: {_s(value)}" for key, value in sorted(values.items())
            if key not in written and "." not in key and isinstance(value, (str, int, bool))]


def _team_lines(quota: dict[str, Any], cluster: LiveCluster) -> list[str]:
    config = quota.get("ComputeQuotaConfig") or {}
    values = imported(COMPUTE_QUOTA, quota)
    team = values["name"]
    out = [f"  - name: {_s(team)}  # compute quota {quota['Name']}"]
    if values.get("active") is False:
        out.append("    active: false  # the quota is Disabled on the cluster: the team is paused")
    weight = values.get("fairShareWeight")
    if weight is None:
        out.append("    fairShareWeight: 100  # guessed: the quota does not set FairShareWeight")
    else:
        out.append(f"    fairShareWeight: {weight}")
    entries, notes = [], []
    for r in config.get("ComputeQuotaResources", []):
        itype = r.get("InstanceType", "")
        entry, left_out = _allocation(r)
        if entry is not None:
            entries.append(f"      - {entry}")
        if left_out:
            extra = {k: r[k] for k in left_out}
            notes.append(f"      # {itype}: {json.dumps(extra, sort_keys=True)} not written: the spec gives one of "
                         "count, accelerators, vcpu with memoryGib, or partitions per entry; drift will report a "
                         "difference")
    if entries:
        out.append("    quota:")
        out += entries + notes
    else:
        out += ["    quota: []  # the quota owns nothing the spec can write"] + [n[2:] for n in notes]
    sharing = config.get("ResourceSharingConfig") or {}
    strategy = values.get("sharing.strategy", "LendAndBorrow")
    guess = "" if "sharing.strategy" in values else "  # guessed: the quota does not set a sharing strategy"
    if strategy == "LendAndBorrow":
        limit = values.get("sharing.borrowLimitPercent")
        if limit is None:
            out.append(f"    sharing: {{strategy: LendAndBorrow}}  # borrow limit: HyperPod's default, "
                       f"{DEFAULT_BORROW_LIMIT_PERCENT}%{guess.replace('  #', ';')}")
        elif 1 <= limit <= 500:
            out.append(f"    sharing: {{strategy: LendAndBorrow, borrowLimitPercent: {limit}}}{guess}")
        else:
            kept = min(max(limit, 1), 500)
            out.append(f"    sharing: {{strategy: LendAndBorrow, borrowLimitPercent: {kept}}}  # guessed: the "
                       f"cluster's {limit}% is outside the spec's 1..500")
    else:
        out.append(f"    sharing: {{strategy: {strategy}}}{guess}")
    limits = [_allocation(r)[0] for r in sharing.get("AbsoluteBorrowLimits") or []]
    if limits and strategy == "LendAndBorrow":
        out[-1] = out[-1].replace("sharing: {strategy: LendAndBorrow", "sharing: {strategy: LendAndBorrow, "
                                  f"absoluteBorrowLimits: [{', '.join(x for x in limits if x)}]", 1)
        if None in limits:
            out.append("    # some AbsoluteBorrowLimits hold no amount the spec writes; drift will report them")
    elif limits:
        out.append(f"    # the quota sets AbsoluteBorrowLimits under {strategy}, where they mean nothing; drift will "
                   "report them")
    preempt = values.get("preemptTeamTasks")
    if preempt is None:
        out.append("    preemptTeamTasks: LowerPriority  # guessed: the quota does not set PreemptTeamTasks")
    else:
        out.append(f"    preemptTeamTasks: {preempt}")
    out += _other_values(values, _TEAM_WRITTEN, "    ")
    ns = f"hyperpod-ns-{team}"
    out += [
        f"    # access: IAM roles mapped onto the groups {ns}-viewers and {ns}-submitters (not held by the quota)",
        "    # access:",
        f'    #   viewers: ["arn:{cluster.partition}:iam::{cluster.account}:role/ROLE"]',
        f'    #   submitters: ["arn:{cluster.partition}:iam::{cluster.account}:role/ROLE"]',
        "    # workloadIdentities: service accounts given AWS roles through EKS Pod Identity",
        "    # workloadIdentities:",
        "    #   - serviceAccount: trainer",
        "    # contract: who answers for the team's use of the cluster (recommended)",
        "    # contract:",
        "    #   businessOwner: owner@example.com",
        "    #   operationsOwner: ops@example.com",
        "    #   costOwner: finance@example.com",
        "    #   dataClassification: internal",
        "    #   approvedWorkloads: [training]",
        "    #   reviewBy: 2027-06-30",
        "    #   isolation: shared  # shared (default) | dedicated-nodes | dedicated-cluster",
        "    #   networkPath: console-only  # a cluster.apiAccess entry (CIDR, sg-..., pl-...) or console-only",
    ]
    return out


def spec_from_live(cluster: LiveCluster, governance: LiveGovernance,
                   eks_cluster: Optional[dict[str, Any]] = None, network: Optional[LiveNetwork] = None) -> ImportResult:
    """The spec of a live cluster as commented YAML, and what ``load_spec`` would find wrong with it.

    With ``network`` the spec governs the cluster as it is (``cluster.existing``); without, it describes a
    cluster hyperpod-gov would create like it.
    """
    policy = governance.policies[0] if governance.policies else None
    name, why = _spec_name(cluster, policy)
    lines = [
        f"# Imported by `hyperpod-gov import` from HyperPod cluster {cluster.name}",
        f"# ({cluster.arn}).",
        "# Values marked 'guessed' are not held by the AWS APIs: check them. Fill in the commented",
        "# placeholders (access, workload identities, contracts), then `hyperpod-gov validate` and",
        "# `hyperpod-gov drift` this file before the first deploy.",
        f"name: {_s(name)}  # {why}",
        "accounts:",
        f"  capacity: {{id: {json.dumps(cluster.account)}, region: {_s(cluster.region)}}}",
        "  # consumers: accounts whose roles workloads assume cross-account (not held by the cluster)",
        f'  # consumers:\n  #   - {{name: data, id: "222222222222", region: {_s(cluster.region)}}}',
    ]
    lines += _cluster_lines(cluster, eks_cluster, _partitioned_types(governance), network)
    lines += _scheduler_lines(governance.policies)
    seen: set[str] = set()
    team_lines: list[str] = []
    for quota in governance.quotas:
        team = quota["ComputeQuotaTarget"]["TeamName"]
        if team in seen:
            team_lines.append(f"  # skipped compute quota {quota['Name']}: a second quota of team {team}")
            continue
        seen.add(team)
        team_lines += _team_lines(quota, cluster)
    lines += (["teams:"] + team_lines) if seen else ["teams: []  # the cluster has no compute quota"]
    text = "\n".join(lines) + "\n"
    return ImportResult(text, _issues(text))


def _issues(text: str) -> tuple[SpecIssue, ...]:
    try:
        parse_spec(yaml.safe_load(text), source="(imported spec)")
    except SpecError as exc:
        return exc.issues
    return ()
