"""The governance view of a plan: every decision a reviewer cares about, declared once as rows.

``diff`` (governance changes in words, privilege changes marked) and ``explain`` (the team table) are each one
generic function over these views; ``tables.py`` holds the API objects the emitters, ``drift`` and ``import``
use. A test checks that every spec path a table row reads has a row here, and that every attribute of the plan
parts is read by a row of a view or a table (or is named in ``NOT_GOVERNED`` with the reason), so a new key
cannot reach an emitter and skip ``diff``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from .data import TeamStoragePlan
from ..spec.cluster import DEDICATED_KEY
from . import names
from .identity import IdentityPlan
from .quotas import TeamPlan
from .tools_policy import ToolsPolicyPlan
from .words import PAUSE_EFFECT, borrows, lends, owns
from .workloads import kinds_for

if TYPE_CHECKING:
    from .plan import Plan

__all__ = ["Row", "View", "TeamPart", "VIEWS", "TEAM", "SLURM", "SLURM_GROUPS", "SLURM_TEAMS", "team_columns", "NOT_GOVERNED"]


@dataclass(frozen=True)
class Row:
    """One governed decision. ``get`` gives a value in words, or a tuple of member strings (``members``)."""

    label: str
    spec: str  # the spec path it comes from ("teams[].quota"; alternatives separated by "|")
    get: Callable[[Any], Any]
    plan_fields: tuple[str, ...] = ()  # the plan part's attributes it reads (the completeness test)
    members: bool = False  # a set: diff lists what was added and removed
    # Why a change widens privilege (None: it does not). Members rows: called with each added member.
    privilege: Optional[Callable[[Any, Any], Optional[str]]] = None
    column: Optional[str] = None  # explain's column header, for the team table
    lines: Optional[Callable[[str, Any, Any], list[str]]] = None  # own wording of a change (title, old, new)


@dataclass(frozen=True)
class View:
    """A kind of governed thing: how to find each one in a plan, how to name it, and its rows."""

    name: str
    spec: str  # where one comes from ("teams[]")
    objects: Callable[["Plan"], Mapping[str, Any]]  # key -> part, in output order
    title: Callable[[str], str]
    rows: tuple[Row, ...]
    added: Optional[Callable[[str, Any], str]] = None  # the line for a new one (None: "<title> added")
    removed: Optional[Callable[[str, Any], str]] = None


@dataclass(frozen=True)
class TeamPart:
    """A team with its workload identities (which the plan holds apart, per service account)."""

    team: TeamPlan
    identities: tuple[IdentityPlan, ...] = ()
    storage: Optional[TeamStoragePlan] = None  # per-team data: the team bucket, if any
    tools_policy: Optional[ToolsPolicyPlan] = None  # teams[].access.toolsPolicy (None: off, or nobody to give it)


def _widens(why: str) -> Callable[[Any, Any], Optional[str]]:
    return lambda old, new: why


def _when(test: Callable[[Any, Any], bool], why: str) -> Callable[[Any, Any], Optional[str]]:
    return lambda old, new: why if test(old, new) else None


def _on_off(value: bool) -> str:
    return "on" if value else "off"


def _allowed(value: bool) -> str:
    return "allowed" if value else "not allowed"


# --- the cluster -----------------------------------------------------------------------------------------------


def _chart(plan: "Plan") -> str:
    c = plan.cluster.dependencies_chart
    if c is None:
        return "not installed"
    if c.source == "directory":
        return f"directory {c.directory}"
    return f"{c.source} {c.repository} chart {c.chart} version {c.version or 'latest'}"


def _addons(plan: "Plan") -> tuple[str, ...]:
    return tuple(f"{name} {version or '(EKS default)'}" for name, version in plan.addon_versions.items())


def _operators(plan: "Plan") -> tuple[str, ...]:
    """Each operator with the add-ons it installs (prerequisites included), or the existing cluster's own."""
    if not plan.cluster.operators:
        return ("none installed by hyperpod-gov",)
    return tuple(plan.cluster.operators) + tuple(f"add-on {a.name} {a.version or '(EKS default)'}"
                                                 for a in plan.operator_addons)


def _pool(plan: "Plan") -> str:
    pool = plan.shared_pool
    if pool is None:
        return "none"
    return f"{pool.name}: owns {owns(pool)}; {pool.strategy}; weight {pool.fair_share_weight}"


def _vpc(plan: "Plan") -> str:
    n = plan.network
    if plan.cluster.existing is not None:
        return f"{plan.cluster.existing.vpc_id} ({n.cidr}), not created"
    if n.existing is not None:
        e = n.existing
        where = (f"existing {e.vpc_id} ({n.cidr}) in {', '.join(e.private_subnet_ids)}" if e.vpc_id is not None
                 else f"the CDK app's VPC ({n.cidr}, vpc= of HyperPodGovernance), its private subnets")
        return (f"{where}; endpoints: "
                f"{'created' if e.create_endpoints else 'the VPC own'}; flow logs: "
                f"{'created' if e.create_flow_logs else 'the VPC own'}")
    return f"{n.cidr} over {', '.join(n.availability_zones)}"


def _existing(plan: "Plan") -> str:
    e = plan.cluster.existing
    if e is None:
        return "none (hyperpod-gov creates the cluster)"
    return f"{e.hyperpod_arn} (EKS {plan.cluster.eks_name})"


def _kubectl_network(plan: "Plan") -> str:
    e = plan.cluster.existing
    if e is None:
        return "the created VPC's private subnets"
    return f"{', '.join(e.subnet_ids)} with {e.security_group_id}"


def _installs(plan: "Plan") -> tuple[str, ...]:
    e = plan.cluster.existing
    if e is None:
        return ("everything (new cluster)",)
    out = [f"scheduler ({'task-governance add-on' if plan.task_governance else 'Kueue chart'})"
           if e.installs_scheduler else "", "CloudWatch Observability add-on" if e.installs_observability else ""]
    if e.self_managed_kueue:
        out.append("(self-managed Kueue present)")
    return tuple(sorted(x for x in out if x))


def _endpoint_organization(plan: "Plan") -> str:
    p = plan.network.perimeter
    return (p.organization_id if p is not None else None) or "none"
def shared_file_system(plan: "Plan") -> str:
    """cluster.sharedStorage in words (the cluster view and ``explain``)."""
    storage = plan.shared_storage
    if storage is None:
        return "none"
    fs = storage.file_system
    where = (f"FSx for Lustre created: {fs.storage_capacity_gib} GiB {fs.deployment_type} at "
             f"{fs.per_unit_storage_throughput} MB/s/TiB, own KMS key, nodes only; aws-fsx-csi-driver "
             f"{fs.csi_driver_version}" if fs.created else
             f"FSx for Lustre {fs.file_system_id} ({fs.dns_name}@tcp:/{fs.mount_name}), existing")
    return f"{where}; each team's claim {names.SHARED_FSX_CLAIM} mounts /<team> only"


def dedicated_groups(plan: "Plan") -> tuple[str, ...]:
    """Which groups are whose (instanceGroups[].dedicatedTo), one line per team and type."""
    return tuple(f"{d.instance_type} x {d.instances} ({', '.join(d.groups)}) to {d.team}"
                 + (f", Kueue flavor {d.flavor}" if plan.emits_kueue_objects else "") for d in plan.dedicated)


def _public(old: str, new: str) -> bool:
    return old == "private" and new != "private"


CLUSTER = View(
    name="cluster",
    spec="",
    objects=lambda plan: {"": plan},
    title=lambda key: "",
    rows=(
        Row("HyperPod cluster", "cluster.name", lambda p: p.cluster.name, ("name",)),
        Row("existing cluster", "cluster.existing.hyperPodClusterArn|cluster.existing.eksClusterName", _existing,
            ("existing", "eks_name"),
            privilege=_when(lambda o, n: o != n, "governance (policy, quotas, cluster-admin kubectl handler) now "
                            "applies to another cluster")),
        Row("kubectl handler network", "cluster.existing.subnetIds|cluster.existing.securityGroupId",
            _kubectl_network, ("existing",)),
        Row("installs on the existing cluster", "cluster.existing.installs|cluster.existing.selfManagedKueue",
            _installs, ("existing",), members=True),
        Row("scheduler mode", "scheduler.mode", lambda p: p.mode, ("mode", "task_governance_backend")),
        Row("idle compute", "scheduler.idleCompute", lambda p: p.idle_compute, ("idle_compute", "fair_sharing")),
        Row("idle resource sharing", "scheduler.idleResourceSharing", lambda p: _on_off(p.idle_resource_sharing),
            ("idle_resource_sharing",)),
        Row("task-governance resources", "scheduler.taskGovernanceResources",
            lambda p: p.task_governance_backend or "none (kueue mode)", ("task_governance_backend",)),
        Row("Kubernetes version", "cluster.kubernetesVersion", lambda p: p.cluster.kubernetes_version,
            ("kubernetes_version",)),
        Row("authentication mode", "cluster.authenticationMode", lambda p: p.cluster.authentication_mode,
            ("authentication_mode",),
            privilege=_when(lambda o, n: n != o and "CONFIG_MAP" in n,
                            "the aws-auth ConfigMap can now grant cluster access outside the spec")),
        Row("API endpoint", "cluster.endpointAccess", lambda p: p.cluster.endpoint_access, ("endpoint_access",),
            privilege=_when(_public, "the Kubernetes API is reachable from the internet (adminCidrs)")),
        Row("admin CIDRs", "cluster.adminCidrs", lambda p: p.cluster.admin_cidrs, ("admin_cidrs",), members=True,
            privilege=_widens("one more network reaches the Kubernetes API")),
        # --- reaching the cluster: cluster.apiAccess ---
        Row("API access (private endpoint, 443)", "cluster.apiAccess",
            lambda p: tuple(s.words for s in p.cluster.api_access), ("api_access",), members=True,
            privilege=_widens("one more network reaches the Kubernetes API")),
        Row("cluster admins", "cluster.admins", lambda p: tuple(a.principal_arn for a in p.cluster.admins),
            ("admins",), members=True, privilege=_widens("cluster-admin in every namespace")),
        # HyperPod CLI/console access (charts/cluster_rbac.py): cluster-wide readers, and the members' cluster reads
        Row("cluster viewers", "cluster.viewers", lambda p: p.cluster.viewers, ("viewers",), members=True,
            privilege=_widens("reads every team's jobs, pods, events and queues")),
        Row("team members' cluster reads", "cluster.memberClusterReads",
            lambda p: _on_off(p.cluster.member_cluster_reads), ("member_cluster_reads",),
            privilege=_when(lambda o, n: n == "on",
                            "every team member may list namespaces and nodes and read Kueue's cluster objects")),
        Row("trusted accounts", "accounts.trusted", lambda p: p.trusted_accounts, ("trusted_accounts",),
            members=True, privilege=_widens("principals of this account may now be given cluster access")),
        Row("dependencies chart", "cluster.dependenciesChart", _chart, ("dependencies_chart",),
            privilege=_when(lambda o, n: o != "not installed",
                            "code that runs with cluster-wide rights now comes from another source")),
        Row("add-on versions", "cluster.addonVersions", _addons, ("addon_versions",), members=True),
        # cluster.operators: the HyperPod operators; their add-ons and versions are in the add-on versions row.
        Row("operators", "cluster.operators", _operators, ("operators",), members=True),
        Row("VPC", "cluster.vpc", _vpc, ("network",)),
        Row("tags", "tags", lambda p: tuple(f"{k}={v}" for k, v in p.tags), ("tags",), members=True),
        Row("node recovery", "cluster.nodeRecovery", lambda p: p.cluster.node_recovery, ("node_recovery",)),
        Row("node provisioning", "cluster.nodeProvisioningMode",
            lambda p: p.cluster.node_provisioning_mode or "standard", ("node_provisioning_mode",)),
        Row("shared pool", "sharedPool", _pool, ()),
        # Per-team data: the repositories the nodes (and so every pod) may pull images from.
        Row("node image registries", "cluster.imageRegistries",
            lambda p: (p.cluster.image_registries.repository_arns if p.cluster.image_registries
                       else ("every repository of the region",)),
            ("image_registries",), members=True,
            privilege=_widens("the nodes pull from here, so every team's pods may run these images")),
        # Shared storage (cluster.sharedStorage) and dedicated groups (instanceGroups[].dedicatedTo).
        Row("shared file system", "cluster.sharedStorage", shared_file_system, ("shared_storage",),
            privilege=_when(lambda o, n: o != n and o != "none",
                            "the teams' directories now live on another file system")),
        Row("dedicated groups", "cluster.instanceGroups[].dedicatedTo", dedicated_groups, ("dedicated",), members=True),
        Row("consumer accounts", "accounts.consumers",
            lambda p: tuple(sorted(f"{c.account_name} ({c.account})" for c in p.stacks.consumers)), ("stacks",),
            members=True),
        # security (issue 20): whom the VPC endpoints admit besides the spec's own accounts
        Row("endpoint policies' organization", "accounts.organizationId", _endpoint_organization, ("network",),
            privilege=_when(lambda o, n: n != "none", "every account of the organization may now use the VPC "
                            "endpoints and be reached through them")),
    ),
)

CAPACITY = View(
    name="capacity",
    spec="cluster.instanceGroups[]",
    objects=lambda plan: {f.instance_type: f for f in plan.flavors},
    title=lambda key: f"capacity {key}",
    rows=(Row("(instances)", "cluster.instanceGroups[].count", lambda f: f.instances, ("instances", "instance_type")),),
    added=lambda key, f: f"capacity {key} (instances): 0 -> {f.instances}",
    removed=lambda key, f: f"capacity {key} (instances): {f.instances} -> 0",
)

INSTANCE_GROUPS = View(
    name="instance group",
    spec="cluster.instanceGroups[]",
    objects=lambda plan: {g.name: g for g in plan.instance_groups},
    title=lambda key: f"instance group {key}",
    rows=(
        Row("name", "cluster.instanceGroups[].name", lambda g: g.name, ("name",)),
        Row("instance type", "cluster.instanceGroups[].instanceType", lambda g: g.instance_type,
            ("instance_type", "accelerated")),
        Row("instances", "cluster.instanceGroups[].count", lambda g: g.count, ("count",)),
        Row("data volume (GiB)", "cluster.instanceGroups[].volumeSizeGb", lambda g: g.volume_size_gb or "default",
            ("volume_size_gb",)),
        Row("MIG profile", "cluster.instanceGroups[].mig", lambda g: g.mig_profile or "whole GPUs",
            ("mig_profile",)),
        Row("training plan", "cluster.instanceGroups[].trainingPlanArn", lambda g: g.training_plan_arn or "none",
            ("training_plan_arn",)),
        Row("subnets", "cluster.instanceGroups[].subnetIds", lambda g: g.subnet_ids or ("the cluster's",),
            ("subnet_ids",), members=True),
        Row("node labels", "cluster.instanceGroups[].labels",
            lambda g: tuple(f"{k}={v}" for k, v in g.labels), ("labels",), members=True),
        # Removing a NoSchedule/NoExecute taint lets every team's pods onto nodes that were kept apart.
        Row("node taints", "cluster.instanceGroups[].taints",
            lambda g: tuple(f"{t.key}={t.value or ''}:{t.effect}" for t in g.taints), ("taints",), members=True),
        Row("lifecycle scripts", "cluster.instanceGroups[].lifecycle",
            lambda g: f"{g.lifecycle.source_s3_uri}{g.lifecycle.on_create}" if g.lifecycle else "shipped",
            ("lifecycle",),
            privilege=_when(lambda o, n: n != "shipped",
                            "code that runs as root on every node of the group now comes from another source")),
        Row("data volume key", "cluster.instanceGroups[].volumeKmsKeyId",
            lambda g: g.volume_kms_key_id or "AWS-managed", ("volume_kms_key_id",)),
        Row("deep health checks", "cluster.instanceGroups[].deepHealthChecks",
            lambda g: tuple(g.deep_health_checks), ("deep_health_checks",), members=True),
        Row("threads per core", "cluster.instanceGroups[].threadsPerCore",
            lambda g: g.threads_per_core or "the type's", ("threads_per_core",)),
        # Dedicated node groups (instanceGroups[].dedicatedTo): whose the group is. Ending a dedication lets every
        # team's pods onto the nodes; moving it gives them to another team.
        Row("dedicated to", "cluster.instanceGroups[].dedicatedTo",
            lambda g: f"team {g.dedicated_to} (label and NoSchedule taint {DEDICATED_KEY}={g.dedicated_to})"
            if g.dedicated_to else "every team", ("dedicated_to",),
            privilege=_when(lambda o, n: o != n and o != "every team",
                            "nodes that were one team's now take other teams' work")),
    ),
    added=lambda key, g: f"instance group {key} added: {g.count} x {g.instance_type}",
    removed=lambda key, g: f"instance group {key} removed: {g.count} x {g.instance_type}",
)

PRIORITY_CLASSES = View(
    name="priority class",
    spec="scheduler.priorityClasses[]",
    objects=lambda plan: {p.name: p for p in plan.priority_classes},
    title=lambda key: f"priority class {key}",
    rows=(Row("weight", "scheduler.priorityClasses", lambda p: p.weight, ("weight", "name", "kueue_name")),),
    added=lambda key, p: f"priority class {key} added (weight {p.weight})",
    removed=lambda key, p: f"priority class {key} removed (weight {p.weight})",
)


# --- teams -----------------------------------------------------------------------------------------------------


def _identity(w: IdentityPlan) -> str:
    if w.created_target is not None:
        return f"{w.service_account} -> role {w.created_target.name} in {w.consumer}"
    if w.target_role_arn:
        return f"{w.service_account} -> {w.target_role_arn}"
    return f"{w.service_account} (same account)"


def _grants(part: TeamPart) -> tuple[str, ...]:
    out = []
    for w in part.identities:
        # Per-team data: the source role's own grants in the capacity account, then the created target role's.
        g = w.grants
        out += [f"s3://{a.bucket}/{a.prefix}* {a.access} for {w.service_account}" for a in g.s3]
        if g.team_bucket:
            out.append(f"s3://{g.team_bucket}/* read-write (team bucket) for {w.service_account}")
        out += [f"KMS key {key} for {w.service_account}" for key in g.kms_key_arns]
        if g.secrets_arn:
            out.append(f"secrets {g.secrets_arn} for {w.service_account}")
        out += [f"ECR pull {r} for {w.service_account}" for r in g.ecr_repository_arns]
        target = w.created_target
        if target is None:
            continue
        for s3 in target.s3:
            out.append(f"s3://{s3.bucket}/{s3.prefix}* {s3.access} for {w.service_account}")
        for key in target.kms_keys:
            out.append(f"KMS key {key} for {w.service_account}")
    return tuple(sorted(set(out)))


def _bucket_principals(part: TeamPart) -> tuple[str, ...]:
    """Per-team data: who the team bucket's policies admit, and how."""
    s = part.storage
    if s is None:
        return ()
    return tuple(sorted([f"{arn} read-write" for arn in s.writers] + [f"{arn} read" for arn in s.readers]))


def _contract(team: TeamPlan) -> str:
    c = team.contract
    if c is None:
        return "none"
    return (f"business {c.business_owner}, operations {c.operations_owner}, cost {c.cost_owner}; "
            f"{c.data_classification}; approved {', '.join(c.approved_workloads)}; review by {c.review_by}")


def _paused(title: str, old: bool, new: bool) -> list[str]:
    if old and not new:
        return [f"{title} paused: {PAUSE_EFFECT}"]
    if new and not old:
        return [f"{title} resumed: its queued work is admitted again, within its quota"]
    return []


def _team_summary(t: TeamPlan) -> str:
    return f"owns {owns(t)}; can lend {lends(t)}; may borrow {borrows(t)}; weight {t.fair_share_weight}"


def _team_objects(plan: "Plan") -> dict[str, TeamPart]:
    storage = {s.team: s for s in plan.storage}
    policies = {p.team: p for p in plan.tools_policies}
    return {t.name: TeamPart(t, tuple(i for i in plan.identities if i.team == t.name), storage.get(t.name),
                             policies.get(t.name))
            for t in plan.tenants}


# --- reaching the cluster: teams[].access.toolsPolicy ---
def _tools_policy(part: TeamPart) -> str:
    """Who gets it follows the viewers and submitters (their rows); this row is the switch."""
    return _on_off(part.tools_policy is not None)


_RESTRICTED = {"restricted": 2, "baseline": 1}

TEAM = View(
    name="team",
    spec="teams[]",
    objects=_team_objects,
    title=lambda key: f"team {key}",
    rows=(
        Row("active", "teams[].active", lambda x: x.team.active, ("active",), lines=_paused),
        Row("owns", "teams[].quota", lambda x: owns(x.team), ("flavors",), column="OWNS"),
        Row("sharing", "teams[].sharing.strategy", lambda x: x.team.strategy, ("strategy",)),
        Row("tags", "teams[].tags", lambda x: tuple(f"{k}={v}" for k, v in x.team.tags), ("tags",), members=True),
        Row("can lend", "teams[].sharing.strategy", lambda x: lends(x.team), ("idle_resource_sharing",),
            column="CAN LEND"),
        Row("may borrow", "teams[].sharing.borrowLimitPercent|teams[].sharing.absoluteBorrowLimits",
            lambda x: borrows(x.team), ("borrow_limit_percent", "absolute_borrow_limits"), column="MAY BORROW"),
        Row("fair-share weight", "teams[].fairShareWeight", lambda x: x.team.fair_share_weight,
            ("fair_share_weight",), column="WEIGHT"),
        Row("preempts its own lower-priority work", "teams[].preemptTeamTasks", lambda x: x.team.preempt_team_tasks,
            ("preempt_team_tasks",), column="PREEMPTS OWN"),
        Row("can view", "teams[].access.viewers", lambda x: x.team.viewers, ("viewers", "viewers_group"),
            members=True, privilege=_widens("sees the team's work")),
        Row("can submit", "teams[].access.submitters", lambda x: x.team.submitters,
            ("submitters", "submitters_group"), members=True, privilege=_widens("runs work on the team's quota")),
        Row("workload identity", "teams[].workloadIdentities[]", lambda x: tuple(map(_identity, x.identities)),
            ("service_accounts",), members=True, privilege=_widens("the team's pods get these AWS credentials")),
        # Per-team data: grants of the source roles and target roles, and the team bucket.
        Row("data grant", "teams[].workloadIdentities[].targetRole|teams[].workloadIdentities[].grants", _grants,
            (), members=True, privilege=_widens("the team's pods reach this data")),
        Row("team bucket", "teams[].storage.bucket",
            lambda x: x.storage.bucket if x.storage else "none", ()),
        Row("team bucket admits", "teams[].storage|teams[].access|teams[].workloadIdentities[]", _bucket_principals,
            (), members=True, privilege=_widens("reaches the team bucket's data")),
        Row("egress", "teams[].egress", lambda x: tuple(f"{e.cidr} {e.protocol} {list(e.ports)}" for e in x.team.egress),
            ("egress",), members=True, privilege=_widens("the team's pods reach this network")),
        Row("pod security", "teams[].podSecurity", lambda x: x.team.pod_security, ("pod_security",),
            privilege=_when(lambda o, n: _RESTRICTED[n] < _RESTRICTED[o], "the team's pods may run with fewer "
                            "restrictions")),
        Row("exec into pods", "teams[].access.podExec", lambda x: _allowed(x.team.pod_exec), ("pod_exec",),
            privilege=_when(lambda o, n: n == "allowed", "submitters get a shell in the team's pods")),
        Row("write Secrets", "teams[].access.writeSecrets", lambda x: _allowed(x.team.write_secrets),
            ("write_secrets",), privilege=_when(lambda o, n: n == "allowed", "submitters read and write the "
                                                "team's Secrets")),
        Row("write ConfigMaps", "teams[].access.writeConfigMaps", lambda x: _allowed(x.team.write_config_maps),
            ("write_config_maps",), privilege=_when(lambda o, n: n == "allowed", "submitters write the team's "
                                                    "ConfigMaps")),
        Row("tools policy", "teams[].access.toolsPolicy", _tools_policy, (),
            privilege=_when(lambda o, n: n == "on", "the team's viewers and submitters may describe the EKS and "
                            "HyperPod clusters and list HyperPod clusters")),
        Row("contract", "teams[].contract", lambda x: _contract(x.team), ("contract",)),
        # Workload kinds and per-team workload limits (plan/workloads.py, charts/admission.py).
        Row("may create", "teams[].contract.approvedWorkloads", lambda x: tuple(k.kind for k in kinds_for(x.team)),
            ("contract",), members=True, privilege=_widens("the team's submitters may create this kind")),
        Row("priority classes", "teams[].priorityClasses", lambda x: x.team.priority_classes or ("none",),
            ("priority_classes",), members=True,
            privilege=_widens("the team's work may run at this priority and preempt work below it")),
        Row("images", "teams[].images", lambda x: x.team.image_prefixes or ("any image",), ("image_prefixes",),
            members=True, privilege=_widens("the team's containers may run images from here")),
        Row("name", "teams[].name", lambda x: x.team.name, ("name",)),
    ),
    added=lambda key, x: (f"team {key} added{'' if x.team.active else ' paused'}: {_team_summary(x.team)}; "
                          f"{len(x.team.viewers)} viewer(s), {len(x.team.submitters)} submitter(s)"),
    removed=lambda key, x: (f"team {key} removed: its quota, access, workload identities and team objects are "
                            f"deleted (it {_team_summary(x.team)})"),
)

# --- Slurm-orchestrated clusters (cluster.orchestrator: slurm; plan/slurm.py, docs/slurm.md) -------------------


def _tres_words(tres: tuple[tuple[str, int], ...]) -> str:
    return ",".join(f"{k}={v}" for k, v in tres) or "none"


def _slurm_state(plan: "Plan") -> Any:
    """The desired accounting state (hyperpod_gov.slurm.model), None for EKS: the sacctmgr row compares it."""
    if plan.slurm is None:
        return None
    from ..slurm.model import desired_state

    return desired_state(plan.slurm)


def _sacctmgr_lines(title: str, old: Any, new: Any) -> list[str]:
    from ..slurm.render import changes

    return [f"{title} accounting: {c}" for c in changes(old, new)]


def _slurm_qos(plan: "Plan") -> tuple[str, ...]:
    state = _slurm_state(plan)
    if state is None:
        return ()
    return tuple(f"{q.name}: priority {q.priority}" + (f", GrpTRES={_tres_words(q.grp_tres)}" if q.grp_tres else "")
                 + (f", preempts {','.join(q.preempt)}" if q.preempt else "")
                 + (f", preempted by {q.preempt_mode}" if q.preempt_mode else "") for q in state.qos)


def _slurm_partitions(plan: "Plan") -> tuple[str, ...]:
    sp = plan.slurm
    if sp is None:
        return ()
    return tuple(f"{p.name} ({', '.join(p.instance_types)}): "
                 + (f"AllowAccounts={','.join(p.accounts) or 'root'} AllowQos={','.join(p.qos)}"
                    if sp.edits_partitions else "open to every account (HyperPod's partition line)")
                 for p in sp.partitions)


def _slurm_settings(plan: "Plan") -> tuple[str, ...]:
    state = _slurm_state(plan)
    return tuple(f"{k}={v}" for k, v in state.conf.settings) if state is not None and state.conf else ()


def _accounting_database(plan: "Plan") -> str:
    sp = plan.slurm
    if sp is None:
        return "none (EKS)"
    db = sp.accounting_database
    if db is None:
        return "the controller's own MariaDB"
    return (f"{db.endpoint}:{db.port or 'default port'}/{db.name or 'the service default schema'}, credentials "
            f"from {db.secret_arn}")


SLURM = View(
    name="slurm",
    spec="cluster.slurm",
    objects=lambda plan: {"": plan},
    title=lambda key: "slurm",
    rows=(
        Row("orchestrator", "cluster.orchestrator", lambda p: "slurm" if p.slurm else "eks", ("slurm",)),
        Row("configuration strategy", "cluster.slurm.configStrategy",
            lambda p: p.slurm.config_strategy if p.slurm else "none (EKS)", ("slurm",)),
        Row("accounting database", "cluster.slurm.accountingDatabase", _accounting_database, ("slurm",),
            privilege=_when(lambda o, n: o != n and not n.startswith("none"),
                            "the cluster's accounting (accounts, limits, users) now lives in another database")),
        Row("GPUs tracked as GRES", "cluster.slurm.gpuGres",
            lambda p: _on_off(p.slurm.gpu_gres) if p.slurm else "none (EKS)", ("slurm",)),
        Row("settings", "cluster.slurm|scheduler.idleCompute", _slurm_settings, ("slurm",), members=True),
        Row("QOS", "scheduler.priorityClasses|teams[].sharing", _slurm_qos, ("slurm",), members=True),
        Row("partition", "cluster.instanceGroups[].slurm.partition|cluster.instanceGroups[].dedicatedTo",
            _slurm_partitions, ("slurm",), members=True,
            privilege=_widens("these accounts and QOS may run on the partition's nodes")),
        # The exact accounting commands the change causes (the same as accounting.sh runs).
        Row("accounting", "teams[].slurm|teams[].quota|teams[].fairShareWeight", _slurm_state, ("slurm",),
            lines=_sacctmgr_lines),
    ),
)

SLURM_GROUPS = View(
    name="slurm group",
    spec="cluster.instanceGroups[].slurm",
    objects=lambda plan: {g.name: g for g in plan.slurm.groups} if plan.slurm else {},
    title=lambda key: f"instance group {key} (Slurm)",
    rows=(
        Row("node type", "cluster.instanceGroups[].slurm.nodeType", lambda g: g.node_type,
            ("node_type", "name", "instance_type", "count")),
        Row("partition", "cluster.instanceGroups[].slurm.partition", lambda g: g.partition or "none",
            ("partition", "dedicated_to")),
    ),
    added=lambda key, g: f"instance group {key} (Slurm) added: {g.node_type}"
    + (f" in partition {g.partition}" if g.partition else ""),
    removed=lambda key, g: f"instance group {key} (Slurm) removed: {g.node_type}"
    + (f" in partition {g.partition}" if g.partition else ""),
)


def _limits_words(limits: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple(f"{lim.partition}: {_tres_words(lim.tres)}" for lim in limits)


SLURM_TEAMS = View(
    name="slurm team",
    spec="teams[].slurm",
    objects=lambda plan: {t.name: t for t in plan.slurm.teams} if plan.slurm else {},
    title=lambda key: f"team {key} (Slurm)",
    rows=(
        Row("account", "teams[].name", lambda t: t.account, ("account", "name")),
        Row("Fairshare", "teams[].fairShareWeight", lambda t: t.fairshare, ("fairshare", "fair_share_weight")),
        Row("guaranteed (GrpTRES)", "teams[].quota", lambda t: _limits_words(t.guaranteed), ("guaranteed",),
            members=True),
        Row("borrow cap (borrow QOS GrpTRES)", "teams[].sharing", lambda t: _limits_words(t.borrow),
            ("borrow", "strategy"), members=True, privilege=_widens("the team may run this much more on idle nodes")),
        Row("QOS", "teams[].priorityClasses", lambda t: t.priority_classes, ("priority_classes", "preempt_team_tasks"),
            members=True, privilege=_widens("the team's jobs may run at this priority")),
        Row("paused", "teams[].active", lambda t: "no" if t.active else "yes (GrpJobs=0)", ("active",)),
        Row("users", "teams[].slurm.users", lambda t: t.users, ("users",), members=True,
            privilege=_widens("may submit under the team's accounts and read and write its data directory")),
        Row("group", "teams[].slurm.group", lambda t: t.group, ("group",),
            privilege=_when(lambda o, n: o != n, "the team's data directory now belongs to another group")),
        Row("data directory", "teams[].slurm.dataPath", lambda t: t.data_path, ("data_path",)),
    ),
    added=lambda key, t: f"team {key} (Slurm) added: account {t.account}, {len(t.users)} user(s)",
    removed=lambda key, t: f"team {key} (Slurm) removed: its accounts stay in Slurm until accounting.sh runs "
    "with HPG_SLURM_PRUNE=1 (deleting an association cancels its running jobs)",
)


VIEWS = (CLUSTER, CAPACITY, INSTANCE_GROUPS, PRIORITY_CLASSES, TEAM, SLURM, SLURM_GROUPS, SLURM_TEAMS)

# Plan attributes that no view or table reads, and why they need none.
NOT_GOVERNED: Mapping[str, str] = {
    "Plan.name": "prefixes every generated name; a rename is a new deployment",
    "Plan.account": "the capacity account; a change is a new deployment",
    "Plan.region": "the capacity region; a change is a new deployment",
    "Plan.partition": "follows the region",
    "Plan.cluster": "its parts are rows of the cluster view and the tables",
    "Plan.cohort": "generated from the spec's name",
    "Plan.teams": "the team view",
    "Plan.flavors": "the capacity view",
    "Plan.priority_classes": "the priority-class view",
    "Plan.covered_resources": "follows the instance types (capacity view)",
    "Plan.principals": "follows the teams' access (team view) and the access-entry table",
    "Plan.identities": "the team view's workload identities and the Pod Identity table",
    "Plan.policy_name": "generated from the spec's name",
    "Plan.pipeline": "delivery, not governance",
    "Plan.kueue_config": "follows idle compute (cluster view)",
    "Plan.alerting": "alarm thresholds, the platform's email and team dashboards: read by the monitoring plan",
    "Plan.shared_pool_asked": "whether the spec asks for a shared pool: read by the invariants (the pool row)",
    "Plan.monitoring": "alarms, dashboards and topics follow the teams, their owners and alerting (read by emitters)",
    "Plan.catalog": "instance type facts",
    "Plan.contracts": "the contract row and `review`",
    "Plan.tools_policies": "the team view's tools policy row",
    "ClusterPlan.eks_name": "follows the cluster name",
    "ClusterPlan.eks_arn": "follows the cluster name",
    "ClusterPlan.instance_groups": "the instance-group view",
    "ClusterPlan.lifecycle_bucket": "generated from the spec's name and account",
    "FlavorPlan.name": "the ResourceFlavor's name, generated from the instance type",
    "FlavorPlan.accelerator_kind": "a fact of the instance type (catalog)",
    "FlavorPlan.mig_resource": "follows instanceGroups[].mig (the instance-group view)",
    "FlavorPlan.per_instance": "facts of the instance type (catalog) and its MIG profile",
    "FlavorPlan.capacity": "follows the instance groups' counts (the instance-group view)",
    "InstanceGroupPlan.path": "where the spec declares it, for findings",
    "AdminPlan.path": "where the spec lists it, for findings",
    "TeamPlan.namespace": "generated from the team name",
    "TeamPlan.cluster_queue": "generated from the team name",
    "TeamPlan.local_queue": "generated from the team name",
    "TeamPlan.is_shared_pool": "the shared pool row",
    "TeamPlan.quota_name": "generated from the team name",
    "TeamPlan.queue_reader": "generated from the team name",
    "TeamPlan.path": "where the spec declares the team, for findings",
    "TeamPlan.alarms": "alarm thresholds: read by the monitoring plan",
    "IdentityPlan.team": "the team view's key",
    "IdentityPlan.namespace": "generated from the team name",
    "IdentityPlan.source_role_name": "generated from the spec, team and service account names",
    "IdentityPlan.source_role_arn": "generated from the spec, team and service account names",
    "IdentityPlan.target_role_arn": "the workload identity row",
    "IdentityPlan.created_target": "the workload identity and data grant rows",
    "IdentityPlan.consumer": "the workload identity row",
    "IdentityPlan.consumer_account": "the consumer accounts row",
    "IdentityPlan.path": "where the spec declares it, for findings",
    # Per-team data
    "IdentityPlan.grants": "the data grant row",
    "Plan.storage": "the team view's team bucket rows",
    "PrincipalAccess.key": "the construct id",
    "PrincipalAccess.path": "where the spec first names the principal, for findings",
    # Slurm-orchestrated clusters (docs/slurm.md)
    "SlurmGroupPlan.path": "where the spec declares the group, for findings",
    "SlurmTeamPlan.path": "where the spec declares the team, for findings",
}


def team_columns(team: TeamPlan) -> list[tuple[str, str]]:
    """(header, value in words) of the team view's rows that ``explain`` shows as columns, in row order."""
    part = TeamPart(team)
    return [(row.column, str(row.get(part))) for row in TEAM.rows if row.column]
