"""The first job of each kind a team may create: on an instance type its quota covers, asking for accelerators one
node has and the team may be admitted with, labelled with its LocalQueue and a priority class it may use, written
as plain YAML (no anchors or aliases).

Kinds and their minimal manifests come from ``plan/workloads.py`` (``WORKLOAD_KINDS``); what is done to them here
is generic: every pod template (a ``template`` mapping whose ``spec`` has ``containers``) gets a nodeSelector on the
chosen instance type, and the pods that do the work get the accelerators. Only what is not a pod template is set
per kind (``_KIND_TWEAKS``: the inference kinds' ``instanceType``, the endpoint's worker and model source).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

import yaml

from ..plan import Plan, TeamPlan
from ..plan.names import INSTANCE_TYPE_LABEL  # HyperPod labels every node with its ml.* type; the flavors select on it
from ..plan.kueue import topology_for
from ..plan.quotas import FlavorQuota
from ..plan.scheduling import podset_topology_annotations
from ..plan.storage import PLACEHOLDERS
from ..plan.workloads import (
    INFERENCE_ENDPOINT, PRIORITY_LABEL, VISIBLE_DEVICES, WorkloadKind, kinds_for, model_sources, no_gpu_env,
)

# Pod templates that coordinate rather than compute, by the key that holds them (MPI's launcher, Ray's head and its
# job submitter): they get no accelerator. Any other pod template of a kind gets one per pod.
COORDINATOR_KEYS = frozenset({"Launcher", "headGroupSpec", "submitterPodTemplate"})
ACCELERATORS_PER_POD = 1  # the smallest request that shows how to ask for one


@dataclass(frozen=True)
class Placement:
    """Where a team's first jobs go: one instance type of its quota, and what one node and the team hold there."""

    instance_type: str
    resource: Optional[str]  # the accelerator resource asked for (nvidia.com/gpu, a MIG partition); None: CPU only
    unit: str  # what the team's quota on the type is counted in: "GPUs", "partitions", "devices" or "vCPU"
    per_node: int  # accelerators (or partitions) one node of the type has; vCPU for a CPU type
    nominal: int  # the team's own quota, in ``unit``
    borrow: int  # the most it may borrow on top, in ``unit`` (0: it borrows nothing)
    vcpu_per_node: int
    memory_gib_per_node: int

    @property
    def admissible(self) -> int:
        return self.nominal + self.borrow


def counted(n: int, unit: str) -> str:
    """``n`` of a plural ``unit`` ("1 GPU", "8 GPUs"; vCPU has no plural)."""
    return f"{n} {unit[:-1] if n == 1 and unit.endswith('s') else unit}"


def _unit(q: FlavorQuota) -> str:
    if q.mig_resource:
        return "partitions"
    if q.accelerator_kind == "nvidia.com/gpu":
        return "GPUs"
    return "devices" if q.accelerator_kind else "vCPU"


def placements(plan: Plan, team: TeamPlan) -> tuple[Placement, ...]:
    """Every instance type the team may be admitted on (its own quota or a borrowing limit), accelerated types
    first, then the largest quota, then by name."""
    out = []
    for q in team.flavors:
        nominal = q.governed(q.nominal)
        borrow = q.governed(q.borrowing_limit) if q.borrowing_limit is not None and team.can_borrow else 0
        if nominal + borrow == 0:
            continue
        per = plan.flavor(q.instance_type).per_instance
        out.append(Placement(q.instance_type, q.governed_resource if q.governed_resource != "cpu" else None,
                             _unit(q), q.governed(per), nominal, borrow, per.vcpu, per.memory_gib))
    return tuple(sorted(out, key=lambda p: (p.resource is None, -p.nominal, -p.borrow, p.instance_type)))


def placement(plan: Plan, team: TeamPlan) -> Optional[Placement]:
    """The instance type the first jobs use; None: the team may be admitted nowhere (no quota, no borrowing)."""
    found = placements(plan, team)
    return found[0] if found else None


def example_priority(plan: Plan, team: TeamPlan) -> Optional[str]:
    """The allowed priority class the examples use: the lowest weight (the least disruptive), then by name."""
    allowed = set(team.kueue_priority_classes)
    classes = sorted((p for p in plan.priority_classes if p.kueue_name in allowed), key=lambda p: (p.weight, p.name))
    return classes[0].kueue_name if classes else None


def example_model_source(plan: Plan, team: TeamPlan) -> Optional[dict[str, Any]]:
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


# --- pod templates ---------------------------------------------------------------------------------------------------
@dataclass
class PodTemplate:
    """One pod template of a manifest: the mapping (``metadata`` and ``spec``), how many pods it makes, and whether
    it computes (a coordinator, ``COORDINATOR_KEYS``, does not)."""

    template: dict[str, Any]
    replicas: int
    computes: bool


def pod_templates(manifest: dict[str, Any]) -> Iterator[PodTemplate]:
    """Every pod template of ``manifest``, in document order (the mappings themselves: changing one changes the
    manifest). This is where annotations on each pod template, such as topology requests, are added."""
    def walk(node: Any, keys: tuple[str, ...], parent: Optional[dict[str, Any]]) -> Iterator[PodTemplate]:
        if isinstance(node, dict):
            spec = node.get("spec")
            if keys and keys[-1] == "template" and isinstance(spec, dict) and isinstance(spec.get("containers"), list):
                replicas = parent.get("replicas", 1) if parent is not None else 1
                yield PodTemplate(node, replicas if isinstance(replicas, int) else 1,
                                  not COORDINATOR_KEYS.intersection(keys))
                return
            for k, v in node.items():
                yield from walk(v, (*keys, str(k)), node)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v, keys, parent)
    yield from walk(manifest, (), None)


def _ask(container: dict[str, Any], resource: str, count: int) -> None:
    """``count`` of ``resource`` as request and limit (admission requires them equal); an NVIDIA request drops the
    container's ``NVIDIA_VISIBLE_DEVICES: void`` (it would hide the GPU)."""
    resources = container.setdefault("resources", {})
    resources.setdefault("requests", {})[resource] = count
    resources.setdefault("limits", {})[resource] = count
    if resource.startswith("nvidia.com/"):
        if "command" in container:  # list the GPUs it got (the NVIDIA toolkit mounts nvidia-smi into the container)
            container["command"] = ["nvidia-smi", "-L"]
        for key in ("env", "environmentVariables"):
            kept = [e for e in container.get(key, []) if e.get("name") != VISIBLE_DEVICES]
            if kept:
                container[key] = kept
            else:
                container.pop(key, None)


def accelerated_pods(manifest: dict[str, Any]) -> int:
    """How many pods of ``manifest`` compute (each gets ``ACCELERATORS_PER_POD``)."""
    return sum(t.replicas for t in pod_templates(manifest) if t.computes)


def _place_pods(manifest: dict[str, Any], where: Placement, accelerate: bool) -> None:
    for t in pod_templates(manifest):
        t.template["spec"]["nodeSelector"] = {INSTANCE_TYPE_LABEL: where.instance_type}
        if accelerate and t.computes and where.resource is not None:
            _ask(t.template["spec"]["containers"][0], where.resource, ACCELERATORS_PER_POD)


def topology_request(plan: Plan, where: Placement) -> dict[str, str]:
    """The pod-set annotation a multi-node first job carries on ``where``'s instance type: Kueue's preferred
    topology at the innermost network level (scheduler.topology; plan/scheduling.py), or nothing when the spec sets
    no topology or the type's flavor is not topology-aware (plan/kueue.py ``topology_for``: Kueue would find no
    topology domain there, and a request would keep the job from being admitted)."""
    if topology_for(where.instance_type, where.resource is not None, plan.topology) is None:
        return {}
    return podset_topology_annotations(plan.topology)


def _ask_topology(manifest: dict[str, Any], request: dict[str, str]) -> None:
    """Each pod template of a job of more than one pod asks to be packed into one topology domain."""
    templates = list(pod_templates(manifest))
    if not request or sum(t.replicas for t in templates) < 2:
        return
    for t in templates:
        t.template.setdefault("metadata", {}).setdefault("annotations", {}).update(request)


# --- what is not a pod template, per kind ----------------------------------------------------------------------------
def _endpoint(manifest: dict[str, Any], where: Placement, accelerate: bool, source: Optional[dict[str, Any]]) -> None:
    spec = manifest["spec"]
    spec["instanceType"] = where.instance_type
    if source is not None:
        spec["modelSourceConfig"] = source
    worker = spec["worker"]
    # Half of one accelerator's share of the node (at least 1 vCPU and 1 GiB): it fits the node and the quota.
    share = max(where.per_node, 1) if where.resource is not None else 1
    worker["resources"] = {"requests": {"cpu": str(max(1, min(4, where.vcpu_per_node // share // 2))),
                                        "memory": f"{max(1, min(16, where.memory_gib_per_node // share // 2))}Gi"}}
    if accelerate and where.resource is not None:
        _ask(worker, where.resource, ACCELERATORS_PER_POD)
    if not (accelerate and where.resource is not None and where.resource.startswith("nvidia.com/")):
        worker["environmentVariables"] = [no_gpu_env()]


def _jumpstart(manifest: dict[str, Any], where: Placement, accelerate: bool, source: Optional[dict[str, Any]]) -> None:
    manifest["spec"]["server"]["instanceType"] = where.instance_type


Tweak = Callable[[dict[str, Any], Placement, bool, Optional[dict[str, Any]]], None]
_KIND_TWEAKS: dict[str, Tweak] = {INFERENCE_ENDPOINT: _endpoint, "JumpStartModel": _jumpstart}
# Computing pods a kind describes outside any pod template (an endpoint's worker: one pod per replica, one replica).
_PODS_OUTSIDE_TEMPLATES: dict[str, int] = {INFERENCE_ENDPOINT: 1}
# Kinds whose controller sizes the pods from the instance type alone: the page says so instead of a count.
SIZED_BY_OPERATOR = frozenset({"JumpStartModel"})


@dataclass(frozen=True)
class FirstJob:
    kind: WorkloadKind
    manifest: dict[str, Any]
    accelerators: int  # accelerators (or partitions) the manifest asks for in all; 0: none
    why_none: str = ""  # why a kind that could ask for accelerators does not


def first_job(plan: Plan, team: TeamPlan, kind: WorkloadKind) -> FirstJob:
    """The kind's first job for ``team``: its namespace, LocalQueue and example priority class, placed on
    ``placement``'s instance type with one accelerator per computing pod where the team's quota there covers them
    all (otherwise none, and ``why_none`` says why)."""
    priority = example_priority(plan, team)
    manifest = {"apiVersion": kind.api_version, "kind": kind.kind,
                **kind.example(team.namespace, team.local_queue, priority or "")}
    if priority is None:
        manifest["metadata"]["labels"].pop(PRIORITY_LABEL, None)
    where = placement(plan, team)
    if where is None:
        return FirstJob(kind, manifest, 0, "the team holds no quota and may borrow none")
    pods = accelerated_pods(manifest) + _PODS_OUTSIDE_TEMPLATES.get(kind.kind, 0)
    accelerate, why = where.resource is not None, ""
    if accelerate and (pods * ACCELERATORS_PER_POD > where.admissible or ACCELERATORS_PER_POD > where.per_node):
        accelerate, why = False, (f"its {pods} pods would need {counted(pods * ACCELERATORS_PER_POD, where.unit)} "
                                  f"on {where.instance_type}, more than the team may be admitted with "
                                  f"({where.admissible})")
    # Every change to the pod templates is made here, through pod_templates(manifest): the instance type, the
    # accelerators, and a multi-node job's topology request.
    _place_pods(manifest, where, accelerate)
    _ask_topology(manifest, topology_request(plan, where))
    tweak = _KIND_TWEAKS.get(kind.kind)
    if tweak is not None:
        tweak(manifest, where, accelerate, example_model_source(plan, team))
    if where.resource is None:
        why = "the type has none"
    count = pods * ACCELERATORS_PER_POD if accelerate and kind.kind not in SIZED_BY_OPERATOR else 0
    return FirstJob(kind, manifest, count, why)


class _PlainDumper(yaml.SafeDumper):
    """Writes every mapping in full where it occurs: no ``&id001`` anchors or ``*id001`` aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def plain_yaml(manifest: dict[str, Any]) -> str:
    return yaml.dump(copy.deepcopy(manifest), Dumper=_PlainDumper, sort_keys=False, default_flow_style=False)
