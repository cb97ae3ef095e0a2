"""The team-limits policy: a team's priority classes and image registries, read from the team's parameter ConfigMap in
the platform's namespace, and the resource rules that are the same for every team (no NVIDIA device environment
without a GPU, accelerator requests equal to their limits)."""

from __future__ import annotations

from typing import Any

from ..plan import TeamPlan
from ..plan.workloads import PRIORITY_LABEL, WORKLOAD_KINDS, extra_containers_expression
from ._policy import POD_SPECS, POLICY_PREFIX, _cel_list, _check, _every_container, _every_spec, _workload_rules

TEAM_LIMITS_POLICY = f"{POLICY_PREFIX}-team-limits"

# The team's values in its parameter ConfigMap (team_params): a key per allowed priority class and per image
# prefix, since a ConfigMap holds strings only and CEL on the API server has no portable split.
PARAMS_NAMESPACE = "hyperpod-gov-system"
PRIORITY_KEY = "priority-class."  # + the WorkloadPriorityClass name; the value repeats it
IMAGE_KEY = "image-prefix."  # + the prefix's position in the sorted list; the value is the prefix
IMAGES_KEY = "images"  # "any" (teams[].images is empty) or "prefixes"
GPU_ENV = ("NVIDIA_DISABLE_REQUIRE", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_VISIBLE_DEVICES")


def team_params(team: TeamPlan, priority_classes: tuple[str, ...]) -> dict[str, str]:
    """The ``data`` of the team's parameter ConfigMap: its allowed Kueue priority classes and image prefixes."""
    data = {"team": team.name, IMAGES_KEY: "prefixes" if team.image_prefixes else "any"}
    data.update({f"{PRIORITY_KEY}{p}": p for p in priority_classes})
    data.update({f"{IMAGE_KEY}{i}": prefix for i, prefix in enumerate(team.image_prefixes)})
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
            _check(_every_spec("!has(s.priorityClassName) || s.priorityClassName == '' || "
                               + allowed.replace("X", "s.priorityClassName")),
                   "priorityClassName may name only the team's priority classes (teams[].priorityClasses): "
                   "system-node-critical, system-cluster-critical and other classes preempt other teams' pods "
                   "(remove priorityClassName and use the kueue.x-k8s.io/priority-class label)"),
            _check(_all_containers(images),
                   "an image is not from the team's registries (teams[].images): every container, init container "
                   "and ephemeral container image must start with one of its prefixes"),
            _check(_all_containers(f"!{_env('c')}.exists(e, e.name in {_cel_list(GPU_ENV)}) || {_has_gpu('c')}"),
                   "NVIDIA_VISIBLE_DEVICES, NVIDIA_DRIVER_CAPABILITIES and NVIDIA_DISABLE_REQUIRE are allowed only "
                   "on a container that requests a GPU (nvidia.com/gpu or a MIG partition): without one they expose "
                   "every GPU of the node (request the GPUs instead; the device plugin sets the variables)"),
            _check(_all_containers(f"!has(c.resources) || !has({requests}) || {requests}.all(r, "
                                   f"!{_extended('r')} || (has({limits}) && r in {limits} && "
                                   f"string({limits}[r]) == string({requests}[r])))"),
                   "an accelerator (GPU, MIG partition, EFA, Neuron) request must equal its limit: Kubernetes "
                   "does not overcommit extended resources (set limits to the same value, or set only limits)"),
        ],
    }
