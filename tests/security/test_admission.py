"""Pod Security and queue admission policies: the emitted objects, and their CEL run on good and hostile work.

The CEL runs in cel-python here (the API server runs cel-go); tests/charts/test_manifests.py validates the
objects against the real Kubernetes schemas.
"""

from __future__ import annotations

import copy
import json

import pytest

from hyperpod_gov.charts import render
from hyperpod_gov.charts.admission import (
    LOCAL_QUEUE_SUFFIX,
    QUEUE_POLICY,
    pod_security_policy,
    pod_security_policy_name,
    queue_policy,
)
from hyperpod_gov.charts.admission import TEAM_LIMITS_POLICY, kind_resources
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.kueue import kueue_manager_config
from hyperpod_gov.plan.names import QUEUE_LABEL, TEAM_LABEL
from hyperpod_gov.spec import parse_spec
from tests.conftest import TODAY
from tests.security.cel import RESOURCES, denials

NS = "hyperpod-ns-team-a"
QUEUE = {QUEUE_LABEL: NS + LOCAL_QUEUE_SUFFIX}


# --- workloads --------------------------------------------------------------------------------------------

def training_pod_spec() -> dict:
    """A distributed-training pod as teams write it: GPUs and EFA through device plugins, IPC_LOCK, big /dev/shm."""
    return {
        "containers": [{
            "name": "trainer", "image": "trainer:1",
            "resources": {"limits": {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 4}},
            "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
            "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
        }],
        "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "64Gi"}}],
    }


def restricted_pod_spec() -> dict:
    spec = training_pod_spec()
    spec["securityContext"] = {"runAsNonRoot": True, "runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"}}
    spec["containers"][0]["securityContext"] = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"], "add": ["IPC_LOCK"]},
    }
    return spec


def wrap(kind: str, spec: dict, labels: dict | None = None, owner: bool = False) -> dict:
    """``spec`` as the (last) pod template of a ``kind``; Kubeflow kinds get a clean launcher/master first."""
    clean = restricted_pod_spec()  # passes every level: only the last template is under test
    meta = {"name": "work", "namespace": NS, "labels": dict(labels if labels is not None else QUEUE)}
    group = RESOURCES[kind][0]
    api = {"": "v1", "batch": "batch/v1", "kubeflow.org": "kubeflow.org/v1" if kind == "PyTorchJob" else
           "kubeflow.org/v2beta1", "sagemaker.amazonaws.com": "sagemaker.amazonaws.com/v1"}[group]
    obj: dict = {"apiVersion": api, "kind": kind, "metadata": meta}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "u",
                                    "controller": True}]
    if kind == "Pod":
        obj["spec"] = spec
    elif kind == "Job":
        obj["spec"] = {"template": {"spec": spec}}
    elif kind == "PyTorchJob":
        obj["spec"] = {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": clean}},
                                               "Worker": {"replicas": 4, "template": {"spec": spec}}}}
    elif kind == "MPIJob":
        obj["spec"] = {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": {"spec": clean}},
                                           "Worker": {"replicas": 4, "template": {"spec": spec}}}}
    else:
        obj["spec"] = {"replicaSpecs": [{"name": "launcher", "replicas": 1, "template": {"spec": clean}},
                                        {"name": "worker", "replicas": 4, "template": {"spec": spec}}]}
    return obj


KINDS = ["Pod", "Job", "PyTorchJob", "MPIJob", "HyperPodPyTorchJob"]


def _container(spec: dict) -> dict:
    return spec["containers"][0]


def _sc(spec: dict) -> dict:
    return _container(spec).setdefault("securityContext", {})


# (name, change to a training pod spec, the message fragment it is denied with) - rejected at baseline and above
HOSTILE = [
    ("privileged", lambda s: _sc(s).update(privileged=True), "privileged containers"),
    ("hostNetwork", lambda s: s.update(hostNetwork=True), "hostNetwork"),
    ("hostPID", lambda s: s.update(hostPID=True), "hostNetwork, hostPID"),
    ("hostIPC", lambda s: s.update(hostIPC=True), "hostNetwork, hostPID and hostIPC"),
    ("hostPath to the kubelet's pod tokens", lambda s: s["volumes"].append(
        {"name": "node", "hostPath": {"path": "/var/lib/kubelet/pods"}}), "hostPath volumes"),
    ("hostPort", lambda s: _container(s).update(ports=[{"containerPort": 80, "hostPort": 80}]), "host ports"),
    ("SYS_ADMIN", lambda s: _sc(s)["capabilities"]["add"].append("SYS_ADMIN"), "capabilities beyond"),
    ("NET_ADMIN", lambda s: _sc(s)["capabilities"]["add"].append("NET_ADMIN"), "capabilities beyond"),
    ("seccomp Unconfined", lambda s: s.update(securityContext={"seccompProfile": {"type": "Unconfined"}}),
     "Unconfined seccomp"),
    ("AppArmor Unconfined", lambda s: _sc(s).update(appArmorProfile={"type": "Unconfined"}), "AppArmor"),
    ("unmasked /proc", lambda s: _sc(s).update(procMount="Unmasked"), "Unmasked /proc"),
    ("unsafe sysctl", lambda s: s.update(securityContext={"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}),
     "safe sysctls"),
    ("SELinux user", lambda s: _sc(s).update(seLinuxOptions={"user": "system_u"}), "SELinux"),
    ("Windows HostProcess", lambda s: s.update(securityContext={"windowsOptions": {"hostProcess": True}}),
     "HostProcess"),
    ("privileged init container", lambda s: s.update(initContainers=[
        {"name": "init", "image": "i", "securityContext": {"privileged": True}}]), "privileged containers"),
    ("privileged ephemeral container", lambda s: s.update(ephemeralContainers=[
        {"name": "debug", "image": "i", "securityContext": {"privileged": True}}]), "privileged containers"),
]

# Rejected only at restricted.
RESTRICTED_ONLY = [
    ("runs as root", lambda s: s["securityContext"].update(runAsUser=0), "runAsUser 0"),
    ("may escalate", lambda s: _sc(s).update(allowPrivilegeEscalation=True), "allowPrivilegeEscalation"),
    ("keeps capabilities", lambda s: _sc(s)["capabilities"].update(drop=[]), "drops ALL"),
    ("no seccomp profile", lambda s: s.pop("securityContext"), "seccompProfile"),
    ("an NFS volume", lambda s: s["volumes"].append({"name": "n", "nfs": {"server": "x", "path": "/"}}), "volumes"),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("level", ["baseline", "restricted"])
def test_distributed_training_passes_with_ipc_lock_and_memory_backed_dev_shm(kind, level):
    spec = training_pod_spec() if level == "baseline" else restricted_pod_spec()
    assert denials(pod_security_policy(level), wrap(kind, spec), namespace=NS) == []


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,change,message", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_pods_are_denied_at_baseline_in_every_job_kind(kind, name, change, message):
    # restricted runs the same baseline expressions: once per kind is enough for it
    levels = (("baseline", training_pod_spec), ("restricted", restricted_pod_spec))
    for level, base in levels if kind == "Pod" else levels[:1]:
        spec = base()
        change(spec)
        found = denials(pod_security_policy(level), wrap(kind, spec), namespace=NS)
        assert any(message in m for m in found), (level, found)


def test_what_the_standards_allow_as_empty_values_is_allowed():
    spec = training_pod_spec()
    spec["securityContext"] = {"seLinuxOptions": {"type": "", "user": "", "role": "", "level": "s0:c1,c2"},
                               "sysctls": [{"name": "net.ipv4.tcp_keepalive_time", "value": "60"}]}
    _sc(spec).update(seLinuxOptions={"type": "container_t"}, procMount="Default", privileged=False)
    _container(spec)["ports"] = [{"containerPort": 8080, "hostPort": 0}]
    assert denials(pod_security_policy("baseline"), wrap("Pod", spec), namespace=NS) == []


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name,change,message", RESTRICTED_ONLY, ids=[h[0] for h in RESTRICTED_ONLY])
def test_restricted_denies_what_baseline_allows(kind, name, change, message):
    spec = restricted_pod_spec()
    change(spec)
    assert any(message in m for m in denials(pod_security_policy("restricted"), wrap(kind, spec), namespace=NS))
    baseline = copy.deepcopy(spec)
    assert denials(pod_security_policy("baseline"), wrap(kind, baseline), namespace=NS) == []


def test_pod_security_covers_every_job_kind_the_submitter_may_create():
    rules = pod_security_policy("baseline")["matchConstraints"]["resourceRules"]
    covered = {(g, r) for rule in rules for g in rule["apiGroups"] for r in rule["resources"]}
    granted = {(g, r) for g, resources in kind_resources() for r in resources}
    assert granted | {("", "pods"), ("", "pods/ephemeralcontainers")} == covered
    assert all(set(rule["operations"]) == {"CREATE", "UPDATE"} for rule in rules)
    assert pod_security_policy("baseline")["failurePolicy"] == "Fail"


# --- queue -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [k for k in KINDS if k != "Pod"])
def test_a_job_must_name_its_own_team_queue(kind):
    policy = queue_policy()
    assert denials(policy, wrap(kind, training_pod_spec()), namespace=NS) == []
    (missing,) = denials(policy, wrap(kind, training_pod_spec(), labels={}), namespace=NS)
    assert f"{QUEUE_LABEL}: {NS}-localqueue" in missing
    other = {QUEUE_LABEL: "hyperpod-ns-team-b-localqueue"}
    assert denials(policy, wrap(kind, training_pod_spec(), labels=other), namespace=NS)
    assert denials(policy, wrap(kind, training_pod_spec(), labels=QUEUE), namespace=NS, operation="UPDATE") == []
    assert denials(policy, wrap(kind, training_pod_spec(), labels={}), namespace=NS, operation="UPDATE")


@pytest.mark.parametrize("kind", KINDS)
def test_no_pod_picks_its_own_node_around_the_queue(kind):
    spec = training_pod_spec()
    spec["nodeName"] = "hyperpod-i-0123456789abcdef0"
    (found,) = denials(queue_policy(), wrap(kind, spec), namespace=NS)
    assert "spec.nodeName is not allowed" in found


def test_a_bare_pod_needs_the_queue_label_but_a_jobs_pod_is_queued_through_its_job():
    policy = queue_policy()
    assert denials(policy, wrap("Pod", training_pod_spec(), labels={}), namespace=NS)
    assert denials(policy, wrap("Pod", training_pod_spec()), namespace=NS) == []
    job_controller = {"username": "system:serviceaccount:kube-system:job-controller"}
    assert denials(policy, wrap("Pod", training_pod_spec(), labels={}, owner=True), namespace=NS,
                   user=job_controller) == []


def test_queue_names_follow_the_namespace_as_the_policy_expects(startup_spec, enterprise_spec):
    for spec in (startup_spec, enterprise_spec):
        for team in build_plan(spec).tenants:
            assert team.local_queue == team.namespace + LOCAL_QUEUE_SUFFIX


def test_kueue_manages_every_job_of_a_team_namespace():
    config = json.loads(kueue_manager_config(True))
    assert config["manageJobsWithoutQueueName"] is True
    assert config["managedJobsNamespaceSelector"] == {
        "matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]}


# --- the emitted objects -----------------------------------------------------------------------------------

def _by_kind(objs, kind):
    return [o for o in objs if o["kind"] == kind]


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_every_team_namespace_is_bound_to_its_pod_security_level_and_the_queue_policy(example, request):
    plan = build_plan(request.getfixturevalue(f"{example}_spec"))
    manifests = render(plan)
    policies = {p["metadata"]["name"]: p for p in _by_kind(manifests.cluster, "ValidatingAdmissionPolicy")}
    assert set(policies) == {pod_security_policy_name("baseline"), pod_security_policy_name("restricted"),
                             QUEUE_POLICY, TEAM_LIMITS_POLICY}
    assert policies[pod_security_policy_name("restricted")]["spec"] == pod_security_policy("restricted")
    for team in plan.tenants:
        bindings = {b["spec"]["policyName"]: b for b in _by_kind(manifests.teams[team.name],
                                                                  "ValidatingAdmissionPolicyBinding")}
        assert set(bindings) == {pod_security_policy_name(team.pod_security), QUEUE_POLICY, TEAM_LIMITS_POLICY}
        for b in bindings.values():
            assert b["spec"]["validationActions"] == ["Deny"]
            assert b["spec"]["matchResources"] == {
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": team.namespace}}}


def _spec(base, **team_a):
    base["teams"][0].update(team_a)
    return build_plan(parse_spec(base, today=TODAY))


def test_a_team_chooses_restricted_and_the_kueue_namespace_carries_the_level(base):
    base["scheduler"]["mode"] = "kueue"
    plan = _spec(base, podSecurity="restricted")
    manifests = render(plan)
    (binding,) = [b for b in _by_kind(manifests.teams["team-a"], "ValidatingAdmissionPolicyBinding")
                  if b["spec"]["policyName"].startswith("hyperpod-gov-pod-security")]
    assert binding["spec"]["policyName"] == "hyperpod-gov-pod-security-restricted"
    (ns,) = _by_kind(manifests.teams["team-a"], "Namespace")
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/audit"] == "restricted"
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/audit-version"] == "v1.33"
    assert ns["metadata"]["labels"][TEAM_LABEL] == "team-a"  # what Kueue's managedJobsNamespaceSelector selects
    (other,) = _by_kind(manifests.teams["team-b"], "Namespace")
    assert other["metadata"]["labels"]["pod-security.kubernetes.io/audit"] == "baseline"


# --- RBAC opt-ins --------------------------------------------------------------------------------------------

def _role(manifests, team, name):
    return next(r for r in _by_kind(manifests.teams[team], "Role") if r["metadata"]["name"] == name)


def test_exec_secrets_and_configmaps_are_off_by_default(base):
    manifests = render(_spec(base))
    for name in ("viewer", "submitter"):
        resources = {r for rule in _role(manifests, "team-a", name)["rules"] for r in rule["resources"]}
        assert not resources & {"pods/exec", "secrets", "configmaps"}, name


def test_a_team_opts_into_exec_secrets_and_configmaps_for_its_submitters_only(base):
    base["teams"][0]["access"].update(podExec=True, writeSecrets=True, writeConfigMaps=True)
    manifests = render(_spec(base))
    rules = _role(manifests, "team-a", "submitter")["rules"]
    assert {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create", "get"]} in rules
    assert {"apiGroups": [""], "resources": ["secrets"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]} in rules
    assert {"apiGroups": [""], "resources": ["configmaps"],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]} in rules
    viewer = {r for rule in _role(manifests, "team-a", "viewer")["rules"] for r in rule["resources"]}
    assert not viewer & {"pods/exec", "secrets", "configmaps"}
    other = {r for rule in _role(manifests, "team-b", "submitter")["rules"] for r in rule["resources"]}
    assert not other & {"pods/exec", "secrets", "configmaps"}


# --- egress --------------------------------------------------------------------------------------------------

def test_internet_egress_is_opt_in_and_never_reaches_link_local(base):
    base["teams"][0]["egress"] = [{"cidr": "0.0.0.0/0", "ports": [443]}]
    plan = _spec(base, allowInternetEgress=True)
    (policy,) = [p for p in _by_kind(render(plan).teams["team-a"], "NetworkPolicy")
                 if p["metadata"]["name"] == "allow-team-egress"]
    assert policy["spec"]["egress"][0]["to"] == [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["169.254.0.0/16"]}}]
