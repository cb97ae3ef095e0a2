"""Pure planning over the spec: names, quotas in Kueue units, sharding. No CDK import."""

from .access import PrincipalAccess, principal_access
from .identity import IdentityPlan, identity_plans
from .governance import FlavorPlan, GovernancePlan, PriorityClassPlan, build_plan
from .sharding import shard_label, shard_of
from .quotas import Amounts, FlavorQuota, TeamPlan, amounts_for, capacity, shared_pool_quota

__all__ = [
    "IdentityPlan",
    "identity_plans",
    "PrincipalAccess",
    "principal_access",
    "shard_label",
    "shard_of",
    "Amounts",
    "FlavorPlan",
    "FlavorQuota",
    "GovernancePlan",
    "PriorityClassPlan",
    "TeamPlan",
    "amounts_for",
    "build_plan",
    "capacity",
    "shared_pool_quota",
]
