"""Drift compares each Kubernetes object on the whole body hyperpod-gov owns, not on one governed member (issue 54).

Each case renders the plan's manifests, serves them on a local API server (tests/live/fake_k8s.py, which adds the
metadata and defaults a server adds) with one object tampered, runs the Kubernetes side of drift, and checks the
exact items."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Callable

import pytest

from hyperpod_gov.charts import render
from hyperpod_gov.charts.fields import TEAM_OBJECTS, Governed, ObjectRow, planned_objects
from hyperpod_gov.charts.tenant import LIMIT_RANGE
from hyperpod_gov.live.drift import to_text
from hyperpod_gov.live.k8s import connect_kubeconfig, kinds_to_read, kubernetes_drift, read_kubernetes
from hyperpod_gov.live.k8s_compare import compare_kubernetes, matches, planned_kubernetes, same
from hyperpod_gov.plan import build_plan, names
from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY

from .conftest import k8s_items

NS = "hyperpod-ns-speech"  # enterprise.yaml's team speech (task-governance mode)
QUEUE_BINDING = "hyperpod-gov-team-queue-speech"
LIMITS_BINDING = "hyperpod-gov-team-limits-speech"
DENY = ["Deny"]
KUBE_DNS_PEER = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                 "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]


def _pod_security_binding(plan: Any) -> str:
    team = next(t for t in plan.tenants if t.name == "speech")
    return f"hyperpod-gov-pod-security-{team.pod_security}-speech"


def _audit(obj: dict[str, Any]) -> None:
    obj["spec"]["validationActions"] = ["Audit"]


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(obj: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        inner = obj
        for part in parents:
            inner = inner[part]
        if value is _DELETE:
            del inner[last]
        else:
            inner[last] = value
    return change


_DELETE = object()

# (case, kind, name (a callable of the plan for the pod-security binding), change, [(field, expected, actual)])
TAMPERED = [
    ("queue binding set to Audit", "ValidatingAdmissionPolicyBinding", QUEUE_BINDING, _audit,
     [("spec.validationActions", DENY, ["Audit"])]),
    ("pod-security binding set to Audit", "ValidatingAdmissionPolicyBinding", _pod_security_binding, _audit,
     [("spec.validationActions", DENY, ["Audit"])]),
    ("team-limits binding without its parameters", "ValidatingAdmissionPolicyBinding", LIMITS_BINDING,
     _set("spec.paramRef", _DELETE),
     [("spec.paramRef", {"name": "speech", "namespace": "hyperpod-gov-system", "parameterNotFoundAction": "Deny"},
       None)]),
    ("default-deny no longer denies egress", "NetworkPolicy", "default-deny",
     _set("spec.policyTypes", ["Ingress"]), [("spec.policyTypes", ["Ingress", "Egress"], ["Ingress"])]),
    ("default-deny selects no pod", "NetworkPolicy", "default-deny",
     _set("spec.podSelector", {"matchLabels": {"nothing": "here"}}),
     [("spec.podSelector", {}, {"matchLabels": {"nothing": "here"}})]),
    ("default-deny given an allow-all egress rule", "NetworkPolicy", "default-deny",
     _set("spec.egress", [{}]), [("spec.egress", None, [{}])]),
    ("allow-same-namespace's ingress rules removed", "NetworkPolicy", "allow-same-namespace",
     _set("spec.ingress", _DELETE), [("spec.ingress", [{"from": [{"podSelector": {}}]}], None)]),
    ("DNS policy to any destination", "NetworkPolicy", "allow-dns", _set("spec.egress", [{"ports": DNS_PORTS}]),
     [("spec.egress", [{"to": [KUBE_DNS_PEER], "ports": DNS_PORTS}], [{"ports": DNS_PORTS}])]),
    ("DNS policy on any port", "NetworkPolicy", "allow-dns", _set("spec.egress", [{"to": [KUBE_DNS_PEER]}]),
     [("spec.egress", [{"to": [KUBE_DNS_PEER], "ports": DNS_PORTS}], [{"to": [KUBE_DNS_PEER]}])]),
    ("DNS policy to every namespace's kube-dns", "NetworkPolicy", "allow-dns",
     lambda o: o["spec"]["egress"][0]["to"][0].update(namespaceSelector={}),
     [("spec.egress", [{"to": [KUBE_DNS_PEER], "ports": DNS_PORTS}],
       [{"to": [{**KUBE_DNS_PEER, "namespaceSelector": {}}], "ports": DNS_PORTS}])]),
]


@pytest.mark.parametrize("case,kind,name,change,expected", TAMPERED, ids=[t[0] for t in TAMPERED])
def test_a_tampered_team_object_is_exactly_the_expected_items(plans, served, tmp_path, case, kind, name, change,
                                                              expected):
    plan = plans["enterprise"]
    fake, path = served(plan, tmp_path)
    name = name(plan) if callable(name) else name
    namespace = NS if kind == "NetworkPolicy" else ""
    change(fake.find(kind, name, namespace))
    display = f"{namespace}/{name}" if namespace else name
    # The JSON items of LIVE.md: kind, name, change, field, expected, actual (nothing else).
    assert k8s_items(plan, path) == [{"kind": kind, "name": display, "change": "changed", "field": field,
                                      "expected": e, "actual": a} for field, e, a in expected]


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_an_untampered_cluster_with_server_defaults_shows_no_drift(plans, served, tmp_path, example):
    plan = plans[example]
    fake, path = served(plan, tmp_path)
    binding = next(o for (k, _, _), o in fake.objects.items() if k == "ValidatingAdmissionPolicyBinding")
    assert binding["spec"]["matchResources"]["matchPolicy"] == "Equivalent"  # the fake adds the server's defaults
    for (kind, _, _), obj in fake.objects.items():
        obj["metadata"].setdefault("annotations", {})["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
        obj["metadata"].setdefault("labels", {})["other-tool.example.com/seen"] = "yes"
        if kind == "ValidatingAdmissionPolicyBinding":
            obj["spec"]["matchResources"]["namespaceSelector"].setdefault("matchExpressions", [])
        if kind == "NetworkPolicy":
            obj["spec"].setdefault("ingress", [])  # an absent list may come back empty
    assert k8s_items(plan, path) == []


def test_a_port_without_protocol_matches_the_servers_tcp_default():
    assert matches({"ports": [{"port": 443}]}, {"ports": [{"port": 443, "protocol": "TCP"}]})
    assert not matches({"podSelector": {}}, {"podSelector": {"matchLabels": {"a": "b"}}})
    assert same({"matchLabels": {}}, {}) and not same({"a": "1"}, {"a": "1", "b": "2"})


# --- the members that were compared for presence only -------------------------------------------------------------

MORE = [
    ("ConfigMap", "hyperpod-gov-system", "speech", "an allowed priority class added to the team's parameters",
     lambda o: o["data"].update({"priority-class.urgent": "urgent"}), "data"),
    ("RoleBinding", NS, "viewers", "a viewers binding onto cluster-admin",
     lambda o: o["roleRef"].update(kind="ClusterRole", name="cluster-admin"), "roleRef.kind|roleRef.name"),
    ("ClusterRole", "", "hyperpod-ns-speech-queue-reader", "the queue reader may read every ClusterQueue",
     lambda o: o["rules"][0].pop("resourceNames"), "rules"),
    ("LimitRange", NS, LIMIT_RANGE, "no default requests", lambda o: o["spec"].update(limits=[]), "spec"),
    ("ServiceAccount", NS, None, "a workload identity without its team label",
     lambda o: o["metadata"]["labels"].pop(names.TEAM_LABEL), "metadata.labels"),
]


@pytest.mark.parametrize("kind,namespace,name,case,change,fields", MORE, ids=[m[3] for m in MORE])
def test_the_rest_of_the_body_is_compared(plans, served, tmp_path, kind, namespace, name, case, change, fields):
    plan = plans["enterprise"]
    fake, path = served(plan, tmp_path)
    if name is None:
        name = next(n for (k, ns, n) in fake.objects if k == kind and ns == namespace)
    change(fake.find(kind, name, namespace if kind != "ClusterRole" else ""))
    items = k8s_items(plan, path)
    assert [(i["kind"], i["field"]) for i in items] == [(kind, f) for f in fields.split("|")]


def test_a_governed_member_is_reported_once_with_its_row(plans, served, tmp_path):
    plan = plans["enterprise"]
    fake, path = served(plan, tmp_path)
    fake.find("ValidatingAdmissionPolicyBinding", _pod_security_binding(plan))["spec"]["policyName"] = "other"
    fake.find("NetworkPolicy", "allow-vpc-https", NS)["spec"]["egress"].append({})
    side = kubernetes_drift(plan, lambda: connect_kubeconfig(path))
    assert [(i.name, i.field, i.label) for i in side.items] == [
        (_pod_security_binding(plan), "spec.policyName", "pod security; spec teams[].podSecurity"),
        (f"{NS}/allow-vpc-https", "spec.egress", "HTTPS to the VPC; spec cluster.vpc")]
    assert "spec.policyName (pod security; spec teams[].podSecurity) is \"other\" on the cluster" in to_text(
        side.items, cluster_name="c", region="r")


# --- several governed members of one object ------------------------------------------------------------------------


def test_the_namespace_governs_its_contract_and_its_labels(plans, served, tmp_path):
    plan = plans["startup"]  # kueue mode: the chart owns the namespaces
    team = plan.tenants[0]
    row, _ = planned_objects(plan, team)[("Namespace", team.namespace)]
    assert set(row.planned(plan, team)) == {"metadata.annotations", "metadata.labels"}
    fake, path = served(plan, tmp_path)
    ns = fake.find("Namespace", team.namespace)
    ns["metadata"]["labels"]["pod-security.kubernetes.io/audit"] = "privileged"
    ns["metadata"]["annotations"][next(iter(ns["metadata"]["annotations"]))] = "changed"
    items = k8s_items(plan, path)
    assert [(i["kind"], i["name"], i["field"]) for i in items] == [
        ("Namespace", team.namespace, "metadata.annotations"), ("Namespace", team.namespace, "metadata.labels")]


def test_every_governed_member_is_what_the_charts_render(plans):
    for plan in plans.values():
        manifests = render(plan)
        for team in plan.tenants:
            rendered = {(o["kind"], o["metadata"]["name"]): o for o in manifests.teams[team.name]}
            for key, (row, _) in planned_objects(plan, team).items():
                for path, (_, value) in row.planned(plan, team).items():
                    inner: Any = rendered[key]
                    for part in path.split("."):
                        inner = inner[part]
                    assert inner == value, (team.name, key, path)


def _with_a_second_member(rows: tuple[ObjectRow, ...]) -> tuple[ObjectRow, ...]:
    """The table with the LimitRange governing its labels too, beside its spec."""
    second = Governed("metadata.labels", "the defaults' labels", "teams[].name",
                      lambda plan, t: {"app.kubernetes.io/managed-by": "hyperpod-gov"})
    return tuple(dataclasses.replace(r, also=r.also + (second,)) if r.kind == "LimitRange" else r for r in rows)


def test_a_second_governed_member_of_an_object_keeps_both(plans, served, tmp_path):
    plan = plans["enterprise"]
    team = next(t for t in plan.tenants if t.name == "speech")
    rows = _with_a_second_member(TEAM_OBJECTS)
    row, value = planned_objects(plan, team, rows)[("LimitRange", LIMIT_RANGE)]
    assert value == {"limits": [{"type": "Container", "defaultRequest": {"cpu": "1", "memory": "2Gi"}}]}
    assert [g.member for g in row.governed()] == ["spec", "metadata.labels"]
    planned = planned_kubernetes(plan, rows)
    limits = next(p for p in planned if p.key == ("LimitRange", NS, LIMIT_RANGE))
    assert list(limits.members) == ["metadata.labels", "spec"]
    assert limits.words == {"spec": "default requests", "metadata.labels": "the defaults' labels; spec teams[].name"}

    fake, path = served(plan, tmp_path)
    obj = fake.find("LimitRange", LIMIT_RANGE, NS)
    obj["metadata"]["labels"].clear()
    obj["spec"]["limits"] = []
    live = read_kubernetes(connect_kubeconfig(path), kinds_to_read(plan, planned))
    items = [i for i in compare_kubernetes(planned, live) if i.kind == "LimitRange"]
    assert [(i.field, i.label) for i in items] == [("metadata.labels", "the defaults' labels; spec teams[].name"),
                                                   ("spec", "default requests")]


def test_a_second_row_for_the_same_object_is_refused_not_swallowed(plans):
    plan = plans["enterprise"]
    team = plan.tenants[0]
    limits = next(r for r in TEAM_OBJECTS if r.kind == "LimitRange")
    second = dataclasses.replace(limits, label="a second row", member="metadata.labels",
                                 get=lambda plan, t: {"app.kubernetes.io/managed-by": "hyperpod-gov"})
    with pytest.raises(ValueError, match=r"LimitRange hyperpod-gov-defaults of team [\w-]+ has two rows.*also="):
        planned_objects(plan, team, TEAM_OBJECTS + (second,))


# --- shared storage: the team's volume and claim ------------------------------------------------------------------


@pytest.fixture(scope="module")
def storage_plan() -> Any:
    d = copy.deepcopy(BASE)
    d["scheduler"]["mode"] = "kueue"
    d["cluster"]["sharedStorage"] = {"fsxLustre": {"storageCapacityGiB": 2400, "perUnitStorageThroughput": 125}}
    return build_plan(parse_spec(d, today=TODAY))


def _deployed(obj: Any) -> Any:
    """The object as the deploy leaves it: the file system's attributes in place of the plan's placeholders."""
    if isinstance(obj, dict):
        return {k: _deployed(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_deployed(v) for v in obj]
    if isinstance(obj, str):
        return (obj.replace("${hyperpod-gov:fsx-lustre:Id}", "fs-0123456789abcdef0")
                .replace("${hyperpod-gov:fsx-lustre:DNSName}", "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com")
                .replace("${hyperpod-gov:fsx-lustre:LustreMountName}", "abcdefgh"))
    return obj


VOLUME = "hyperpod-ns-team-a.shared-fsx"
STORAGE = [
    ("untampered", None, None),
    ("the volume's handle points at another directory",
     lambda fake: fake.find("PersistentVolume", VOLUME)["spec"]["csi"].update(volumeHandle="fs-0123456789abcdef0::x"),
     [("PersistentVolume", VOLUME, "spec.csi")]),
    ("the volume mounts another directory",
     lambda fake: fake.find("PersistentVolume", VOLUME)["spec"]["csi"]["volumeAttributes"].update(mountname="/"),
     [("PersistentVolume", VOLUME, "spec.csi.volumeAttributes")]),
    ("the volume deleted with its claim",
     lambda fake: fake.find("PersistentVolume", VOLUME)["spec"].update(persistentVolumeReclaimPolicy="Delete"),
     [("PersistentVolume", VOLUME, "spec.persistentVolumeReclaimPolicy")]),
    ("the claim asks for more",
     lambda fake: fake.find("PersistentVolumeClaim", "shared-fsx", "hyperpod-ns-team-a")["spec"].update(
         resources={"requests": {"storage": "2400Gi"}}),
     [("PersistentVolumeClaim", "hyperpod-ns-team-a/shared-fsx", "spec.resources")]),
]


@pytest.mark.parametrize("case,change,expected", STORAGE, ids=[s[0] for s in STORAGE])
def test_the_shared_volume_and_claim_are_compared_on_their_body(storage_plan, served, tmp_path, case, change,
                                                                expected):
    fake, path = served(storage_plan, tmp_path)
    fake.objects = {k: _deployed(o) for k, o in fake.objects.items()}
    if change:
        change(fake)
    assert [(i["kind"], i["name"], i["field"]) for i in k8s_items(storage_plan, path)] == (expected or [])


def test_a_quantity_the_api_server_writes_in_its_canonical_form_is_no_drift():
    """The API server stores "0Gi" as "0" and "1024Mi" as "1Gi": the same quantity, not a change."""
    from hyperpod_gov.live.k8s_compare import matches

    assert matches({"lendingLimit": "0Gi"}, {"lendingLimit": "0"})
    assert matches({"memory": "1024Mi"}, {"memory": "1Gi"})
    assert matches({"cpu": "500m"}, {"cpu": "0.5"})
    assert not matches({"memory": "1Gi"}, {"memory": "2Gi"})
    assert not matches({"validationActions": ["Deny"]}, {"validationActions": ["Audit"]})
    assert not matches({"enabled": True}, {"enabled": "1"})
