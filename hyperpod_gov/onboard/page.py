"""``hyperpod-gov onboard SPEC TEAM``: the page that takes a new team member from a laptop to a running job, from
the plan alone, as Markdown or as one HTML document.

Commands come from ``plan/connect.py`` (the stack outputs and ``explain`` print the same strings), kinds and their
manifests from ``plan/workloads.py`` (the table RBAC and admission read), so the page cannot name a command, a
label or a kind the platform does not accept. The sections: ``reach.py`` (tools, role, network, kubeconfig),
``work.py`` (queue and quota, first jobs, watching them) and this module (data, whom to ask).
"""

from __future__ import annotations

from ..plan import Plan, TeamPlan
from ..plan.connect import hyperpod_context_command, kubeconfig_command
from ..plan.workloads import INFERENCE_ENDPOINT, PRIORITY_LABEL, WorkloadKind, approved, kinds_for
from ..spec import SpecError, SpecIssue
from . import reach, work
from .document import Block, Bullets, Code, CodeBlock, Heading, Para, Table, Text, text, to_html, to_markdown
from .jobs import example_kinds, example_model_source, example_priority, first_job, plain_yaml


def onboarding_team(plan: Plan, name: str) -> TeamPlan:
    """The team called ``name``; a ``SpecError`` naming every team otherwise."""
    teams = {t.name: t for t in plan.tenants}
    if name not in teams:
        raise SpecError([SpecIssue("TEAM", "is not a team of the spec", name,
                                   f"use one of: {', '.join(sorted(teams)) or '(the spec has no teams)'}")])
    return teams[name]


def _s3(bucket: str, prefix: str) -> str:
    return f"s3://{bucket}/{prefix}"


def data(plan: Plan, team: TeamPlan) -> list[Block]:
    items: list[Text] = []
    if team.storage is not None:
        items.append(text("Team bucket ", Code(_s3(team.storage.bucket, "")), ": the team's submitters and "
                          "workload identities read and write it, nobody else (its own KMS key)."))
    for i in team.identities:
        grants: list[Text] = [text(Code(_s3(a.bucket, a.prefix)), f" ({a.access})") for a in i.grants.s3]
        if i.created_target is not None:
            grants += [text(Code(_s3(a.bucket, a.prefix)), f" ({a.access}, through ", Code(str(i.target_role_arn)),
                            ")") for a in i.created_target.s3]
        elif i.target_role_arn:
            grants.append(text("what ", Code(i.target_role_arn), " may reach (it assumes that role)"))
        reach_words: list = []
        for n, g in enumerate(grants):
            reach_words += ([", "] if n else []) + list(g)
        items.append(text("Pods with ", Code(f"serviceAccountName: {i.service_account}"), " run as ",
                          Code(i.source_role_arn), *((": ", *reach_words) if reach_words else ()), "."))
    storage = plan.shared_storage
    volume = storage.volume(team.name) if storage is not None else None
    if volume is not None:
        items.append(text("Shared file system: the PersistentVolumeClaim ", Code(volume.claim), " in ",
                          Code(team.namespace), " is the team's directory ", Code(volume.directory),
                          f" ({volume.capacity_gib} GiB); mount it with ",
                          Code(f"persistentVolumeClaim: {{claimName: {volume.claim}}}"), "."))
    blocks: list[Block] = [Heading(2, "8. Your data")]
    if not items:
        return blocks + [Para(text("The team has no data grants, bucket or shared directory yet: ask the platform "
                                   "team."))]
    return blocks + [Bullets(tuple(items))]


def support(plan: Plan, team: TeamPlan) -> list[Block]:
    c = team.contract
    blocks: list[Block] = [Heading(2, "9. Whom to ask")]
    if c is None:
        return blocks + [Para(text("The team has no contract: ask the platform team (the cluster's admins).")),]
    rows = [(text(what), text(value)) for what, value in (
        ("Support", c.support), ("Operations owner", c.operations_owner), ("Business owner", c.business_owner),
        ("Monitoring", c.monitoring)) if value]
    return blocks + [Table(("", ""), tuple(rows))]


def onboarding_blocks(plan: Plan, team: TeamPlan) -> list[Block]:
    """The page of one team as blocks (``render_onboarding`` and ``render_onboarding_html`` write them)."""
    if plan.slurm is not None:
        return _slurm_blocks(plan, team)
    blocks: list[Block] = [
        Heading(1, f"Onboarding: team {team.name}"),
        Para(text(f"HyperPod cluster {plan.cluster_name} (EKS {plan.eks_cluster_name}, Kubernetes "
                  f"{plan.cluster.kubernetes_version}, {plan.region}, account {plan.account}; {plan.mode} mode).")),
    ]
    if plan.contracts.is_retiring(team.name):
        blocks.append(Para(text("The team is retiring: its principals get no access entries any more.")))
    for section in (reach.install, reach.role, reach.network, reach.connect, work.where, work.first_jobs,
                    work.watch, data, support):
        blocks += section(plan, team)
    return blocks


def render_onboarding(plan: Plan, team: TeamPlan) -> str:
    """The onboarding page of one team (Markdown)."""
    return to_markdown(onboarding_blocks(plan, team))


def render_onboarding_html(plan: Plan, team: TeamPlan) -> str:
    """The onboarding page of one team (one self-contained HTML document)."""
    return to_html(onboarding_blocks(plan, team))


def _slurm_blocks(plan: Plan, team: TeamPlan) -> list[Block]:
    """A Slurm-orchestrated cluster: the page as it was before the laptop-to-job sections, unchanged (issue 56 leaves
    Slurm onboarding as it stands)."""
    people = reach.principals(plan, team)
    blocks: list[Block] = [Heading(1, f"Onboarding: team {team.name}"),
                           Para(text("HyperPod cluster ", Code(plan.cluster_name), " (EKS ",
                                     Code(plan.eks_cluster_name), f", {plan.region}).")),]
    if plan.contracts.is_retiring(team.name):
        blocks.append(Para(text("The team is retiring: its principals get no access entries any more.")))
    blocks.append(Heading(2, "1. The role to assume"))
    if people:
        blocks.append(Table(("Principal", "May"), tuple(
            (text(Code(p.arn)), text("submit and manage the team's work" if p.submits else "view the team's work"))
            for p in sorted(people, key=lambda p: p.arn))))
    else:
        blocks.append(Para(text("Nobody yet: ask the platform team to add you to ", Code("access.submitters"),
                                " or ", Code("access.viewers"), ".")))
    roles = sorted(p.arn for p in people if ":role/" in p.arn)
    blocks += [Heading(2, "2. Connect"), CodeBlock("bash", "\n".join(
        [kubeconfig_command(plan, role_arn=arn) for arn in roles] or [kubeconfig_command(plan)])
        + "\n" + hyperpod_context_command(plan, team.namespace)),
        Para(text("Run the kubeconfig command with the role you were given; the HyperPod CLI context command pins "
                  "the team namespace (without it ", Code("hyp"), " looks in ", Code("default"), ")."))]
    blocks += [Heading(2, "3. Where your work goes"), work.where(plan, team)[1]]
    kinds = kinds_for(team)
    blocks += [Heading(2, "4. What you may create"), Para(text(f"Approved work: {', '.join(approved(team))}.")),
               Table(("Kind", "apiVersion"), tuple((text(k.kind), text(Code(k.api_version))) for k in kinds))
               if kinds else Para(text("None of the kinds this platform governs runs that work yet: ask the platform "
                                       "team."))]
    if kinds:
        blocks += [Heading(2, "5. Example manifests"),
                   Para(text("Each is admitted in the team namespace as it stands; ", Code("kubectl apply -f"),
                             " it. A container that requests no GPU sets ", Code("NVIDIA_VISIBLE_DEVICES: void"),
                             " (admission requires it)."))]
    shown = example_kinds(plan, team)
    for k in kinds:
        blocks.append(Heading(3, k.kind))
        if k not in shown:
            blocks.append(Para(text(
                "No example: an endpoint loads its model from an S3 prefix of the team's workload identities' "
                "grants (", Code("teams[].workloadIdentities[].grants.s3"), ") or from the team's directory on the "
                "shared file system (", Code("cluster.sharedStorage"), "), and the team has neither yet: ask the "
                "platform team.")))
            continue
        blocks.append(CodeBlock("yaml", _slurm_manifest(plan, team, k)))
    return blocks


def _slurm_manifest(plan: Plan, team: TeamPlan, kind: WorkloadKind) -> str:
    priority = example_priority(plan, team)
    manifest = {"apiVersion": kind.api_version, "kind": kind.kind,
                **kind.example(team.namespace, team.local_queue, priority or "")}
    if priority is None:
        manifest["metadata"]["labels"].pop(PRIORITY_LABEL, None)
    source = example_model_source(plan, team)
    if kind.kind == INFERENCE_ENDPOINT and source is not None:
        manifest["spec"]["modelSourceConfig"] = source
    return plain_yaml(manifest)


__all__ = ["first_job", "onboarding_blocks", "onboarding_team", "render_onboarding", "render_onboarding_html"]
