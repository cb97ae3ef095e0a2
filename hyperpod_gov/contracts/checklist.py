"""The connection checklist: every field the governance guidance asks a reviewer to record before approving a
connection, with its value from the plan or marked missing (the contract record's first section).

The guidance records "the capacity account, any consumer or data accounts, the region, the network path,
identities, owners, workload boundaries and isolation requirements"; for a Unified Studio connection also the
domain unit and project, the project role and the connection's access role; on a Slurm cluster also the Studio
task view (AWS: "Restrict task view in Studio for Slurm clusters"). Pure functions of the plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..plan import Plan, TeamPlan
from ..plan.slurm_task_view import task_view
from ..plan.words import owns
from ..spec.contract import CONSOLE_ONLY, LOGIN_NODES

NO_STUDIO = "not applicable: no Unified Studio project"


@dataclass(frozen=True)
class ConnectionField:
    """One field of the checklist: its label and its value in words (None: missing, the record flags it)."""

    label: str
    value: Optional[str]


def _orchestrator(plan: Plan) -> str:
    if plan.slurm is not None:
        return f"Slurm (SlurmConfigStrategy {plan.slurm.config_strategy})"
    return "Amazon EKS, " + ("HyperPod task governance" if plan.task_governance else "Kueue")


def _scope(plan: Plan, team: TeamPlan) -> ConnectionField:
    if plan.slurm is None:
        return ConnectionField("Namespace", f"`{team.namespace}`")
    st = team.slurm
    if st is None:
        return ConnectionField("Slurm scope", None)
    parts = ", ".join(f"`{p}`" for p in st.partitions) or "none"
    return ConnectionField("Slurm scope", f"account `{st.account}` (group `{st.group}`), partitions {parts}")


def _scheduling(plan: Plan, team: TeamPlan) -> str:
    classes = ", ".join(team.priority_classes) or "none"
    return f"owns {owns(team)}; sharing {team.strategy}; priority classes {classes}"


def isolation_words(plan: Plan, team: TeamPlan) -> Optional[str]:
    """The team's isolation in words: the contract's value, whether the spec states it, and where it holds."""
    c = team.contract
    if c is None:
        return None
    if c.isolation == "dedicated-nodes":
        if plan.slurm is not None:
            where = [f"`{p.name}`" for p in plan.slurm.partitions if p.dedicated_to == team.name]
            return "dedicated-nodes: partitions " + (", ".join(where) or "none") + " admit only the team's accounts"
        groups = sorted(g for d in team.dedicated for g in d.groups)
        return ("dedicated-nodes: its work runs only on instance groups " + (", ".join(groups) or "none")
                + " (dedicatedTo the team; HPG-C006)")
    if c.isolation == "dedicated-cluster":
        return "dedicated-cluster: the only team of the cluster (HPG-C007)"
    return "shared: the team's work shares nodes with other teams' work" + (
        "" if c.states_isolation else " (the default: the contract does not state it)")


def network_words(plan: Plan, team: TeamPlan) -> Optional[str]:
    """How the team's members reach the cluster, in words (None: the contract does not say)."""
    path = team.contract.network_path if team.contract else None
    if path is None:
        return None
    if path == CONSOLE_ONLY:
        return "console-only: the SageMaker console and Unified Studio, never the cluster from their own network"
    if path == LOGIN_NODES:
        return "login-nodes: SSM sessions to the cluster's login nodes"
    source = next((s for s in plan.cluster.api_access if s.value == path), None)
    if source is not None:
        return f"private endpoint on 443 from {source.words} (cluster.apiAccess)"
    if path in plan.cluster.admin_cidrs:
        return f"public endpoint from {path} (cluster.adminCidrs)"
    return f"{path} (not checked: the existing cluster's network is managed outside this spec)"


def task_view_words(plan: Plan, team: TeamPlan) -> Optional[str]:
    """On a Slurm cluster, the team's Studio task view in words (None: the team is in Studio and the spec leaves
    the restriction incomplete, which the record flags); nothing to record on EKS."""
    if plan.slurm is None or team.slurm is None:
        return None
    view = task_view(plan.slurm, team.slurm, team.contract)
    return view.words() if view.complete or not view.in_studio else None


def _account(arn: Optional[str]) -> Optional[str]:
    parts = (arn or "").split(":")
    return parts[4] if len(parts) > 5 and parts[4] else None


def connection_fields(plan: Plan, team: TeamPlan) -> tuple[ConnectionField, ...]:
    """Every field of the guidance's connection checklist for ``team``, in the guidance's order."""
    c = team.contract
    us = c.unified_studio if c else None

    def studio(value: Optional[str]) -> Optional[str]:
        return value if us is not None else NO_STUDIO

    access_role: Optional[str] = None
    if us is not None:
        account = us.account or us.role_account
        access_role = us.access_role_arn or (
            "not needed: the domain is in the capacity account" if account == plan.account else None)
    consumers = sorted({account for i in team.identities for account in (i.consumer_account, _account(
        i.target_role_arn)) if account and account != plan.account})
    fields = (
        ConnectionField("Owners", c and f"business {c.business_owner}, operations {c.operations_owner}, "
                        f"cost {c.cost_owner}"),
        ConnectionField("Unified Studio domain unit", studio(us and (us.domain_unit_id or us.domain_unit))),
        ConnectionField("Unified Studio project", studio(us and f"{us.project_label} (domain {us.domain_id})")),
        ConnectionField("Cluster account and region", f"{plan.account}, {plan.region}"),
        ConnectionField("Cluster", plan.cluster_name),
        ConnectionField("Orchestrator", _orchestrator(plan)),
        ConnectionField("Project role ARN", studio(us and us.project_role_arn)),
        ConnectionField("Connection access role ARN", studio(access_role)),
        ConnectionField("Consumer or data accounts", ", ".join(consumers) or "none"),
        ConnectionField("Approved workloads", c and (", ".join(c.approved_workloads) or None)),
        ConnectionField("Data classification", c and c.data_classification),
        _scope(plan, team),
        ConnectionField("Scheduling policy", _scheduling(plan, team)),
        ConnectionField("Exception owner", c and c.exception_owner),
        ConnectionField("Monitoring expectations", c and c.monitoring),
        ConnectionField("Support expectations", c and c.support),
        ConnectionField("Retirement expectations", c and c.retirement),
        ConnectionField("Isolation", isolation_words(plan, team)),
        ConnectionField("Network path", network_words(plan, team)),
    )
    if plan.slurm is not None and team.slurm is not None:
        fields += (ConnectionField("Studio task view", task_view_words(plan, team)),)
    return fields


def missing(fields: tuple[ConnectionField, ...]) -> tuple[str, ...]:
    """The labels of the fields the contract leaves out, in checklist order."""
    return tuple(f.label for f in fields if f.value is None)
