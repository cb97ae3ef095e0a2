"""Pure planning over the spec: names, quotas in Kueue units, sharding. No CDK import."""

from .governance import FlavorPlan, GovernancePlan, PriorityClassPlan, build_plan
from .quotas import Amounts, FlavorQuota, TeamPlan, amounts_for, capacity, shared_pool_quota

__all__ = [
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
