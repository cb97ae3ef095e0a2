"""Compare the live state with what the plan expects; render the differences for a reviewer or a machine."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field as dc_field
from typing import Any, Iterable, Literal, Optional

from ..plan import names
from ..plan.fields import Table, compare as compare_fields
from ..plan.tables import ACCESS_ENTRY, ADDON, CLUSTER, CLUSTER_POLICY, COMPUTE_QUOTA, INSTANCE_GROUP, POD_IDENTITY
from .expected import KNOWN_ADDONS, Expected, ExpectedQuota
from .read import LiveCluster, LiveEks, LiveGovernance

Change = Literal["missing", "unexpected", "changed"]
KIND_ORDER = ("Cluster", "InstanceGroup", "ClusterSchedulerConfig", "ComputeQuota", "AccessEntry",
              "PodIdentityAssociation", "Addon",
              # a Slurm cluster's accounting (live/slurm.py, from a sacctmgr dump)
              "SlurmQos", "SlurmAccount", "SlurmUser",
              # the Kubernetes side (live/k8s.py): cluster-wide objects, then each team's, in apply order
              "Namespace", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "Topology", "ResourceFlavor",
              "WorkloadPriorityClass", "MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck", "ClusterQueue",
              "ClusterRole", "ClusterRoleBinding", "NetworkPolicy", "Role", "RoleBinding", "ServiceAccount",
              "LocalQueue", "ConfigMap", "LimitRange", "PersistentVolume", "PersistentVolumeClaim", "HyperpodNodeClass",
              "NodePool")
_UNSET: Any = object()


@dataclass(frozen=True)
class DriftItem:
    """One difference. ``team`` only groups the text output (None: cluster-wide); it is not in the JSON."""

    kind: str
    name: str
    change: Change
    field: Optional[str] = None
    expected: Any = None
    actual: Any = None
    team: Optional[str] = None
    label: Optional[str] = dc_field(default=None, compare=False)  # the table row's words, for the text output
    unit: str = dc_field(default="", compare=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "name": self.name, "change": self.change}
        if self.change == "changed":
            out.update(field=self.field, expected=self.expected, actual=self.actual)
        return out

    def sort_key(self) -> tuple:
        return (self.team is not None, self.team or "", KIND_ORDER.index(self.kind), self.name, self.field or "")


def compare(expected: Expected, cluster: LiveCluster, governance: LiveGovernance, live_eks: LiveEks) -> tuple[DriftItem, ...]:
    """Every difference between the plan's expected state and the live one, sorted by team, kind and name."""
    items: list[DriftItem] = []
    items += _cluster(expected, cluster)
    items += _instance_groups(expected, cluster)
    items += _policy(expected, governance)
    items += _quotas(expected, governance)
    items += _access_entries(expected, live_eks)
    items += _pod_identities(expected, live_eks, cluster.partition)
    items += _addons(expected, live_eks)
    return tuple(sorted(items, key=DriftItem.sort_key))


# --- SageMaker --------------------------------------------------------------------------------


def _cluster(expected: Expected, cluster: LiveCluster) -> list[DriftItem]:
    return _changes("Cluster", cluster.name, CLUSTER, expected.cluster_part, cluster.raw,
                    context={"partition": cluster.partition})


def _changes(kind: str, name: str, table: Table, part: Any, live: dict[str, Any], *, team: Optional[str] = None,
             context: Optional[dict[str, Any]] = None) -> list[DriftItem]:
    """The table's differences between the planned object and the live one, as drift items."""
    return [DriftItem(kind, name, "changed", d.field, d.expected, d.actual, team=team, label=d.row.label,
                      unit=d.row.unit)
            for d in compare_fields(table, part, live, context)]


def _instance_groups(expected: Expected, cluster: LiveCluster) -> list[DriftItem]:
    items = []
    live = {g["InstanceGroupName"]: g for g in cluster.instance_groups}
    planned = {g.name: g for g in expected.instance_groups}
    for name in sorted(set(live) | set(planned)):
        e, a = planned.get(name), live.get(name)
        if a is None:
            items.append(DriftItem("InstanceGroup", name, "missing"))
        elif e is None:
            items.append(DriftItem("InstanceGroup", name, "unexpected"))
        else:
            items += _changes("InstanceGroup", name, INSTANCE_GROUP, e.part, a)
    return items


def _policy(expected: Expected, governance: LiveGovernance) -> list[DriftItem]:
    policy = expected.policy
    live = list(governance.policies)
    if policy is None:  # kueue mode: a cluster policy would fight the Kueue objects
        return [DriftItem("ClusterSchedulerConfig", p["Name"], "unexpected") for p in live]
    if not live:
        return [DriftItem("ClusterSchedulerConfig", policy.name, "missing")]
    # HyperPod holds one policy per cluster; prefer the planned name if several are listed.
    chosen = next((p for p in live if p["Name"] == policy.name), live[0])
    items = [DriftItem("ClusterSchedulerConfig", p["Name"], "unexpected") for p in live if p is not chosen]
    return items + _changes("ClusterSchedulerConfig", chosen["Name"], CLUSTER_POLICY, policy.part, chosen)


def _quota(e: ExpectedQuota, live: dict[str, Any]) -> list[DriftItem]:
    return _changes("ComputeQuota", e.team, COMPUTE_QUOTA, e.part, live, team=e.team)


def _quotas(expected: Expected, governance: LiveGovernance) -> list[DriftItem]:
    items: list[DriftItem] = []
    live: dict[str, list[dict[str, Any]]] = {}
    for q in governance.quotas:
        live.setdefault(q["ComputeQuotaTarget"]["TeamName"], []).append(q)
    planned = {q.team: q for q in expected.quotas}
    for team in sorted(set(live) | set(planned)):
        e, found = planned.get(team), live.get(team, [])
        if not found:
            items.append(DriftItem("ComputeQuota", team, "missing", team=team))
            continue
        if e is None:
            items += [DriftItem("ComputeQuota", team, "unexpected", team=team) for _ in found]
            continue
        chosen = next((q for q in found if q["Name"] == e.name), found[0])
        items += [DriftItem("ComputeQuota", team, "unexpected", team=team) for q in found if q is not chosen]
        items += _quota(e, chosen)
    return items


# --- EKS --------------------------------------------------------------------------------------


def _team_of_group(group: str) -> Optional[str]:
    if not group.startswith(names.NAMESPACE_PREFIX):
        return None
    team = group[len(names.NAMESPACE_PREFIX):]
    for suffix in ("-viewers", "-submitters"):
        if team.endswith(suffix):
            return team[: -len(suffix)]
    return team


def _access_entries(expected: Expected, live_eks: LiveEks) -> list[DriftItem]:
    items = []
    live = {e["principalArn"]: e for e in live_eks.access_entries if "principalArn" in e}
    planned = {e.principal_arn: e for e in expected.access_entries}
    for arn in sorted(set(live) | set(planned)):
        e, a = planned.get(arn), live.get(arn)
        if a is None:
            assert e is not None
            items.append(DriftItem("AccessEntry", arn, "missing", team=", ".join(e.teams) or None))
            continue
        groups = tuple(sorted(a.get("kubernetesGroups", [])))
        if e is None:
            # Only entries that map onto team groups are governed; node roles and others are not.
            teams = sorted({t for t in map(_team_of_group, groups) if t})
            if teams:
                items.append(DriftItem("AccessEntry", arn, "unexpected", team=", ".join(teams)))
            continue
        if e.groups is None:  # a cluster admin: presence only
            continue
        items += _changes("AccessEntry", arn, ACCESS_ENTRY, e.part, a, team=", ".join(e.teams) or None)
    return items


def _pod_identities(expected: Expected, live_eks: LiveEks, partition: str) -> list[DriftItem]:
    items = []
    live = {(a.get("namespace", ""), a.get("serviceAccount", "")): a for a in live_eks.pod_identities}
    planned = {(i.namespace, i.service_account): i for i in expected.pod_identities}
    for key in sorted(set(live) | set(planned)):
        e, a = planned.get(key), live.get(key)
        name = f"{key[0]}/{key[1]}"
        team = e.team if e else expected.team_of_namespace(key[0])
        if a is None:
            items.append(DriftItem("PodIdentityAssociation", name, "missing", team=team))
        elif e is None:
            items.append(DriftItem("PodIdentityAssociation", name, "unexpected", team=team))
        else:
            items += _changes("PodIdentityAssociation", name, POD_IDENTITY, e.part, a, team=team,
                              context={"partition": partition})
    return items


def _addons(expected: Expected, live_eks: LiveEks) -> list[DriftItem]:
    items = []
    described = {a["addonName"]: a for a in live_eks.addons if "addonName" in a}
    planned = {a.name: a for a in expected.addons}
    present = set(live_eks.addon_names)
    for name in sorted(set(planned) | (present & set(KNOWN_ADDONS))):
        e = planned.get(name)
        if name not in present:
            items.append(DriftItem("Addon", name, "missing"))
        elif e is None:
            items.append(DriftItem("Addon", name, "unexpected"))
        else:
            items += _changes("Addon", name, ADDON, e.part, described.get(name, {}))
    return items


# --- output -----------------------------------------------------------------------------------


def to_json(items: Iterable[DriftItem], kubernetes: Optional[dict[str, Any]] = None,
            slurm: Optional[dict[str, Any]] = None) -> str:
    """``{"drift": [...]}``; with ``kubernetes``, also whether the Kubernetes side was checked (and how or why not);
    with ``slurm``, whether a Slurm cluster's accounting was (and the commands that would restore it)."""
    out: dict[str, Any] = {"drift": [i.to_json() for i in items]}
    if kubernetes is not None:
        out["kubernetes"] = kubernetes
    if slurm is not None:
        out["slurm"] = slurm
    return json.dumps(out, indent=2, sort_keys=False) + "\n"


_RESOURCE = {
    "Cluster": "HyperPod cluster",
    "InstanceGroup": "instance group",
    "ClusterSchedulerConfig": "cluster policy",
    "ComputeQuota": "compute quota",
    "AccessEntry": "access entry",
    "PodIdentityAssociation": "Pod Identity association",
    "Addon": "add-on",
    "SlurmQos": "Slurm QOS",
    "SlurmAccount": "Slurm account",
    "SlurmUser": "Slurm user association",
    **{kind: kind for kind in KIND_ORDER[KIND_ORDER.index("Namespace"):]},  # Kubernetes kinds by their own names
}


def _show(value: Any) -> str:
    if value is None:
        return "not set"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(str, value)) + "]" if value else "none"
    if isinstance(value, dict):
        return _amount_words(value) or json.dumps(value, sort_keys=True)
    return str(value)


def _amount_words(amounts: dict[str, Any]) -> str:
    words = {"Count": "instances", "Accelerators": "accelerators", "VCpu": "vCPU", "MemoryInGiB": "GiB of memory"}
    if not set(amounts) <= set(words):
        return ""
    return " and ".join(f"{amounts[k]} {words[k]}" for k in words if k in amounts)


def _sentence(item: DriftItem) -> str:
    """One change in words: what the cluster has, then what the spec says."""
    f, e, a = item.field or "", item.expected, item.actual
    resource = re.search(r"ComputeQuotaResources\[([^\]]+)\](?:\.(\w+))?$", f)
    priority = re.search(r"PriorityClasses\[([^\]]+)\](?:\.Weight)?$", f)
    if resource:
        itype, member = resource.groups()
        if member in ("Count", "Accelerators"):
            unit = "instances" if member == "Count" else "accelerators"
            return f"quota on {itype} is {_show(a)} {unit} on the cluster, the spec says {_show(e)}"
        if member:
            return f"quota on {itype} has {member} {_show(a)} on the cluster, the spec says {_show(e)}"
        if a is None:
            return f"quota on {itype} is not on the cluster, the spec gives {_show(e)}"
        if e is None:
            return f"quota on {itype} is {_show(a)} on the cluster, the spec gives the team none"
        return f"quota on {itype} is {_show(a)} on the cluster, the spec says {_show(e)}"
    if priority:
        pc = priority.group(1)
        if f.endswith(".Weight"):
            return f"priority class {pc} has weight {a} on the cluster, the spec says {e}"
        if a is None:
            return f"priority class {pc} is not on the cluster, the spec defines it with weight {e['Weight']}"
        return f"priority class {pc} (weight {a['Weight']}) is on the cluster, the spec does not define it"
    if f == "Orchestrator.Eks.ClusterArn":
        return f"is orchestrated by EKS cluster {_show(a)}, the spec derives {_show(e)}"
    label, unit = item.label or f, item.unit
    verb = "are" if isinstance(e if e is not None else a, (list, tuple)) else "is"
    return f"{label} {verb} {_show(a)}{unit} on the cluster, the spec says {_show(e)}{unit}"


_KUBERNETES_KINDS = frozenset(KIND_ORDER[KIND_ORDER.index("Namespace"):])


def _line(item: DriftItem) -> str:
    what = _RESOURCE[item.kind]
    label = what if item.kind == "ComputeQuota" else f"{what} {item.name}"
    if item.change == "missing":
        return f"{label}: planned by the spec, not on the cluster"
    if item.change == "unexpected":
        return f"{label}: on the cluster, not in the spec (made by hand or in the console?)"
    if item.kind in _KUBERNETES_KINDS:
        # a governed member (charts/fields.py's TEAM_OBJECTS) also shows its row's words and spec path
        member = item.field if item.label in (None, item.field) else f"{item.field} ({item.label})"
        return (f"{label}: {member} is {json.dumps(item.actual, sort_keys=True)} on the cluster, the spec plans "
                f"{json.dumps(item.expected, sort_keys=True)}")
    return f"{label}: {_sentence(item)}"


def to_text(items: Iterable[DriftItem], *, cluster_name: str, region: str) -> str:
    items = list(items)
    if not items:
        return f"No drift: HyperPod cluster {cluster_name} ({region}) matches the spec.\n"
    count = len(items)
    lines = [f"Drift on HyperPod cluster {cluster_name} ({region}): {count} difference{'s' if count != 1 else ''}"]
    group: object = _UNSET
    for item in items:  # already sorted: cluster-wide first, then team by team
        if item.team != group:
            group = item.team
            lines.append("cluster-wide" if item.team is None else f"team {item.team}")
        lines.append(f"  {_line(item)}")
    return "\n".join(lines) + "\n"
