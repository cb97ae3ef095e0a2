"""The Pod Security policy: the Pod Security Standards at a team's level (baseline or restricted) on every Pod, its
ephemeral containers and the pod templates of every workload kind, with the exceptions distributed training needs
(``TRAINING_EXCEPTIONS``); and the audit labels of a namespace the chart owns."""

from __future__ import annotations

from typing import Any

from ..plan import TeamPlan
from ..plan.quotas import PodSecurityLevel
from ._policy import POD_SPECS, POLICY_PREFIX, _cel_list, _check, _every_container, _every_spec, _workload_rules

LEVELS: tuple[PodSecurityLevel, ...] = ("baseline", "restricted")
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


def pod_security_policy_name(level: PodSecurityLevel) -> str:
    return f"{POLICY_PREFIX}-pod-security-{level}"


def pod_security_policy(level: PodSecurityLevel) -> dict[str, Any]:
    """The ``spec`` of the Pod Security policy of one level (restricted includes baseline)."""
    checks = baseline_checks() + (restricted_checks() if level == "restricted" else [])
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": _workload_rules(["CREATE", "UPDATE"])},
        "variables": [{"name": "specs", "expression": POD_SPECS}],
        "validations": checks,
    }


def namespace_labels(team: TeamPlan, kubernetes_version: str) -> dict[str, str]:
    """Pod Security Admission labels for a namespace the chart owns (kueue mode): audit at the team's level.

    Not ``enforce``: Pod Security Admission has no way to allow IPC_LOCK, which EFA needs; the
    ValidatingAdmissionPolicy enforces the level with that one exception, the same way in both modes.
    """
    return {f"{PSA_PREFIX}/audit": team.pod_security, f"{PSA_PREFIX}/audit-version": f"v{kubernetes_version}"}
