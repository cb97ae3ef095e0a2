"""Where HyperPod task governance can be declared natively in CloudFormation, and what to use elsewhere.

The SageMaker API has the cluster policy and compute quotas wherever HyperPod
task governance runs; CloudFormation's ``AWS::SageMaker::ClusterSchedulerConfig``
and ``ComputeQuota`` exist only in some regions (cfn-lint's bundled provider
schemas list them; tests/test_regions.py checks this list against them). Elsewhere
the same properties go through an SDK-backed custom resource.
"""

from __future__ import annotations

from typing import Literal

from .. import catalog

TaskGovernanceBackend = Literal["native", "custom-resource"]
Choice = Literal["auto", "native", "custom-resource"]


def has_native_types(region: str) -> bool:
    return region in catalog.TASK_GOVERNANCE_REGIONS


def task_governance_backend(region: str, choice: Choice = "auto") -> TaskGovernanceBackend:
    """``auto``: the native CloudFormation types where the region has them, the custom resource elsewhere."""
    if choice != "auto":
        return choice
    return "native" if has_native_types(region) else "custom-resource"
