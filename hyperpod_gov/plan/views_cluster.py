"""The cluster's governance views (``views.py``): the cluster, its capacity, instance groups and priority classes."""

from __future__ import annotations

from ..spec.cluster import DEDICATED_KEY
from . import names
from .elastic import patching_words
from .model import Plan
from .scheduling import gang_scheduling_words, topology_words
from .views_base import Row, View, _on_off, _when, _widens
from .words import owns, unowned_capacity, unowned_lines


def _delivery(p: Plan) -> str:
    """Where the reference pipeline takes the spec from (a repository and branch through a connection)."""
    pipe = p.pipeline
    if pipe is None or pipe.repository is None:
        return "CDK context (not in the spec)"
    return f"{pipe.repository}@{pipe.branch} through {pipe.connection_arn or 'the CDK context connection'}"


def _chart(plan: Plan) -> str:
    c = plan.cluster.dependencies_chart
    if c is None:
        return "not installed"
    if c.source == "directory":
        return f"directory {c.directory}"
    return f"{c.source} {c.repository} chart {c.chart} version {c.version or 'latest'}"


def _addons(plan: Plan) -> tuple[str, ...]:
    return tuple(f"{name} {version or '(EKS default)'}" for name, version in plan.addon_versions.items())


def _operators(plan: Plan) -> tuple[str, ...]:
    """Each operator with the add-ons it installs (prerequisites included), or the existing cluster's own."""
    if not plan.cluster.operators:
        return ("none installed by hyperpod-gov",)
    return (tuple(plan.cluster.operators)
            + tuple(f"add-on {a.name} {a.version or '(EKS default)'}" for a in plan.operator_addons)
            + tuple(f"chart {c.chart} {c.version}" for c in plan.operator_charts))


def running_operators(plan: Plan) -> tuple[str, ...]:
    """The operators an existing cluster runs already (cluster.existing.operators): teams may use them (HPG-D009)."""
    e = plan.cluster.existing
    return e.operators if e is not None else ()


def _pool(plan: Plan) -> str:
    pool = plan.shared_pool
    if pool is None:
        return "none"
    return f"{pool.name}: owns {owns(pool)}; {pool.strategy}; weight {pool.fair_share_weight}"


def _vpc(plan: Plan) -> str:
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


def _installs_scheduler(plan: Plan) -> bool:
    """Whether hyperpod-gov installs the scheduler: always on a cluster it creates, on an existing one when asked."""
    return plan.cluster.existing is None or plan.cluster.existing.installs_scheduler


def _existing(plan: Plan) -> str:
    e = plan.cluster.existing
    if e is None:
        return "none (hyperpod-gov creates the cluster)"
    return f"{e.hyperpod_arn} (EKS {plan.cluster.eks_name})"


def _kubectl_network(plan: Plan) -> str:
    e = plan.cluster.existing
    if e is None:
        return "the created VPC's private subnets"
    return f"{', '.join(e.subnet_ids)} with {e.security_group_id}"


def _installs(plan: Plan) -> tuple[str, ...]:
    e = plan.cluster.existing
    if e is None:
        return ("everything (new cluster)",)
    out = [f"scheduler ({'task-governance add-on' if plan.task_governance else 'Kueue chart'})"
           if e.installs_scheduler else "", "CloudWatch Observability add-on" if e.installs_observability else ""]
    if e.self_managed_kueue:
        out.append("(self-managed Kueue present)")
    return tuple(sorted(x for x in out if x))


def network_policy_enforcement(plan: Plan) -> str:
    """What enforces the teams' NetworkPolicies (cluster.existing.networkPolicyEnforcement), in words."""
    if plan.slurm is not None:
        return "none needed (Slurm cluster: no Kubernetes NetworkPolicies)"
    e = plan.cluster.existing
    if e is None:
        return "vpc-cni add-on, created with enableNetworkPolicy and strict mode"
    if e.network_policy_enforcer == "vpc-cni":
        return "the cluster's vpc-cni add-on (enableNetworkPolicy, strict mode: preflight checks it)"
    if e.network_policy_enforcer == "other":
        return f"another network plugin, unchecked: {e.network_policy_reason}"
    return "not stated (HPG-E006): the NetworkPolicies may be enforced by nothing"


def _enforcement_rank(words: str) -> int:
    """2: created or checked by preflight; 1: another plugin the spec vouches for; 0: not stated."""
    if words.startswith(("vpc-cni add-on", "the cluster's vpc-cni", "none needed")):
        return 2
    return 1 if words.startswith("another network plugin") else 0


def _enforcement_weakens(old: str, new: str) -> bool:
    """Isolation rests on less than before: checked becomes unchecked or unstated, or another unchecked plugin."""
    o, n = _enforcement_rank(old), _enforcement_rank(new)
    return n < o or (n == o == 1 and old != new)


def _endpoint_organization(plan: Plan) -> str:
    p = plan.network.perimeter
    return (p.organization_id if p is not None else None) or "none"


def _endpoint_accounts(plan: Plan) -> tuple[str, ...]:
    """The accounts whose principals and resources the VPC endpoints hyperpod-gov creates admit (none created: none)."""
    n, p = plan.network, plan.network.perimeter
    if p is None or not (n.interface_endpoints or n.gateway_endpoint):
        return ()
    return p.accounts


def shared_file_system(plan: Plan) -> str:
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


def dedicated_groups(plan: Plan) -> tuple[str, ...]:
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
        # Governance-only mode: the teams' default-deny NetworkPolicies isolate them only where something enforces
        # them (issue 55); moving from the checked vpc-cni add-on to an unchecked enforcer weakens that.
        Row("NetworkPolicy enforcement", "cluster.existing.networkPolicyEnforcement", network_policy_enforcement,
            ("existing",),
            privilege=_when(_enforcement_weakens, "nothing hyperpod-gov checks now enforces the teams' "
                            "NetworkPolicies: a team's pods may reach the others'")),
        Row("scheduler mode", "scheduler.mode", lambda p: p.mode, ("mode", "task_governance_backend")),
        Row("idle compute", "scheduler.idleCompute", lambda p: p.idle_compute, ("idle_compute", "fair_sharing")),
        Row("idle resource sharing", "scheduler.idleResourceSharing", lambda p: _on_off(p.idle_resource_sharing),
            ("idle_resource_sharing",)),
        Row("task-governance resources", "scheduler.taskGovernanceResources",
            lambda p: p.task_governance_backend or "none (kueue mode)", ("task_governance_backend",)),
        # Scheduling controls (plan/scheduling.py): kueue mode deploys them; task-governance mode relies on the add-on.
        Row("gang scheduling", "scheduler.gangScheduling",
            lambda p: gang_scheduling_words(p.gang_scheduling, p.mode, _installs_scheduler(p)),
            ("gang_scheduling", "mode", "existing")),
        Row("topology-aware scheduling", "scheduler.topology", lambda p: topology_words(p.topology, p.mode),
            ("topology", "mode")),
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
            privilege=_when(lambda o, n: n != "not installed",
                            "code that runs with cluster-wide rights now comes from another source")),
        Row("add-on versions", "cluster.addonVersions", _addons, ("addon_versions",), members=True),
        # cluster.operators: the HyperPod operators; their add-ons and versions are in the add-on versions row.
        Row("operators", "cluster.operators", _operators, ("operators",), members=True),
        Row("operators running on the existing cluster", "cluster.existing.operators", running_operators,
            ("existing",), members=True),
        Row("VPC", "cluster.vpc", _vpc, ("network",)),
        Row("tags", "tags", lambda p: tuple(f"{k}={v}" for k, v in p.tags), ("tags",), members=True),
        Row("delivery source", "deployment.pipeline.repository|deployment.pipeline.branch|"
            "deployment.pipeline.connectionArn", _delivery, ("pipeline",),
            privilege=_when(lambda o, n: o != n, "whoever may push to this repository and branch now deploys the "
                            "cluster's governance")),
        Row("node recovery", "cluster.nodeRecovery", lambda p: p.cluster.node_recovery, ("node_recovery",)),
        Row("autoscaling", "cluster.autoScaling",
            lambda p: f"{p.cluster.auto_scaling} (HyperPod-managed)" if p.cluster.auto_scaling else "off",
            ("auto_scaling",)),
        Row("node provisioning", "cluster.nodeProvisioningMode",
            lambda p: p.cluster.node_provisioning_mode or "standard", ("node_provisioning_mode",)),
        Row("shared pool", "sharedPool", _pool, ()),
        # Capacity nobody holds as quota: a change that frees quota without giving it to anyone says so (issue 58).
        Row("unowned capacity", "teams[].quota|sharedPool|cluster.instanceGroups[].count", unowned_capacity, (),
            lines=unowned_lines),
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
        # security (issue 55): every account of the spec widens the endpoints' policies, used or not
        Row("endpoint policies' accounts", "accounts.consumers|accounts.trusted", _endpoint_accounts,
            ("network",), members=True,
            privilege=_widens("this account's principals may now use the VPC endpoints, and the cluster's pods may "
                              "reach its resources through them")),
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
        Row("instance types (flexible)", "cluster.instanceGroups[].instanceTypes",
            lambda g: g.instance_types or ("one type",), ("instance_types",), members=True),
        Row("instances", "cluster.instanceGroups[].count", lambda g: g.count, ("count",)),
        Row("minimum instances", "cluster.instanceGroups[].minCount",
            lambda g: "none" if g.min_count is None else g.min_count, ("min_count",)),
        Row("capacity type", "cluster.instanceGroups[].capacity", lambda g: g.capacity_type, ("capacity_type",)),
        Row("guaranteed instances", "cluster.instanceGroups[].capacity|cluster.instanceGroups[].minCount|"
            "cluster.autoScaling", lambda g: g.guaranteed, ("autoscaled",)),
        # The node image and the window it is replaced in: what runs as root on every node, and when nodes go.
        Row("node image", "cluster.instanceGroups[].imageId|cluster.instanceGroups[].image.releaseVersion",
            lambda g: g.image_id or (f"HyperPod release {g.image_release_version}" if g.image_release_version
                                     else "HyperPod's current AMI"), ("image_id", "image_release_version"),
            privilege=_when(lambda o, n: o != n and n.startswith("ami-"),
                            "every node of the group now boots an image the spec names, which runs as root")),
        Row("patching", "cluster.instanceGroups[].patching|cluster.instanceGroups[].patching.auto",
            patching_words, ("patching",)),
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
