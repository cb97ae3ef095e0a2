"""What the plan says should be deployed, in the AWS APIs' own terms.

The one place that maps the plan onto the state ``drift`` compares with. Quota and
policy dicts come from ``hyperpod_gov.plan.task_governance``, the same functions
the CDK constructs emit, so drift and deploy cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ..plan import ClusterPlan, InstanceGroupPlan, Plan, TeamPlan
from ..plan import names
from ..plan.access import PrincipalAccess
from ..plan.identity import IdentityPlan
from ..plan.fields import emit
from ..plan.tables import CLUSTER_POLICY, AddonPart, PolicyPart, addon_parts, policy_part
from ..plan.task_governance import activation_state, compute_quota_config, compute_quota_target

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
    part: Optional[InstanceGroupPlan] = field(default=None, compare=False, repr=False)  # what tables compare


@dataclass(frozen=True)
class ExpectedPolicy:
    name: str
    scheduler_config: Mapping[str, Any]  # SchedulerConfig, API member names
    part: Optional[PolicyPart] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ExpectedQuota:
    team: str  # ComputeQuotaTarget.TeamName, the key drift matches quotas by
    name: str
    config: Mapping[str, Any]  # ComputeQuotaConfig
    target: Mapping[str, Any]  # ComputeQuotaTarget
    activation_state: str
    part: Optional[TeamPlan] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ExpectedAccessEntry:
    principal_arn: str
    groups: Optional[tuple[str, ...]]  # sorted; None: a cluster admin, only its presence is checked
    teams: tuple[str, ...]
    part: Optional[PrincipalAccess] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ExpectedPodIdentity:
    team: str
    namespace: str
    service_account: str
    role_arn: str
    target_role_arn: Optional[str]
    part: Optional[IdentityPlan] = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ExpectedAddon:
    name: str
    version: Optional[str]  # None: EKS's default, only presence is checked
    part: Optional[AddonPart] = field(default=None, compare=False, repr=False)


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
    cluster_part: Optional[ClusterPlan] = field(default=None, compare=False, repr=False)

    @property
    def described_addons(self) -> tuple[str, ...]:
        """The add-ons drift describes: those with a pinned version or a configuration to compare."""
        return tuple(a.name for a in self.addons if a.version is not None or (a.part and a.part.configuration))

    def team_of_namespace(self, namespace: str) -> Optional[str]:
        if namespace.startswith(names.NAMESPACE_PREFIX):
            return namespace[len(names.NAMESPACE_PREFIX):]
        return None


def expected_state(plan: Plan) -> Expected:
    """Everything drift compares, derived from the plan alone."""
    policy = None
    quotas: tuple[ExpectedQuota, ...] = ()
    if plan.task_governance:
        part = policy_part(plan)
        policy = ExpectedPolicy(plan.policy_name, emit(CLUSTER_POLICY, part)["SchedulerConfig"], part)
        quotas = tuple(
            ExpectedQuota(t.name, t.quota_name, compute_quota_config(t), compute_quota_target(t),
                          activation_state(t), t)
            for t in plan.teams
        )
    entries: dict[str, ExpectedAccessEntry] = {
        a.principal_arn: ExpectedAccessEntry(a.principal_arn, None, ()) for a in plan.cluster.admins
    }
    for p in plan.principals:  # a principal that is also an admin gets its team groups (one entry per principal)
        entries[p.principal_arn] = ExpectedAccessEntry(p.principal_arn, tuple(sorted(p.groups)), tuple(p.teams), p)
    return Expected(
        spec_name=plan.name,
        mode=plan.mode,
        cluster_name=plan.cluster_name,
        eks_cluster_name=plan.eks_cluster_name,
        account=plan.account,
        region=plan.region,
        instance_groups=tuple(sorted((ExpectedInstanceGroup(g.name, g.instance_type, g.count, g)
                                      for g in plan.instance_groups), key=lambda g: g.name)),
        policy=policy,
        quotas=tuple(sorted(quotas, key=lambda q: q.team)),
        access_entries=tuple(entries[k] for k in sorted(entries)),
        pod_identities=tuple(sorted(
            (ExpectedPodIdentity(i.team, i.namespace, i.service_account, i.source_role_arn, i.target_role_arn, i)
             for i in plan.identities),
            key=lambda i: (i.namespace, i.service_account),
        )),
        addons=tuple(ExpectedAddon(a.name, a.version, a) for a in addon_parts(plan)),
        cluster_part=plan.cluster,
    )
