"""The plan: every decision of a spec, made once, as plain frozen data.

``build.build_plan`` (through ``derive_plan``) is the only place that reads a ``GovernanceSpec`` on the way to
the emitters. Charts, constructs, stacks, ``explain``, ``diff``, the pipeline,
the simulator and ``drift`` take the ``Plan`` (or parts of it) and decide
nothing again: mode flags, every generated name, construct key and stack.
``derive_plan`` makes every decision in one pass, the monitoring plan
included (from the parts it has derived, before the ``Plan`` exists); nothing
is patched in afterwards. The invariants' findings are not part of the plan:
``invariants.check_plan`` finds them on it (``build_plan`` raises on the errors;
``invariants.plan_warnings`` gives the warnings). Each part that comes from a list in the spec carries its spec
path (``TeamPlan.path == "teams[3]"``), so findings name it without reading
the spec again. No CDK token ever enters the plan.

The plan is declared by part: the ``Plan`` dataclass in ``model.py``, its part dataclasses in ``parts.py``;
``derive_plan`` in ``derive.py``, with the cluster's and network's builders in ``derive_cluster.py`` and the stack
layout and pipeline in ``derive_stacks.py``. This module re-exports their names.
"""

from __future__ import annotations

from .derive import derive_plan
from .derive_cluster import (
    DEFAULT_DEEP_HEALTH_CHECKS,
    INTERFACE_ENDPOINTS,
    SLURM_INTERFACE_ENDPOINTS,
    availability_zones,
    chart_plan,
    network_plan,
    subnet_masks,
)
from .derive_stacks import slurm_stack_layout, stack_layout
from .model import Mode, Plan
from .parts import (
    AdminPlan,
    ChartPlan,
    ClusterPlan,
    ClusterPolicyPlan,
    ConsumerStack,
    ExistingClusterPlan,
    ExistingVpcPlan,
    FlavorPlan,
    InstanceGroupPlan,
    LifecyclePlan,
    NetworkPlan,
    PipelinePlan,
    PriorityClassPlan,
    Shard,
    StackLayout,
    TaintPlan,
)

__all__ = [
    "DEFAULT_DEEP_HEALTH_CHECKS", "INTERFACE_ENDPOINTS", "SLURM_INTERFACE_ENDPOINTS", "AdminPlan", "ChartPlan",
    "ClusterPlan", "ClusterPolicyPlan", "ConsumerStack", "ExistingClusterPlan", "ExistingVpcPlan", "FlavorPlan",
    "InstanceGroupPlan", "LifecyclePlan", "Mode", "NetworkPlan", "PipelinePlan", "Plan", "PriorityClassPlan", "Shard",
    "StackLayout", "TaintPlan", "availability_zones", "chart_plan", "derive_plan", "network_plan", "slurm_stack_layout",
    "stack_layout", "subnet_masks",
]
