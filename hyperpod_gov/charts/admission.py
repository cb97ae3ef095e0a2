"""Admission policies that hold in every team namespace, in both modes, without owning the namespace.

In ``task-governance`` mode HyperPod creates and reconciles each team namespace,
so a label on it is not ours to keep. A ``ValidatingAdmissionPolicy`` (cluster
scoped, admissionregistration.k8s.io/v1, GA since Kubernetes 1.30) with one
binding per team, selecting the team's namespace by name, is one mechanism for
both modes:

- **Pod Security** (``pod_security_policy``): the Pod Security Standards at the
  team's level (``baseline`` or ``restricted``), checked on every Pod (and on
  ``kubectl debug``'s ephemeral containers, the ``pods/ephemeralcontainers``
  subresource) and on the pod templates of every workload kind of
  ``plan/workloads.py``, so a job is refused at submission rather than its pods
  failing later. The exceptions distributed training needs are explicit
  (``TRAINING_EXCEPTIONS``).
- **Queue** (``queue_policy``): every workload, and every Pod no managed controller
  made, names the team's own LocalQueue in ``kueue.x-k8s.io/queue-name``, so
  nothing in a team namespace runs outside the team's quota (kueue mode also has
  Kueue's ``manageJobsWithoutQueueName``; task-governance mode has only this);
  and no pod names its own node (``spec.nodeName`` skips the scheduler, and with
  it the nodes of the flavor the queue admitted the job to).
- **Team limits** (``team_limits_policy``): the per-team values (priority classes,
  image registries) come from a ConfigMap per team in the platform's namespace
  (``PARAMS_NAMESPACE``), the binding's ``paramRef``, so one policy serves every
  team and no team can change its own values (no team role reaches that
  namespace; a ConfigMap in the team's namespace would be the team's to edit
  where ``writeConfigMaps`` is on). With the per-team values it checks the
  fields that are the same for everyone: no NVIDIA device environment without a
  GPU, and accelerator requests equal to their limits.

The policies are cluster-wide objects (``cluster.yaml``) and match every kind of the table, the union over all
teams: a kind a team may not create is refused by RBAC alone (the team's roles grant no verb on it), so a policy
never needs to know which team may create what. Each team's bindings and parameters travel with the team's
manifest, so adding a team adds three bindings and one ConfigMap.
"""

from __future__ import annotations

from typing import Any

from constructs import Construct

from ..plan import TeamPlan
from ..plan import names
from ..plan.quotas import PodSecurityLevel
from ..plan.workloads import (
    CORE,
    PRIORITY_LABEL,
    WORKLOAD_KINDS,
    WorkloadKind,
    controller_created,
    extra_containers_expression,
    owners_of,
    pod_specs_expression,
)
from ._objects import api_object

ADMISSION_API = "admissionregistration.k8s.io/v1"
POLICY_PREFIX = "hyperpod-gov"
LEVELS: tuple[PodSecurityLevel, ...] = ("baseline", "restricted")
LOCAL_QUEUE_SUFFIX = "-localqueue"  # names.local_queue(team) == names.namespace(team) + this (a test checks it)
PSA_PREFIX = "pod-security.kubernetes.io"
EXCEPTIONS_ANNOTATION = "hyperpod-gov.io/training-exceptions"

# What distributed training needs beyond the Pod Security Standards, allowed at both levels:
TRAINING_EXCEPTIONS = {
    # EFA and NCCL pin (register) memory for RDMA; IPC_LOCK lifts the locked-memory limit for that.
    "capabilities": ("IPC_LOCK",),
    # Large shared memory for data loaders and NCCL: an emptyDir with medium Memory mounted at /dev/shm. Both
    # levels allow emptyDir volumes of any medium already; stated here so that nobody "hardens" it away.
    "volumes": ("emptyDir (medium: Memory) at /dev/shm",),
}

# Pod Security Standards (kubernetes.io/docs/concepts/security/pod-security-standards), v1.30 and later.
BASELINE_CAPABILITIES = ("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                         "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT")
RESTRICTED_CAPABILITIES = ("NET_BIND_SERVICE",)
SAFE_SYSCTLS = ("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
                "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
                "net.ipv4.tcp_keepalive_probes")
SELINUX_TYPES = ("", "container_t", "container_init_t", "container_kvm_t", "container_engine_t")
RESTRICTED_VOLUMES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                      "projected", "secret")

# Where every workload kind keeps its pod templates (plan/workloads.py: Kubeflow kinds a map of replica type -> spec,
# HyperPod a list, the inference and spaces kinds their pod fields written as a pod spec).
POD_SPECS = pod_specs_expression(WORKLOAD_KINDS)
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _cel_list(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(f"'{v}'" for v in values) + "]"


def _every_container(predicate: str) -> str:
    """``predicate`` (over ``c``, and ``s`` its pod spec) holds for every container of every pod spec."""
    lists = " && ".join(f"(has(s.{k}) ? s.{k} : []).all(c, {predicate})" for k in CONTAINER_LISTS)
    return f"variables.specs.all(s, {lists})"


def _every_spec(predicate: str) -> str:
    return f"variables.specs.all(s, {predicate})"


def _unset_or(obj: str, field: str, ok: str) -> str:
    """``obj.field`` is absent or satisfies ``ok`` (written over ``obj.field``); every step guarded by has()."""
    parts = field.split(".")
    guards = []
    for i in range(len(parts)):
        guards.append(f"!has({obj}.{'.'.join(parts[: i + 1])})")
    return "(" + " || ".join(guards) + f" || {ok})"


def _both(field: str, ok: str) -> str:
    """The pod-level ``securityContext.<field>`` and every container's satisfy ``ok`` (a format string over X)."""
    pod = _unset_or("s", f"securityContext.{field}", ok.format(X=f"s.securityContext.{field}"))
    container = _unset_or("c", f"securityContext.{field}", ok.format(X=f"c.securityContext.{field}"))
    return f"{_every_spec(pod)} && {_every_container(container)}"


def _check(expression: str, message: str) -> dict[str, str]:
    return {"expression": expression, "message": message, "reason": "Forbidden"}


def baseline_checks() -> list[dict[str, str]]:
    allowed = BASELINE_CAPABILITIES + TRAINING_EXCEPTIONS["capabilities"]
    return [
        _check(_every_spec("!(has(s.hostNetwork) && s.hostNetwork) && !(has(s.hostPID) && s.hostPID) && "
                           "!(has(s.hostIPC) && s.hostIPC)"),
               "hostNetwork, hostPID and hostIPC are not allowed: a pod on the shared nodes must not see the "
               "node's network or processes (remove them)"),
        _check(_every_container(_unset_or("c", "securityContext.privileged", "!c.securityContext.privileged")),
               "privileged containers are not allowed on the shared nodes (remove securityContext.privileged; EFA "
               "and GPUs come through device plugins: request vpc.amazonaws.com/efa and nvidia.com/gpu)"),
        _check(_both("windowsOptions.hostProcess", "!{X}"), "Windows HostProcess containers are not allowed"),
        _check(_every_container(_unset_or("c", "securityContext.capabilities.add",
                                          f"c.securityContext.capabilities.add.all(a, a in {_cel_list(allowed)})")),
               "capabilities beyond the Pod Security baseline set and IPC_LOCK (for EFA) are not allowed "
               "(remove them from securityContext.capabilities.add)"),
        _check(_every_spec("!has(s.volumes) || s.volumes.all(v, !has(v.hostPath))"),
               "hostPath volumes are not allowed: they expose the node's files, other teams' credentials among "
               "them (use an emptyDir, with medium: Memory for /dev/shm, or a persistent volume claim)"),
        _check(_every_container("!has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0)"),
               "host ports are not allowed (remove hostPort; pods reach each other on their own addresses)"),
        _check(_both("appArmorProfile.type", "{X} != 'Unconfined'") + " && (object.kind != 'Pod' || "
               "!has(object.metadata.annotations) || object.metadata.annotations.all(k, "
               "!k.startsWith('container.apparmor.security.beta.kubernetes.io/') || "
               "object.metadata.annotations[k] == 'runtime/default' || "
               "object.metadata.annotations[k].startsWith('localhost/')))",
               "an Unconfined AppArmor profile is not allowed (use RuntimeDefault or a Localhost profile)"),
        _check(_both("seLinuxOptions.type", f"{{X}} in {_cel_list(SELINUX_TYPES)}") + " && "
               + _both("seLinuxOptions.user", "{X} == ''") + " && " + _both("seLinuxOptions.role", "{X} == ''"),
               "custom SELinux users, roles or types are not allowed"),
        _check(_every_container(_unset_or("c", "securityContext.procMount",
                                          "c.securityContext.procMount == 'Default'")),
               "an Unmasked /proc mount is not allowed (remove securityContext.procMount)"),
        _check(_both("seccompProfile.type", "{X} != 'Unconfined'"),
               "an Unconfined seccomp profile is not allowed (use RuntimeDefault)"),
        _check(_every_spec(_unset_or("s", "securityContext.sysctls",
                                     f"s.securityContext.sysctls.all(x, x.name in {_cel_list(SAFE_SYSCTLS)})")),
               "only the safe sysctls of the Pod Security Standards are allowed"),
    ]


def _is_true(obj: str, field: str) -> str:
    return f"(has({obj}.securityContext) && has({obj}.securityContext.{field}) && {obj}.securityContext.{field})"


def restricted_checks() -> list[dict[str, str]]:
    allowed = RESTRICTED_CAPABILITIES + TRAINING_EXCEPTIONS["capabilities"]
    volume = " || ".join(f"has(v.{k})" for k in RESTRICTED_VOLUMES)
    pod_seccomp = ("(has(s.securityContext) && has(s.securityContext.seccompProfile) && "
                   "s.securityContext.seccompProfile.type in ['RuntimeDefault', 'Localhost'])")
    container_seccomp = ("(has(c.securityContext) && has(c.securityContext.seccompProfile) && "
                         "c.securityContext.seccompProfile.type in ['RuntimeDefault', 'Localhost'])")
    return [
        _check(_every_spec(f"!has(s.volumes) || s.volumes.all(v, {volume})"),
               f"restricted: only {', '.join(RESTRICTED_VOLUMES)} volumes are allowed"),
        _check(_every_container("has(c.securityContext) && has(c.securityContext.allowPrivilegeEscalation) && "
                                "c.securityContext.allowPrivilegeEscalation == false"),
               "restricted: every container sets securityContext.allowPrivilegeEscalation: false"),
        _check(_every_container(f"({_is_true('s', 'runAsNonRoot')} || {_is_true('c', 'runAsNonRoot')}) && "
                                "!(has(c.securityContext) && has(c.securityContext.runAsNonRoot) && "
                                "!c.securityContext.runAsNonRoot)"),
               "restricted: containers run as non-root (set securityContext.runAsNonRoot: true on the pod)"),
        _check(_both("runAsUser", "{X} != 0"), "restricted: runAsUser 0 (root) is not allowed"),
        _check(_every_container(f"{pod_seccomp} || {container_seccomp}"),
               "restricted: set securityContext.seccompProfile.type: RuntimeDefault on the pod"),
        _check(_every_container("has(c.securityContext) && has(c.securityContext.capabilities) && "
                                "has(c.securityContext.capabilities.drop) && "
                                "'ALL' in c.securityContext.capabilities.drop && "
                                "(!has(c.securityContext.capabilities.add) || "
                                f"c.securityContext.capabilities.add.all(a, a in {_cel_list(allowed)}))"),
               "restricted: every container drops ALL capabilities and adds at most NET_BIND_SERVICE and "
               "IPC_LOCK (for EFA)"),
    ]


def kind_resources(kinds: tuple[WorkloadKind, ...] = WORKLOAD_KINDS) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(API group, sorted resources) of ``kinds``, groups in table order: how RBAC rules and policies name them."""
    groups: dict[str, set[str]] = {}
    for k in kinds:
        groups.setdefault(k.group, set()).add(k.resource)
    return tuple((g, tuple(sorted(r))) for g, r in groups.items())


EPHEMERAL_CONTAINERS = "pods/ephemeralcontainers"  # kubectl debug adds containers to a running pod through it


def _workload_rules(operations: list[str], *, ephemeral: bool = True) -> list[dict[str, Any]]:
    """Pods (with their ephemeral containers) and every kind of the table: the union over all teams (RBAC decides
    which a team may create)."""
    pods = ["pods", EPHEMERAL_CONTAINERS] if ephemeral else ["pods"]
    rules = [{"apiGroups": [CORE], "apiVersions": ["*"], "resources": pods, "operations": operations}]
    rules += [{"apiGroups": [group], "apiVersions": ["*"], "resources": list(resources), "operations": operations}
              for group, resources in kind_resources()]
    return rules


def pod_security_policy_name(level: PodSecurityLevel) -> str:
    return f"{POLICY_PREFIX}-pod-security-{level}"


QUEUE_POLICY = f"{POLICY_PREFIX}-team-queue"
TEAM_LIMITS_POLICY = f"{POLICY_PREFIX}-team-limits"


def pod_security_policy(level: PodSecurityLevel) -> dict[str, Any]:
    """The ``spec`` of the Pod Security policy of one level (restricted includes baseline)."""
    checks = baseline_checks() + (restricted_checks() if level == "restricted" else [])
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": _workload_rules(["CREATE", "UPDATE"])},
        "variables": [{"name": "specs", "expression": POD_SPECS}],
        "validations": checks,
    }


def _group_is(api_version: str, group: str) -> str:
    """CEL: ``api_version`` (an expression) is of API ``group`` ("" the core group: "v1")."""
    return f"{api_version}.startsWith('{group}/')" if group else f"!{api_version}.contains('/')"


def _made_by_its_controller() -> str:
    """CEL: the object is one a managed controller creates, made by a controller.

    Both must hold. (1) Its controlling ownerReference (controller: true) names a kind that creates objects of this
    kind (plan/workloads.py: WorkloadKind.creates, and Kubernetes' Deployment -> ReplicaSet -> Pod), API group and
    kind alike. An ownerReference has no namespace: the owner is in the object's own namespace by definition (the
    garbage collector deletes an object whose owner is not found there). (2) The request comes from a service
    account of another namespace (the operators and kube-controller-manager's controllers run as such) or from
    kube-controller-manager itself: a team member, or a pod of the team, that writes an owner into a hand-made
    Pod or Job is still held to the queue rule. Which controller runs as which account is not assumed.
    """
    matched = {(CORE, "Pod")} | {(k.group, k.kind) for k in WORKLOAD_KINDS}  # what this policy sees
    cases = []
    for group, kind in (made for made in controller_created() if made in matched):
        owners = " || ".join(f"(o.kind == '{ok}' && {_group_is('o.apiVersion', og)})"
                             for og, ok in owners_of(group, kind))
        cases.append(f"(object.kind == '{kind}' && {_group_is('object.apiVersion', group)} && ({owners}))")
    owner = ("has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(o, "
             f"has(o.controller) && o.controller && ({' || '.join(cases)}))")
    user = "request.userInfo.username"
    controller = (f"(({user}.startsWith('system:serviceaccount:') && "
                  f"!{user}.startsWith('system:serviceaccount:' + request.namespace + ':')) || "
                  f"{user} == 'system:kube-controller-manager')")
    return f"{owner} && {controller}"


def queue_policy() -> dict[str, Any]:
    """The ``spec`` of the policy that sends every workload of a team namespace through the team's own LocalQueue."""
    label = names.QUEUE_LABEL
    own = f"request.namespace + '{LOCAL_QUEUE_SUFFIX}'"
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": _workload_rules(["CREATE", "UPDATE"], ephemeral=False)},
        # What a managed kind's controller creates (the MPIJob launcher's batch Job, a PyTorchJob's Pods) is
        # queued through the object that owns it; everything else is checked.
        "matchConditions": [{"name": "not-made-by-a-managed-controller",
                             "expression": f"!({_made_by_its_controller()})"}],
        "variables": [{"name": "specs", "expression": POD_SPECS}],
        "validations": [
            {
                "expression": f"has(object.metadata.labels) && '{label}' in object.metadata.labels && "
                              f"object.metadata.labels['{label}'] == {own}",
                "messageExpression": f"'every workload in ' + request.namespace + ' goes through the team queue: "
                                     f"set the label {label}: ' + {own}",
                "reason": "Forbidden",
            },
            # A pod that names its node skips the scheduler, and with it the nodes of the flavor Kueue admitted. A
            # Pod's nodeName is set by the scheduler's binding and immutable after: only a new Pod is checked.
            _check("(object.kind == 'Pod' && request.operation == 'UPDATE') || "
                   + _every_spec("!has(s.nodeName) || s.nodeName == ''"),
                   "spec.nodeName is not allowed: the queue and the scheduler choose the nodes (use resource "
                   "requests, and a nodeSelector on node.kubernetes.io/instance-type if needed)"),
        ],
    }


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


def admission_policies(scope: Construct) -> None:
    """The cluster-wide policies (both modes); they act only where a team binding selects a namespace. Also the
    platform namespace that holds each team's parameters."""
    for level in LEVELS:
        api_object(
            scope, f"PodSecurity-{level}", api_version=ADMISSION_API, kind="ValidatingAdmissionPolicy",
            name=pod_security_policy_name(level),
            annotations={EXCEPTIONS_ANNOTATION: "capabilities: IPC_LOCK (EFA); volumes: emptyDir medium Memory at "
                         "/dev/shm (NCCL)"},
            body={"spec": pod_security_policy(level)},
        )
    api_object(scope, "TeamQueue", api_version=ADMISSION_API, kind="ValidatingAdmissionPolicy", name=QUEUE_POLICY,
               body={"spec": queue_policy()})
    api_object(scope, "TeamLimits", api_version=ADMISSION_API, kind="ValidatingAdmissionPolicy",
               name=TEAM_LIMITS_POLICY, body={"spec": team_limits_policy()})
    api_object(scope, "ParamsNamespace", api_version="v1", kind="Namespace", name=PARAMS_NAMESPACE)


def binding_name(policy: str, team: TeamPlan) -> str:
    return f"{policy}-{team.name}"


def team_bindings(scope: Construct, *, team: TeamPlan, priority_classes: tuple[str, ...]) -> None:
    """Bind the team's Pod Security level, the queue policy and the team-limits policy (with the team's parameter
    ConfigMap, ``priority_classes`` its allowed WorkloadPriorityClass names) to the team namespace, by its name
    label."""
    selector = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": team.namespace}}}
    for id_, policy in (("PodSecurityBinding", pod_security_policy_name(team.pod_security)),
                        ("QueueBinding", QUEUE_POLICY)):
        api_object(
            scope, id_, api_version=ADMISSION_API, kind="ValidatingAdmissionPolicyBinding",
            name=binding_name(policy, team),
            body={"spec": {"policyName": policy, "validationActions": ["Deny"], "matchResources": selector}},
        )
    api_object(scope, "LimitsParams", api_version="v1", kind="ConfigMap", name=team.name, namespace=PARAMS_NAMESPACE,
               labels={names.TEAM_LABEL: team.name}, body={"data": team_params(team, priority_classes)})
    api_object(
        scope, "LimitsBinding", api_version=ADMISSION_API, kind="ValidatingAdmissionPolicyBinding",
        name=binding_name(TEAM_LIMITS_POLICY, team),
        body={"spec": {"policyName": TEAM_LIMITS_POLICY, "validationActions": ["Deny"], "matchResources": selector,
                       # Deny while the ConfigMap is missing: no team runs without its limits.
                       "paramRef": {"name": team.name, "namespace": PARAMS_NAMESPACE,
                                    "parameterNotFoundAction": "Deny"}}},
    )


def namespace_labels(team: TeamPlan, kubernetes_version: str) -> dict[str, str]:
    """Pod Security Admission labels for a namespace the chart owns (kueue mode): audit at the team's level.

    Not ``enforce``: Pod Security Admission has no way to allow IPC_LOCK, which EFA needs; the
    ValidatingAdmissionPolicy enforces the level with that one exception, the same way in both modes.
    """
    return {f"{PSA_PREFIX}/audit": team.pod_security, f"{PSA_PREFIX}/audit-version": f"v{kubernetes_version}"}
