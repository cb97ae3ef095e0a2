"""How a person reaches the cluster: the commands a team member runs, written once.

The capacity stack's outputs, ``explain`` and ``hyperpod-gov onboard`` print these same strings.
"""

from __future__ import annotations

from typing import Optional

from .model import Plan

def kubeconfig_command(plan: Plan, *, role_arn: Optional[str] = None) -> str:
    """``aws eks update-kubeconfig`` for the plan's EKS cluster (``role_arn``: the role to assume for it)."""
    cmd = f"aws eks update-kubeconfig --region {plan.region} --name {plan.eks_cluster_name}"
    return cmd + (f" --role-arn {role_arn}" if role_arn else "")


def hyperpod_context_command(plan: Plan, namespace: Optional[str] = None) -> str:
    """The HyperPod CLI's ``hyp set-cluster-context`` for the plan's HyperPod cluster (and a team namespace)."""
    cmd = f"hyp set-cluster-context --cluster-name {plan.cluster_name} --region {plan.region}"
    return cmd + (f" --namespace {namespace}" if namespace else "")
