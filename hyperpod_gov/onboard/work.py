"""Where a team's work goes and what it may use: its namespace, queue, priority classes and quota, one first job
per kind it may create, and how to watch a job and read why it waits or was preempted."""

from __future__ import annotations

from ..plan import Plan, TeamPlan
from ..plan.access import SPACE_POLICY, SPACE_TEMPLATES_NAMESPACE
from ..plan.names import QUEUE_LABEL
from ..plan.workloads import APPS, INFERENCE_ENDPOINT, INTERACTIVE, PRIORITY_LABEL, WorkloadKind, approved, kinds_for
from .document import Block, Code, CodeBlock, Heading, Para, Table, Text, codes, text
from .jobs import (
    ACCELERATORS_PER_POD, SIZED_BY_OPERATOR, FirstJob, Placement, example_kinds, example_priority, first_job,
    counted, placement, placements, plain_yaml, topology_request,
)

# The HyperPod CLI's resource word and name option per kind it knows (sagemaker-hyperpod 3.9.0); other kinds are
# watched with kubectl alone.
HYP_RESOURCES: dict[str, tuple[str, str]] = {
    "HyperPodPyTorchJob": ("hyp-pytorch-job", "--job-name"),
    INFERENCE_ENDPOINT: ("hyp-custom-endpoint", "--name"),
    "JumpStartModel": ("hyp-jumpstart-endpoint", "--name"),
    "Workspace": ("hyp-space", "--name"),
}


def _node(p: Placement) -> str:
    memory = f"{p.vcpu_per_node} vCPU, {p.memory_gib_per_node} GiB"
    return memory if p.resource is None else f"{counted(p.per_node, p.unit)} ({p.resource}), {memory}"


def _borrowing(team: TeamPlan, p: Placement) -> str:
    if p.borrow:
        return f"up to {counted(p.borrow, p.unit)} of other teams' idle quota"
    if team.strategy == "LendAndBorrow" and not team.idle_resource_sharing:
        return "nothing (the cluster shares no idle quota)"
    return f"nothing (sharing: {team.strategy})"


def where(plan: Plan, team: TeamPlan) -> list[Block]:
    blocks: list[Block] = [
        Heading(2, "5. Where your work goes"),
        Table(("", ""), (
            (text("Namespace"), text(Code(team.namespace))),
            (text("LocalQueue (label ", Code(QUEUE_LABEL), ")"), text(Code(team.local_queue))),
            (text("Priority classes (label ", Code(PRIORITY_LABEL), ")"), codes(team.kueue_priority_classes)),
        )),
    ]
    allowed = set(team.kueue_priority_classes)
    classes = sorted((p for p in plan.priority_classes if p.kueue_name in allowed), key=lambda p: (-p.weight, p.name))
    if classes:
        blocks.append(Table(("Priority class", "Weight"), tuple((text(Code(p.kueue_name)), text(str(p.weight)))
                                                               for p in classes)))
    blocks.append(Para(text("Work without a priority class label is refused (", Code("teams[].requirePriority"), ").")
                       if team.require_priority else
                       text("Work without a priority class label gets the lowest priority of all.")))
    if not team.active:
        blocks.append(Para(text("The team is paused (", Code("teams[].active: false"), "): Kueue admits none of its "
                                "new work; what runs keeps running.")))
    found = placements(plan, team)
    if not found:
        return blocks + [Para(text("The team holds no quota on any instance type and may borrow none: its work "
                                   "waits (Pending) until the platform team gives it quota."))]
    lends = ("nothing: its quota stays its own" if not team.can_lend
             else "its idle quota, taken back (preempting the borrower) when its own work needs it")
    blocks += [Para(text(f"Quota (Kueue admits the team's work against it; the team lends {lends}):")),
               Table(("Instance type", "One node", "Your quota", "You may borrow"), tuple(
                   (text(Code(p.instance_type)), text(_node(p)), text(counted(p.nominal, p.unit)),
                    text(_borrowing(team, p))) for p in found))]
    for d in team.dedicated:
        blocks.append(Para(text(f"Dedicated to the team: {d.instances} x ", Code(d.instance_type), " (",
                                *codes(d.groups), ")")))
    return blocks


def _job_words(job: FirstJob, where_to: Placement | None) -> Text:
    if where_to is None:
        return text(f"Placed nowhere yet: {job.why_none}; the API server accepts it, but it waits (Pending).")
    on = text(" on ", Code(where_to.instance_type))
    if job.kind.kind in SIZED_BY_OPERATOR:
        return text("Runs", *on, "; the operator sizes its pods from the model's configuration for that type (the "
                    "model must support it).")
    if job.accelerators:
        return text(f"Asks for {counted(job.accelerators, where_to.unit)} ({ACCELERATORS_PER_POD} ",
                    Code(str(where_to.resource)), " per computing pod)", *on, ".")
    if job.why_none:
        return text(f"Asks for no accelerator ({job.why_none})", *on, ".")
    return text("Asks for no accelerator (the kind has no instance type or pod template to set one on); Kueue "
                "admits it against your quota.")


def first_jobs(plan: Plan, team: TeamPlan) -> list[Block]:
    kinds = kinds_for(team)
    shown = example_kinds(plan, team)
    p = placement(plan, team)
    blocks: list[Block] = [Heading(2, "6. Your first job"), Para(text(f"Approved work: {', '.join(approved(team))}."))]
    if not kinds:
        return blocks + [Para(text("None of the kinds this platform governs runs that work yet: ask the platform "
                                   "team."))]
    blocks.append(Table(("Kind", "apiVersion", "HyperPod CLI"), tuple(
        (text(k.kind), text(Code(k.api_version)),
         text(Code(HYP_RESOURCES[k.kind][0])) if k.kind in HYP_RESOURCES else text("kubectl only")) for k in kinds)))
    if INTERACTIVE in approved(team):
        blocks.append(Para(text("HyperPod spaces (", Code("hyp create hyp-space"), "): submitters' access entries "
                                "carry ", Code(SPACE_POLICY), " scoped to ", Code(team.namespace),
                                " and the template policy scoped to ", Code(SPACE_TEMPLATES_NAMESPACE), ".")))
    more = (f" For more: up to {p.per_node} per pod (one {p.instance_type} node), {p.nominal} for the whole team at "
            f"once" + (f", {p.admissible} while it borrows" if p.borrow else "") + "."
            if p is not None and p.resource is not None else "")
    blocks.append(Para(text(
        "Each manifest is admitted in ", Code(team.namespace), " as it stands (hyperpod-gov's tests run each one "
        "through the admission policies and the Role it generates for your team). Save one as ",
        Code("first-job.yaml"), " and run ", Code("kubectl apply -f first-job.yaml"), ". An accelerator request "
        "sets the limit equal to the request (admission requires it) and a nodeSelector on the instance type; a "
        "container without one sets ",
        Code("NVIDIA_VISIBLE_DEVICES: void"), " (admission requires that too)." + more)))
    request = topology_request(plan, p) if p is not None else {}
    if request:
        ((annotation, level),) = request.items()
        blocks.append(Para(text(
            "A job of several pods asks Kueue to place them close together on the network: each pod template "
            "carries ", Code(f"{annotation}: {level}"), " (they are admitted anyway when no single domain has room; ",
            Code(annotation.replace("preferred", "required")), " instead waits until one has). A job of one pod "
            "needs neither.")))
    for k in kinds:
        blocks.append(Heading(3, k.kind))
        if k not in shown:
            blocks.append(Para(text(
                "No example: an endpoint loads its model from an S3 prefix of the team's workload identities' grants ("
                , Code("teams[].workloadIdentities[].grants.s3"), ") or from the team's directory on the shared "
                "file system (", Code("cluster.sharedStorage"), "), and the team has neither yet: ask the platform "
                "team.")))
            continue
        job = first_job(plan, team, k)
        blocks += [Para(_job_words(job, p)), CodeBlock("yaml", plain_yaml(job.manifest))]
    return blocks


def _hyp_lines(team: TeamPlan, kinds: tuple[WorkloadKind, ...]) -> list[str]:
    lines = []
    for k in kinds:
        if k.kind in HYP_RESOURCES:
            word, option = HYP_RESOURCES[k.kind]
            lines += [f"hyp list {word} --namespace {team.namespace}",
                      f"hyp describe {word} {option} hello --namespace {team.namespace}"]
    return lines


def watch(plan: Plan, team: TeamPlan) -> list[Block]:
    ns = team.namespace
    p = placement(plan, team)
    lowest = example_priority(plan, team)
    # the first kind whose own pod templates Kueue queues (the operators' kinds are queued through what they make)
    first = next((k.kind.lower() for k in kinds_for(team) if (APPS, "Deployment") not in k.creates),
                 "job")
    lines = [f"kubectl get workloads --namespace {ns}",
             f"kubectl describe workload --namespace {ns} <name>  # its conditions and events say why",
             f"kubectl get pods --namespace {ns}",
             f"kubectl get events --namespace {ns} --sort-by=.lastTimestamp",
             *_hyp_lines(team, kinds_for(team))]
    if p is None:
        held = "the team holds no quota, so nothing of its own is ever admitted"
    else:
        held = (f"the team's {counted(p.nominal, p.unit)} on {p.instance_type} are held by its own admitted work"
                + (f" and the idle quota it may borrow (up to {counted(p.borrow, p.unit)}) is in use"
                   if p.borrow else " (it borrows nothing)")
                + f", or a pod asks for more than one node has ({counted(p.per_node, p.unit)})")
    own = (text("its own team never (", Code("preemptTeamTasks: Never"), ")")
           if team.preempt_team_tasks == "Never" else
           text(Code("InClusterQueue"), ": a job of its own team with a higher priority class took its place (",
                Code(f"preemptTeamTasks: {team.preempt_team_tasks}"), ")",
                *((f"; {lowest}, the examples' class, is the lowest",) if lowest else ())))
    others = (text(Code("InCohortReclamation"), " or ", Code("InCohortFairSharing"), ": it ran on borrowed quota "
                   "and the lending team took it back; work within the team's own quota is never taken by another "
                   "team") if team.can_borrow else
              text("other teams never: the team borrows nothing, so all its admitted work runs on its own quota"))
    return [
        Heading(2, "7. Watch it, and find out why it waits"),
        CodeBlock("bash", "\n".join(lines)),
        Para(text("A workload is named after the kind Kueue queues, in lower case, and the object's name, then a "
                  "hash (", Code(f"{first}-hello-"), "...); an endpoint's or a space's is named after what its "
                  "operator creates. What its conditions mean for team ", team.name, ":")),
        Table(("Condition", "Means"), (
            (text("Pending (", Code("QuotaReserved"), " False)"),
             text(f"Waiting for quota: {held}. The message names the resource and type that lack room. Waiting work "
                  "is admitted in priority order.")),
            (text(Code("QuotaReserved")), text("Kueue counted it against the team's quota (or borrowed quota) and "
                                                "runs its admission checks.")),
            (text(Code("Admitted")), text("Its pods are created and scheduled: ", Code(f"kubectl get pods -n {ns}"),
                                          ".")),
            (text(Code("Evicted"), " / ", Code("Preempted")),
             text("The reason says who: ", *own, "; ", *others, "; ", Code("PodsReadyTimeout"),
                  ": its pods did not all start in time and it is requeued.")),
        )),
    ]
