"""The team-limits policy: a team's priority classes (and whether its work must name one), image registries and
inference model sources, read from the team's parameter ConfigMap in the platform's namespace, and the resource
rules that are the same for every team (a container without a GPU says ``NVIDIA_VISIBLE_DEVICES=void``,
accelerator requests equal their limits)."""

from __future__ import annotations

from typing import Any, Optional

from ..plan import TeamPlan
from ..plan.storage import FileSystemPlan
from ..plan.workloads import (
    INFERENCE_ENDPOINT, NO_DEVICES, PRIORITY_LABEL, VISIBLE_DEVICES, WORKLOAD_KINDS, extra_containers_expression,
    model_sources,
)
from ._policy import POD_SPECS, POLICY_PREFIX, _cel_list, _check, _every_container, _every_spec, _workload_rules
from .queue_policy import made_by_its_controller

TEAM_LIMITS_POLICY = f"{POLICY_PREFIX}-team-limits"

# The team's values in its parameter ConfigMap (team_params): a key per allowed priority class and per image
# prefix, since a ConfigMap holds strings only and CEL on the API server has no portable split.
PARAMS_NAMESPACE = "hyperpod-gov-system"
PRIORITY_KEY = "priority-class."  # + the WorkloadPriorityClass name; the value repeats it
IMAGE_KEY = "image-prefix."  # + the prefix's position in the sorted list; the value is the prefix
IMAGES_KEY = "images"  # "any" (teams[].images is empty) or "prefixes"
REQUIRE_PRIORITY_KEY = "require-priority"  # "true" with teams[].requirePriority; absent otherwise
# The team's model sources (plan/workloads.py ModelSources): "<bucket>/<prefix>" per S3 grant, and the shared file
# system with the team's directory on it (the values are the plan's, placeholders filled at deploy).
MODEL_S3_KEY = "model-s3."  # + the grant's position in the sorted list; the value is "<bucket>/<prefix>"
MODEL_FSX_ID = "model-fsx.id"
MODEL_FSX_DNS = "model-fsx.dns-name"
MODEL_FSX_MOUNT = "model-fsx.mount-name"
MODEL_FSX_DIRECTORY = "model-fsx.directory"  # "/<team>"
# Allowed only beside a GPU request: with NVIDIA_VISIBLE_DEVICES=void they do nothing, with a GPU the device plugin
# sets what the container needs.
GPU_ENV = ("NVIDIA_DISABLE_REQUIRE", "NVIDIA_DRIVER_CAPABILITIES")
# The NVIDIA container toolkit's volume-mount device list (accept-nvidia-visible-devices-as-volume-mounts): a mount
# at /var/run/nvidia-container-devices/all asks for every GPU. Only the device plugin mounts there (through the
# runtime, never through the pod spec).
DEVICE_MOUNTS = "nvidia-container-devices"


def team_params(team: TeamPlan, priority_classes: tuple[str, ...],
                file_system: Optional[FileSystemPlan] = None) -> dict[str, str]:
    """The ``data`` of the team's parameter ConfigMap: its allowed Kueue priority classes (and whether its work must
    name one), image prefixes and inference model sources (``file_system``: the shared file system, where the team
    has a directory on it)."""
    data = {"team": team.name, IMAGES_KEY: "prefixes" if team.image_prefixes else "any"}
    data.update({f"{PRIORITY_KEY}{p}": p for p in priority_classes})
    if team.require_priority:
        data[REQUIRE_PRIORITY_KEY] = "true"
    data.update({f"{IMAGE_KEY}{i}": prefix for i, prefix in enumerate(team.image_prefixes)})
    sources = model_sources(team)
    data.update({f"{MODEL_S3_KEY}{i}": f"{bucket}/{prefix}" for i, (bucket, prefix) in enumerate(sources.s3)})
    if sources.fsx_directory is not None and file_system is not None:
        data.update({MODEL_FSX_ID: file_system.file_system_id, MODEL_FSX_DNS: file_system.dns_name,
                     MODEL_FSX_MOUNT: file_system.mount_name, MODEL_FSX_DIRECTORY: sources.fsx_directory})
    return data


def _env(c: str) -> str:
    # Pod containers say env; the inference operator's worker says environmentVariables.
    return f"((has({c}.env) ? {c}.env : []) + (has({c}.environmentVariables) ? {c}.environmentVariables : []))"


def _has_gpu(c: str) -> str:
    """CEL: container ``c`` requests or limits a non-zero nvidia.com/gpu or MIG partition (nvidia.com/mig-*)."""
    def side(part: str) -> str:
        m = f"{c}.resources.{part}"
        return (f"(has({m}) && {m}.exists(r, (r == 'nvidia.com/gpu' || r.startsWith('nvidia.com/mig-')) && "
                f"string({m}[r]) != '0'))")
    return f"(has({c}.resources) && ({side('limits')} || {side('requests')}))"


def _extended(r: str) -> str:
    # Kubernetes' extended resources: a domain-prefixed name outside kubernetes.io (GPUs, MIG, EFA, Neuron).
    return f"({r}.contains('/') && !{r}.contains('kubernetes.io/'))"


def _all_containers(predicate: str) -> str:
    """``predicate`` over ``c`` holds for every container of every pod spec and every extra container-like object."""
    return f"{_every_container(predicate)} && variables.extra.all(c, {predicate})"


def _says_no_gpu(c: str) -> str:
    """CEL: container ``c`` sets NVIDIA_VISIBLE_DEVICES, every time it names it, to a literal void or none.

    Kubernetes gives ``env`` precedence over ``envFrom`` and over the image's own ENV, so a literal entry decides
    what the toolkit reads whatever a ConfigMap, a Secret or the image says; a valueFrom would let a ConfigMap or
    Secret the team writes say ``all``. Every entry of the name is checked: with two, the last one wins."""
    env = _env(c)
    literal = f"!has(e.valueFrom) && has(e.value) && e.value in {_cel_list(NO_DEVICES)}"
    return (f"({env}.exists(e, e.name == '{VISIBLE_DEVICES}') && "
            f"{env}.all(e, e.name != '{VISIBLE_DEVICES}' || ({literal})))")


def _mounts(c: str) -> str:
    # Pod containers' volumeMounts; the inference worker's one modelVolumeMount.
    return (f"((has({c}.volumeMounts) ? {c}.volumeMounts : []) + "
            f"(has({c}.modelVolumeMount) ? [{c}.modelVolumeMount] : []))")


def _model_source_granted() -> str:
    """CEL: an InferenceEndpointConfig's model source is one of the team's (``params``): an S3 location under one of
    its granted prefixes, or a path under its own directory on the shared file system (that file system, its own
    DNS and mount names); no '..' segment in the location."""
    src = "object.spec.modelSourceConfig"
    loc = f"(has({src}.modelLocation) ? {src}.modelLocation : '')"
    backstep = f"({loc} == '..' || {loc}.startsWith('../') || {loc}.endsWith('/..') || {loc}.contains('/../'))"
    s3 = f"{src}.s3Storage"
    # "<bucket>/<location>/": a grant "<bucket>/<prefix>" (prefix "" or ending at '/') holds it as a string prefix.
    s3_path = f"({s3}.bucketName + '/' + {loc} + ({loc} == '' || {loc}.endsWith('/') ? '' : '/'))"
    s3_ok = (f"!has({s3}) || (has({s3}.bucketName) && params.data.exists(k, k.startsWith('{MODEL_S3_KEY}') && "
             f"{s3_path}.startsWith(params.data[k])))")
    fsx = f"{src}.fsxStorage"
    fsx_path = f"(({loc}.startsWith('/') ? {loc} : '/' + {loc}) + '/')"
    same = " && ".join(f"(!has({fsx}.{field}) || {fsx}.{field} == params.data['{key}'])"
                       for field, key in (("dnsName", MODEL_FSX_DNS), ("mountName", MODEL_FSX_MOUNT)))
    fsx_ok = (f"!has({fsx}) || ('{MODEL_FSX_ID}' in params.data && has({fsx}.fileSystemId) && "
              f"{fsx}.fileSystemId == params.data['{MODEL_FSX_ID}'] && {same} && "
              f"{fsx_path}.startsWith(params.data['{MODEL_FSX_DIRECTORY}'] + '/'))")
    typed = (f"(!has({src}.modelSourceType) || ({src}.modelSourceType != 's3' || has({s3})) && "
             f"({src}.modelSourceType != 'fsx' || has({fsx})))")
    return (f"object.kind != '{INFERENCE_ENDPOINT}' || !has(object.spec) || !has({src}) || "
            f"(!{backstep} && {typed} && ({s3_ok}) && ({fsx_ok}))")


def _priority_required(label: str) -> str:
    """CEL: where the team's parameters say so (teams[].requirePriority), the object carries the priority label.

    Checked at the object the team writes: what a managed controller makes from it (the MPIJob launcher's Job, a
    Job's Pods) is held through its owner. An update needs the label only if the object had it: work created
    unlabeled before the team required one keeps being updated (Kueue unsuspends it, controllers remove their
    finalizers), and the label cannot be removed."""
    def labelled(o: str) -> str:
        return f"(has({o}.metadata.labels) && '{label}' in {o}.metadata.labels)"
    required = f"('{REQUIRE_PRIORITY_KEY}' in params.data && params.data['{REQUIRE_PRIORITY_KEY}'] == 'true')"
    return (f"!{required} || {labelled('object')} || "
            f"(request.operation != 'CREATE' && !{labelled('oldObject')}) || ({made_by_its_controller()})")


def team_limits_policy() -> dict[str, Any]:
    """The ``spec`` of the policy that holds a team's work to the team's own values (``params``, the team's
    ConfigMap) and to the platform's resource rules."""
    label = PRIORITY_LABEL
    allowed = f"('{PRIORITY_KEY}' + X) in params.data"
    images = (f"params.data['{IMAGES_KEY}'] == 'any' || !has(c.image) || c.image == '' || params.data.exists(k, "
              f"k.startsWith('{IMAGE_KEY}') && c.image.startsWith(params.data[k]))")
    requests = "c.resources.requests"
    limits = "c.resources.limits"
    return {
        "failurePolicy": "Fail",
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": {"resourceRules": _workload_rules(["CREATE", "UPDATE"])},
        "variables": [{"name": "specs", "expression": POD_SPECS},
                      {"name": "extra", "expression": extra_containers_expression(WORKLOAD_KINDS)}],
        "validations": [
            {
                "expression": f"!has(object.metadata.labels) || !('{label}' in object.metadata.labels) || "
                              + allowed.replace("X", f"object.metadata.labels['{label}']"),
                "messageExpression": f"'{label}: ' + object.metadata.labels['{label}'] + ' is not a priority "
                                     f"class team ' + params.data.team + ' may use (teams[].priorityClasses; the "
                                     f"list: ConfigMap {PARAMS_NAMESPACE}/' + params.data.team + ')'",
                "reason": "Forbidden",
            },
            {
                "expression": _priority_required(label),
                "messageExpression": f"'team ' + params.data.team + ' requires a priority class on its work "
                                     f"(teams[].requirePriority): add the label {label} with one of its classes "
                                     f"(the list: ConfigMap {PARAMS_NAMESPACE}/' + params.data.team + ')'",
                "reason": "Forbidden",
            },
            _check(_every_spec("!has(s.priorityClassName) || s.priorityClassName == '' || "
                               + allowed.replace("X", "s.priorityClassName")),
                   "priorityClassName may name only the team's priority classes (teams[].priorityClasses): "
                   "system-node-critical, system-cluster-critical and other classes preempt other teams' pods "
                   "(remove priorityClassName and use the kueue.x-k8s.io/priority-class label)"),
            _check(_all_containers(images),
                   "an image is not from the team's registries (teams[].images): every container, init container "
                   "and ephemeral container image must start with one of its prefixes"),
            # A Pod a managed controller makes from a template was checked as that template (the Job, the
            # PyTorchJob, the InferenceEndpointConfig, the Workspace, each on CREATE and UPDATE); the containers
            # the inference and spaces operators add to their pods are theirs, not the team's.
            _check(f"(object.kind == 'Pod' && {made_by_its_controller()}) || "
                   + _all_containers(f"{_has_gpu('c')} || {_says_no_gpu('c')}"),
                   f"a container that requests no GPU (nvidia.com/gpu or a MIG partition) must set env "
                   f"{VISIBLE_DEVICES}: void (or none) as a literal value, not valueFrom, in every container, init "
                   f"container and ephemeral container (environmentVariables for an inference worker, spec.env for "
                   f"a Workspace): without it an image's own ENV {VISIBLE_DEVICES}=all (every CUDA image has it) "
                   f"exposes every GPU of the node. env takes precedence over envFrom and the image's ENV, so "
                   f"envFrom stays allowed; a container that needs GPUs requests them instead"),
            _check(_all_containers(f"!{_env('c')}.exists(e, e.name in {_cel_list(GPU_ENV)}) || {_has_gpu('c')}"),
                   "NVIDIA_DRIVER_CAPABILITIES and NVIDIA_DISABLE_REQUIRE are allowed only on a container that "
                   "requests a GPU (nvidia.com/gpu or a MIG partition; the device plugin sets what it needs)"),
            _check(_all_containers(f"!{_mounts('c')}.exists(m, has(m.mountPath) && "
                                   f"m.mountPath.contains('{DEVICE_MOUNTS}'))"),
                   f"a volume may not be mounted at /var/run/{DEVICE_MOUNTS}: the NVIDIA container toolkit reads "
                   f"the GPUs to expose from mounts there (request GPUs instead)"),
            {"expression": _model_source_granted(),
             "messageExpression": "'spec.modelSourceConfig is not a model source of team ' + params.data.team + "
                                  "': an S3 bucket and prefix the grants of its workload identities name "
                                  "(teams[].workloadIdentities[].grants.s3), or a location under its own directory "
                                  "on the shared file system (cluster.sharedStorage), with no .. segment (the list: "
                                  f"ConfigMap {PARAMS_NAMESPACE}/' + params.data.team + ')'",
             "reason": "Forbidden"},
            _check(_all_containers(f"!has(c.resources) || !has({requests}) || {requests}.all(r, "
                                   f"!{_extended('r')} || (has({limits}) && r in {limits} && "
                                   f"string({limits}[r]) == string({requests}[r])))"),
                   "an accelerator (GPU, MIG partition, EFA, Neuron) request must equal its limit: Kubernetes "
                   "does not overcommit extended resources (set limits to the same value, or set only limits)"),
        ],
    }
