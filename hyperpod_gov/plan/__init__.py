"""Pure planning over the spec: every name, quota, mode flag and stack. No CDK import."""

from .access import PrincipalAccess, principal_access
from .build import build_plan
from .identity import IdentityPlan, identity_plans
from .invariants import check_plan
from .plan import (
    AdminPlan,
    ClusterPlan,
    ClusterPolicyPlan,
    FlavorPlan,
    InstanceGroupPlan,
    NetworkPlan,
    Plan,
    PriorityClassPlan,
    Shard,
    StackLayout,
    stack_layout,
)
from .quotas import Amounts, FlavorQuota, TeamPlan, amounts_for, capacity, shared_pool_quota
from .sharding import shard_of

__all__ = [
    "AdminPlan",
    "Amounts",
    "ClusterPlan",
    "ClusterPolicyPlan",
    "FlavorPlan",
    "FlavorQuota",
    "IdentityPlan",
    "InstanceGroupPlan",
    "NetworkPlan",
    "Plan",
    "PrincipalAccess",
    "PriorityClassPlan",
    "Shard",
    "StackLayout",
    "TeamPlan",
    "amounts_for",
    "build_plan",
    "capacity",
    "check_plan",
    "identity_plans",
    "principal_access",
    "shard_of",
    "shared_pool_quota",
    "stack_layout",
]
