"""What the plan says should be deployed, in the AWS APIs' own terms.

The one place that maps the plan onto the state ``drift`` compares with. Quota and
policy dicts come from ``hyperpod_gov.plan.task_governance``, the same functions
the CDK constructs emit, so drift and deploy cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from ..plan import IdentityPlan, PrincipalAccess, identity_plans, principal_access
from ..plan import names
from ..plan.task_governance import compute_quota_config, compute_quota_target, scheduler_config
from ..spec.models import GovernanceSpec

# constructs/task_governance.py deploys every quota enabled.
ACTIVATION_STATE = "Enabled"
ACCESS_ENTRY_TYPE = "STANDARD"
TASK_GOVERNANCE_ADDON = "amazon-sagemaker-hyperpod-taskgovernance"
OBSERVABILITY_ADDON = "amazon-cloudwatch-observability"
# Every add-on hyperpod-gov may install; one of these deployed but not planned is drift (e.g. the
# task-governance add-on on a kueue-mode cluster: two Kueue controllers).
KNOWN_ADDONS = ("amazon-cloudwatch-observability", "amazon-sagemaker-hyperpod-taskgovernance", "coredns",
                "eks-pod-identity-agent", "kube-proxy", "vpc-cni")


@dataclass(frozen=True)
class ExpectedInstanceGroup:
    name: str
    instance_type: str
    count: int


@dataclass(frozen=True)
class ExpectedPolicy:
    name: str
    scheduler_config: Mapping[str, Any]  # SchedulerConfig, API member names


@dataclass(frozen=True)
class ExpectedQuota:
    team: str  # ComputeQuotaTarget.TeamName, the key drift matches quotas by
    name: str
    config: Mapping[str, Any]  # ComputeQuotaConfig
    target: Mapping[str, Any]  # ComputeQuotaTarget
    activation_state: str


@dataclass(frozen=True)
class ExpectedAccessEntry:
    principal_arn: str
    groups: Optional[tuple[str, ...]]  # sorted; None: a cluster admin, only its presence is checked
    teams: tuple[str, ...]


@dataclass(frozen=True)
class ExpectedPodIdentity:
    team: str
    namespace: str
    service_account: str
    role_arn: str
    target_role_arn: Optional[str]


@dataclass(frozen=True)
class ExpectedAddon:
    name: str
    version: Optional[str]  # None: EKS's default, only presence is checked


@dataclass(frozen=True)
class Expected:
    spec_name: str
    mode: str  # "task-governance" | "kueue"
    cluster_name: str
    eks_cluster_name: str
    account: str
    region: str
    instance_groups: tuple[ExpectedInstanceGroup, ...]
    policy: Optional[ExpectedPolicy]  # None in kueue mode
    quotas: tuple[ExpectedQuota, ...]  # empty in kueue mode
    access_entries: tuple[ExpectedAccessEntry, ...]
    pod_identities: tuple[ExpectedPodIdentity, ...]
    addons: tuple[ExpectedAddon, ...]

    def team_of_namespace(self, namespace: str) -> Optional[str]:
        if namespace.startswith(names.NAMESPACE_PREFIX):
            return namespace[len(names.NAMESPACE_PREFIX):]
        return None


@dataclass(frozen=True)
class _PlanFacts:
    mode: str
    name: str
    cluster_name: str
    eks_cluster_name: str
    account: str
    region: str
    policy_name: str
    instance_groups: tuple[ExpectedInstanceGroup, ...]
    principals: tuple[PrincipalAccess, ...]
    identities: tuple[IdentityPlan, ...]
    admins: tuple[str, ...]
    addon_versions: Mapping[str, Optional[str]]


def _plan_facts(plan: Any, spec: GovernanceSpec) -> _PlanFacts:
    """ADAPTER (the only code here that reads the spec): plan attributes the lead is adding, with spec fallbacks.

    ``plan`` is a ``hyperpod_gov.plan.Plan``. Once every planned ``Plan`` has ``mode``, ``name``,
    ``cluster_name``, ``eks_cluster_name``, ``account``, ``region``, ``policy_name``, ``instance_groups``,
    ``principals``, ``identities``, ``addon_versions`` and ``cluster.admins``, the spec fallbacks below are
    dead and ``spec`` can leave this module's signature.
    """
    c = spec.cluster
    v = c.addon_versions
    mode = getattr(plan, "mode", spec.scheduler.mode)
    fallback_addons: dict[str, Optional[str]] = {
        "vpc-cni": v.vpc_cni, "kube-proxy": v.kube_proxy, "eks-pod-identity-agent": v.pod_identity_agent,
        "coredns": v.coredns, OBSERVABILITY_ADDON: v.cloudwatch_observability,
    }
    if mode == "task-governance":
        fallback_addons[TASK_GOVERNANCE_ADDON] = v.task_governance
    groups = getattr(plan, "instance_groups", None)
    if groups is None:
        groups = c.instance_groups
    admins = getattr(getattr(plan, "cluster", None), "admins", None)
    admin_arns = tuple(a.principal_arn for a in admins) if admins is not None else tuple(c.admins)
    return _PlanFacts(
        mode=mode,
        name=getattr(plan, "name", spec.name),
        cluster_name=getattr(plan, "cluster_name", c.name),
        eks_cluster_name=getattr(plan, "eks_cluster_name", c.eks_cluster_name),
        account=getattr(plan, "account", spec.accounts.capacity.id),
        region=getattr(plan, "region", spec.accounts.capacity.region),
        policy_name=getattr(plan, "policy_name", f"{spec.name}-policy"),
        instance_groups=tuple(ExpectedInstanceGroup(g.name, g.instance_type, g.count) for g in groups),
        principals=tuple(getattr(plan, "principals", None) or principal_access(spec)),
        identities=tuple(getattr(plan, "identities", None) or identity_plans(spec)),
        admins=admin_arns,
        addon_versions=dict(getattr(plan, "addon_versions", None) or fallback_addons),
    )


def quota_name(plan: Any, team: str) -> str:
    return getattr(plan.team(team), "quota_name", f"{team}-quota")


def expected_state(plan: Any, spec: GovernanceSpec) -> Expected:
    """Everything drift compares, derived from the plan (see ``_plan_facts`` for the spec fallbacks)."""
    f = _plan_facts(plan, spec)
    task_governance = f.mode == "task-governance"
    policy = None
    quotas: tuple[ExpectedQuota, ...] = ()
    if task_governance:
        policy = ExpectedPolicy(
            f.policy_name,
            scheduler_config([(p.name, p.weight) for p in plan.priority_classes], plan.fair_sharing),
        )
        quotas = tuple(
            ExpectedQuota(t.name, quota_name(plan, t.name), compute_quota_config(t), compute_quota_target(t),
                          ACTIVATION_STATE)
            for t in plan.teams
        )
    entries: dict[str, ExpectedAccessEntry] = {
        arn: ExpectedAccessEntry(arn, None, ()) for arn in sorted(f.admins)
    }
    for p in f.principals:  # a principal that is also an admin gets its team groups (one entry per principal)
        entries[p.principal_arn] = ExpectedAccessEntry(p.principal_arn, tuple(sorted(p.groups)), tuple(p.teams))
    return Expected(
        spec_name=f.name,
        mode=f.mode,
        cluster_name=f.cluster_name,
        eks_cluster_name=f.eks_cluster_name,
        account=f.account,
        region=f.region,
        instance_groups=tuple(sorted(f.instance_groups, key=lambda g: g.name)),
        policy=policy,
        quotas=tuple(sorted(quotas, key=lambda q: q.team)),
        access_entries=tuple(entries[k] for k in sorted(entries)),
        pod_identities=tuple(sorted(
            (ExpectedPodIdentity(i.team, i.namespace, i.service_account, i.source_role_arn, i.target_role_arn)
             for i in f.identities),
            key=lambda i: (i.namespace, i.service_account),
        )),
        addons=tuple(ExpectedAddon(n, f.addon_versions[n]) for n in sorted(f.addon_versions)),
    )
