"""``hyperpod-gov onboard SPEC TEAM``: the page a new team member needs, in Markdown, from the plan alone.

The commands come from ``plan/connect.py`` (the stack outputs and ``explain`` print the same strings), the kinds
and their example manifests from ``plan/workloads.py`` (the table RBAC and admission read), so the page cannot
name a command, a label or a kind the platform does not accept.
"""

from __future__ import annotations

from typing import Any

import yaml

from .plan import Plan, TeamPlan
from .plan.access import SPACE_POLICY, SPACE_TEMPLATES_NAMESPACE
from .plan.connect import hyperpod_context_command, kubeconfig_command
from .plan.names import QUEUE_LABEL
from .plan.storage import PLACEHOLDERS
from .plan.workloads import INFERENCE_ENDPOINT, INTERACTIVE, WorkloadKind, approved, kinds_for, model_sources
from .spec import SpecError, SpecIssue

PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


def onboarding_team(plan: Plan, name: str) -> TeamPlan:
    """The team called ``name``; a ``SpecError`` naming every team otherwise."""
    teams = {t.name: t for t in plan.tenants}
    if name not in teams:
        raise SpecError([SpecIssue("TEAM", "is not a team of the spec", name,
                                   f"use one of: {', '.join(sorted(teams)) or '(the spec has no teams)'}")])
    return teams[name]


def example_priority(plan: Plan, team: TeamPlan) -> str | None:
    """The allowed priority class the examples use: the lowest weight (the least disruptive), then by name."""
    allowed = set(team.kueue_priority_classes)
    classes = sorted((p for p in plan.priority_classes if p.kueue_name in allowed), key=lambda p: (p.weight, p.name))
    return classes[0].kueue_name if classes else None


def example_model_source(plan: Plan, team: TeamPlan) -> dict[str, Any] | None:
    """An InferenceEndpointConfig ``spec.modelSourceConfig`` the team may use: its first S3 grant, else its
    directory on the shared file system (when the file system's id is known before deploy); None: it has neither."""
    sources = model_sources(team)
    if sources.s3:
        bucket, prefix = sources.s3[0]
        return {"modelSourceType": "s3", "modelLocation": f"{prefix}models/hello",
                "s3Storage": {"bucketName": bucket, "region": plan.region}}
    storage = plan.shared_storage
    if sources.fsx_directory is not None and storage is not None \
            and storage.file_system.file_system_id not in PLACEHOLDERS.values():
        return {"modelSourceType": "fsx", "modelLocation": f"{sources.fsx_directory.lstrip('/')}/models/hello",
                "fsxStorage": {"fileSystemId": storage.file_system.file_system_id}}
    return None


def example_kinds(plan: Plan, team: TeamPlan) -> tuple[WorkloadKind, ...]:
    """The kinds the page prints a manifest of: those the team may create, an InferenceEndpointConfig only with a
    model source the team may use (admission refuses any other)."""
    return tuple(k for k in kinds_for(team)
                 if k.kind != INFERENCE_ENDPOINT or example_model_source(plan, team) is not None)


def example_manifest(kind: WorkloadKind, team: TeamPlan, priority: str | None,
                     model_source: dict[str, Any] | None = None) -> dict[str, Any]:
    """The kind's minimal manifest for the team's namespace and LocalQueue (no priority label without one), with
    ``model_source`` as an InferenceEndpointConfig's ``spec.modelSourceConfig``."""
    body = kind.example(team.namespace, team.local_queue, priority or "")
    manifest = {"apiVersion": kind.api_version, "kind": kind.kind, **body}
    if priority is None:
        manifest["metadata"]["labels"].pop(PRIORITY_LABEL, None)
    if kind.kind == INFERENCE_ENDPOINT and model_source is not None:
        manifest["spec"]["modelSourceConfig"] = model_source
    return manifest


def _roles(plan: Plan, team: TeamPlan) -> list[tuple[str, str]]:
    """(principal ARN, what it may do) of the principals with an access entry onto the team's groups."""
    out = []
    for p in plan.principals:
        if team.name not in p.teams:
            continue
        what = "submit and manage the team's work" if team.submitters_group in p.groups else "view the team's work"
        out.append((p.principal_arn, what))
    return out


def render_onboarding(plan: Plan, team: TeamPlan) -> str:
    """The onboarding page of one team (Markdown)."""
    roles = _roles(plan, team)
    priority = example_priority(plan, team)
    kinds = kinds_for(team)
    lines = [f"# Onboarding: team {team.name}", "",
             f"HyperPod cluster `{plan.cluster_name}` (EKS `{plan.eks_cluster_name}`, {plan.region}).", ""]
    if plan.contracts.is_retiring(team.name):
        lines += ["**The team is retiring:** its principals get no access entries any more.", ""]
    lines += ["## 1. The role to assume", ""]
    if roles:
        lines += ["| Principal | May |", "|---|---|", *(f"| `{arn}` | {what} |" for arn, what in roles), ""]
    else:
        lines += ["Nobody yet: ask the platform team to add you to `access.submitters` or `access.viewers`.", ""]
    lines += ["## 2. Connect", "", "```bash"]
    role_arns = [arn for arn, _ in roles if ":role/" in arn]
    lines += [kubeconfig_command(plan, role_arn=arn) for arn in role_arns] or [kubeconfig_command(plan)]
    lines += [hyperpod_context_command(plan, team.namespace), "```", "",
              "Run the kubeconfig command with the role you were given; the HyperPod CLI context command pins the "
              "team namespace (without it `hyp` looks in `default`).", ""]
    labels = team.kueue_priority_classes
    lines += ["## 3. Where your work goes", "",
              "| | |", "|---|---|",
              f"| Namespace | `{team.namespace}` |",
              f"| LocalQueue (label `{QUEUE_LABEL}`) | `{team.local_queue}` |",
              f"| Priority classes (label `{PRIORITY_LABEL}`) | "
              f"{', '.join(f'`{p}`' for p in labels) if labels else 'none'} |", ""]
    lines += ["## 4. What you may create", "",
              f"Approved work: {', '.join(approved(team))}.", "",
              *(["| Kind | apiVersion |", "|---|---|", *(f"| {k.kind} | `{k.api_version}` |" for k in kinds)]
                if kinds else ["None of the kinds this platform governs runs that work yet: ask the platform "
                               "team."]), ""]
    if INTERACTIVE in approved(team):
        lines += [f"HyperPod spaces (`hyp create hyp-space`): submitters' access entries carry `{SPACE_POLICY}` "
                  f"scoped to `{team.namespace}` and the template policy scoped to `{SPACE_TEMPLATES_NAMESPACE}`.", ""]
    if kinds:
        lines += ["## 5. Example manifests", "",
                  "Each is admitted in the team namespace as it stands; `kubectl apply -f` it. A container that "
                  "requests no GPU sets `NVIDIA_VISIBLE_DEVICES: void` (admission requires it).", ""]
    source = example_model_source(plan, team)
    for k in kinds:
        if k not in example_kinds(plan, team):
            lines += [f"### {k.kind}", "",
                      "No example: an endpoint loads its model from an S3 prefix of the team's workload identities' "
                      "grants (`teams[].workloadIdentities[].grants.s3`) or from the team's directory on the shared "
                      "file system (`cluster.sharedStorage`), and the team has neither yet: ask the platform team.", ""]
            continue
        lines += [f"### {k.kind}", "", "```yaml",
                  yaml.safe_dump(example_manifest(k, team, priority, source), sort_keys=False).rstrip(), "```", ""]
    return "\n".join(lines)
