"""The per-team Kubernetes objects as a table: each object a team gets, the member the spec governs, and where.

The chart modules emit the objects; this table says which objects a team has, which member of each carries a
spec decision (with its spec path and the plan attributes it reads), and the planned value of that member. A
test renders both examples and checks that the team manifests hold exactly these objects with these values, so
an object cannot be emitted without a row; ``plan/views.py`` shows each spec path in ``diff`` and ``explain``.
Objects whose body is the platform's own (the default-deny policy, say) have no governed member; drift still
compares their whole body (``live/k8s_compare.py``). An object with several governed members has one row whose
``also`` lists the others (a namespace's labels beside its contract annotations); two rows naming the same object
are refused, so a second member can never silently replace the first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..plan import Plan, TeamPlan, names
from ._objects import MANAGED_BY
from .admission import (QUEUE_POLICY, TEAM_LIMITS_POLICY, binding_name, namespace_labels, pod_security_policy_name,
                        team_params)
from .network_policy import team_egress_rules
from .rbac import submitter_rules, viewer_rules
from .storage import persistent_volume, persistent_volume_claim
from .tenant import DEFAULT_REQUESTS, LIMIT_RANGE, contract_annotations

__all__ = ["Governed", "ObjectRow", "TEAM_OBJECTS", "planned_objects"]


@dataclass(frozen=True)
class Governed:
    """One member of a team object that carries a spec decision."""

    member: str  # dotted member path (``metadata.labels``, ``spec.egress``)
    label: str  # what it is, in words (the drift report's label)
    spec: str  # the spec path(s) that decide it, ``|``-separated
    get: Callable[[Plan, TeamPlan], Any]  # its planned value (None: the member is not planned)
    plan_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class ObjectRow:
    kind: str
    names: Callable[[TeamPlan], tuple[str, ...]]  # the objects of this row a team gets (usually one)
    label: str
    spec: str  # the spec path of the governed member ("" for the platform's own objects)
    member: Optional[str] = None  # dotted member the spec governs (None: the body is the platform's)
    get: Optional[Callable[[Plan, TeamPlan], Any]] = None  # its planned value
    plan_fields: tuple[str, ...] = ()
    when: Callable[[Plan, TeamPlan], bool] = lambda plan, team: True
    also: tuple[Governed, ...] = ()  # further governed members of the same object

    def governed(self) -> tuple[Governed, ...]:
        """Every governed member of the row's objects: its own ``member`` first, then ``also``."""
        own = (Governed(self.member, self.label, self.spec, self.get, self.plan_fields),) \
            if self.member and self.get else ()
        return own + self.also

    def planned(self, plan: Plan, team: TeamPlan) -> dict[str, tuple[Governed, Any]]:
        """member path -> (governed member, planned value), for the members with a planned value."""
        out: dict[str, tuple[Governed, Any]] = {}
        for g in self.governed():
            value = g.get(plan, team)
            if value is not None:
                out[g.member] = (g, value)
        return out


def _one(attr: str) -> Callable[[TeamPlan], tuple[str, ...]]:
    return lambda team: (getattr(team, attr),)


def _fixed(name: str) -> Callable[[TeamPlan], tuple[str, ...]]:
    return lambda team: (name,)


def _kueue(plan: Plan, team: TeamPlan) -> bool:
    return plan.emits_kueue_objects


def _volume(plan: Plan, team: TeamPlan) -> Any:
    volume = team.volume
    if volume is None:
        raise ValueError(f"team {team.name} has no shared volume")
    return volume


def _group_subjects(*groups: str) -> list[dict[str, str]]:
    return [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": g} for g in groups]


TEAM_OBJECTS: tuple[ObjectRow, ...] = (
    ObjectRow("Namespace", _one("namespace"), "namespace owners", "teams[].contract", "metadata.annotations",
              lambda plan, t: contract_annotations(t) or None, ("contract", "namespace"),
              when=lambda plan, t: plan.owns_namespaces,
              # The labels tenancy rests on: the team label (drift's ownership, the queue rule's namespace) and
              # Pod Security Admission's audit level.
              also=(Governed("metadata.labels", "namespace labels (team, pod security audit)",
                             "teams[].name|teams[].podSecurity|cluster.kubernetesVersion",
                             lambda plan, t: {**MANAGED_BY, names.TEAM_LABEL: t.name,
                                              **namespace_labels(t, plan.cluster.kubernetes_version)},
                             ("name", "pod_security")),)),
    ObjectRow("ClusterQueue", _one("cluster_queue"), "the team's queue", "teams[].quota", "spec",
              lambda plan, t: plan.cluster_queue_spec(t), ("cluster_queue", "flavors", "strategy", "active"),
              when=_kueue),
    ObjectRow("ClusterRole", _one("queue_reader"), "reading its own ClusterQueue", "teams[].name",
              plan_fields=("queue_reader",)),
    ObjectRow("ClusterRoleBinding", _one("queue_reader"), "who reads the team's ClusterQueue",
              "teams[].access.viewers|teams[].access.submitters", "subjects",
              lambda plan, t: _group_subjects(t.viewers_group, t.submitters_group),
              ("viewers_group", "submitters_group")),
    ObjectRow("ValidatingAdmissionPolicyBinding",
              lambda t: (binding_name(pod_security_policy_name(t.pod_security), t),), "pod security",
              "teams[].podSecurity", "spec.policyName", lambda plan, t: pod_security_policy_name(t.pod_security),
              ("pod_security",)),
    ObjectRow("ValidatingAdmissionPolicyBinding", lambda t: (binding_name(QUEUE_POLICY, t),), "the queue rule",
              "teams[].name"),
    # Per-team workload limits: the team-limits policy's binding, its parameters, the default requests.
    ObjectRow("ValidatingAdmissionPolicyBinding", lambda t: (binding_name(TEAM_LIMITS_POLICY, t),),
              "the team's workload limits", "teams[].name"),
    ObjectRow("ConfigMap", _one("name"), "the team's allowed priority classes, images and model sources",
              "teams[].priorityClasses|teams[].requirePriority|teams[].images|"
              "teams[].workloadIdentities[].grants.s3|cluster.sharedStorage", "data",
              lambda plan, t: team_params(t, t.kueue_priority_classes,
                                          plan.shared_storage.file_system if plan.shared_storage else None),
              ("priority_classes", "require_priority", "image_prefixes", "identities", "volume")),
    ObjectRow("LimitRange", _fixed(LIMIT_RANGE), "default requests", "", "spec",
              lambda plan, t: {"limits": [{"type": "Container", "defaultRequest": dict(DEFAULT_REQUESTS)}]}),
    ObjectRow("NetworkPolicy", _fixed("default-deny"), "default deny", ""),
    ObjectRow("NetworkPolicy", _fixed("allow-dns"), "DNS", ""),
    ObjectRow("NetworkPolicy", _fixed("allow-same-namespace"), "traffic inside the namespace", ""),
    ObjectRow("NetworkPolicy", _fixed("allow-pod-identity-agent"), "the Pod Identity agent", ""),
    ObjectRow("NetworkPolicy", _fixed("allow-vpc-https"), "HTTPS to the VPC", "cluster.vpc",
              "spec.egress", lambda plan, t: [{"to": [{"ipBlock": {"cidr": plan.network.cidr}}],
                                               "ports": [{"protocol": "TCP", "port": 443}]}]),
    ObjectRow("NetworkPolicy", _fixed("allow-team-egress"), "the team's egress", "teams[].egress", "spec.egress",
              lambda plan, t: team_egress_rules(t), ("egress",), when=lambda plan, t: bool(t.egress)),
    ObjectRow("Role", _fixed("viewer"), "what viewers may read", "", "rules", lambda plan, t: viewer_rules(t)),
    ObjectRow("Role", _fixed("submitter"), "what submitters may do",
              "teams[].access.podExec|teams[].access.writeSecrets|teams[].access.writeConfigMaps", "rules",
              lambda plan, t: submitter_rules(t), ("pod_exec", "write_secrets", "write_config_maps")),
    ObjectRow("RoleBinding", _fixed("viewers"), "who views", "teams[].access.viewers|teams[].access.submitters",
              "subjects", lambda plan, t: _group_subjects(t.viewers_group, t.submitters_group)),
    ObjectRow("RoleBinding", _fixed("submitters"), "who submits", "teams[].access.submitters", "subjects",
              lambda plan, t: _group_subjects(t.submitters_group)),
    ObjectRow("ServiceAccount", lambda t: t.service_accounts, "workload identities",
              "teams[].workloadIdentities[]", plan_fields=("service_accounts",)),
    # HyperPod CLI/console access (charts/cluster_rbac.py): the team's binding onto the members' cluster reads
    ObjectRow("ClusterRoleBinding", lambda t: (names.member_reads_binding(t.name),), "the team's cluster reads",
              "cluster.memberClusterReads|teams[].access.viewers|teams[].access.submitters", "subjects",
              lambda plan, t: _group_subjects(t.viewers_group, t.submitters_group),
              ("viewers_group", "submitters_group"), when=lambda plan, t: plan.cluster.member_cluster_reads),
    ObjectRow("LocalQueue", _one("local_queue"), "the team's local queue", "teams[].name", "spec.clusterQueue",
              lambda plan, t: t.cluster_queue, ("local_queue",), when=_kueue),
    # Shared storage (cluster.sharedStorage): the team's directory of the file system and its claim.
    ObjectRow("PersistentVolume", lambda t: (names.team_volume(t.name),), "the team's shared directory",
              "cluster.sharedStorage", "spec.csi.volumeAttributes",
              lambda plan, t: persistent_volume(plan, _volume(plan, t))["csi"]["volumeAttributes"],
              when=lambda plan, t: plan.shared_storage is not None),
    ObjectRow("PersistentVolumeClaim", lambda t: (names.SHARED_FSX_CLAIM,), "the team's claim of it",
              "cluster.sharedStorage", "spec.volumeName", lambda plan, t: persistent_volume_claim(_volume(plan, t))[
                  "volumeName"], when=lambda plan, t: plan.shared_storage is not None),
)


def planned_objects(plan: Plan, team: TeamPlan, rows: tuple[ObjectRow, ...] = TEAM_OBJECTS
                    ) -> dict[tuple[str, str], tuple[ObjectRow, Any]]:
    """(kind, name) -> (row, planned value of the row's own ``member``) for every object of the team.

    ``row.planned(plan, team)`` gives every governed member's value (``also`` included). Raises ``ValueError``
    when two rows name the same object: its members belong in one row (``also``), not in a second row that
    would hide the first.
    """
    out: dict[tuple[str, str], tuple[ObjectRow, Any]] = {}
    for row in rows:
        if not row.when(plan, team):
            continue
        for name in row.names(team):
            if (row.kind, name) in out:
                raise ValueError(f"{row.kind} {name} of team {team.name} has two rows in TEAM_OBJECTS "
                                 f"({out[(row.kind, name)][0].label!r} and {row.label!r}); give the first row "
                                 "the second's member in also=")
            out[(row.kind, name)] = (row, row.get(plan, team) if row.get else None)
    return out

