"""Dedicated node groups and shared storage in the manifests: the admission policies evaluated with cel-python on
crafted objects (every approved kind's pod template among them), the team volume and claim, the Kueue flavors."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hyperpod_gov.charts import render
from hyperpod_gov.charts.dedicated import DEDICATED_POLICY, dedicated_policy
from hyperpod_gov.charts.storage import CLAIM_POLICY, VOLUME_BINDER, claim_policy
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.workloads import WORKLOAD_KINDS
from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY
from tests.security import cel

KEY = "hyperpod-gov.io/dedicated"
def denials(policy: dict, obj: dict, *, namespace: str, user: str = "alice") -> list[str]:
    """The evaluator of tests/security/cel.py (Kubernetes' order; an evaluation error is a denial), as ``user``."""
    return cel.denials(policy, obj, namespace=namespace, user={"username": user})


def _matched(policy: dict, group: str, resource: str) -> bool:
    return any(group in r["apiGroups"] and resource in r["resources"] and "CREATE" in r["operations"]
               for r in policy["matchConstraints"]["resourceRules"])


def _pod_spec(**fields: Any) -> dict:
    return {"containers": [{"name": "main", "image": "public.ecr.aws/x/y:1"}], **fields}


def _pod(**fields: Any) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": _pod_spec(**fields)}


NS_A, NS_B = "hyperpod-ns-team-a", "hyperpod-ns-team-b"
TOLERATE_B = {"key": KEY, "operator": "Equal", "value": "team-b", "effect": "NoSchedule"}
CASES = {
    "nothing": ({}, True),
    "own toleration": ({"tolerations": [TOLERATE_B]}, True),
    "own toleration, operator omitted": ({"tolerations": [{"key": KEY, "value": "team-b"}]}, True),
    "other team's toleration": ({"tolerations": [{**TOLERATE_B, "value": "team-a"}]}, False),
    "Exists on the key": ({"tolerations": [{"key": KEY, "operator": "Exists"}]}, False),
    "Exists on every taint": ({"tolerations": [{"operator": "Exists"}]}, False),
    "other taints": ({"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}, True),
    "own nodeSelector": ({"nodeSelector": {KEY: "team-b"}}, True),
    "other nodeSelector": ({"nodeSelector": {KEY: "team-a"}}, False),
    "required In own": ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": KEY, "operator": "In", "values": ["team-b"]}]}]}}}}, True),
    "required In other": ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": KEY, "operator": "In",
                                                     "values": ["team-b", "team-a"]}]}]}}}}, False),
    "required Exists": ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": KEY, "operator": "Exists"}]}]}}}}, False),
    "required DoesNotExist": ({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": KEY, "operator": "DoesNotExist"}]}]}}}}, True),
    "preferred NotIn": ({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": KEY, "operator": "NotIn",
                                                           "values": ["team-b"]}]}}]}}}, False),
    "preferred In own": ({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": KEY, "operator": "In",
                                                           "values": ["team-b"]}]}}]}}}, True),
}


@pytest.mark.parametrize("case", CASES)
def test_a_pod_may_tolerate_and_select_only_its_own_teams_dedicated_nodes(case):
    fields, admitted = CASES[case]
    assert (denials(dedicated_policy(), _pod(**fields), namespace=NS_B) == []) is admitted


def _in_kind(kind, spec: dict) -> dict:
    obj = copy.deepcopy(kind.example("hyperpod-ns-team-b", "q", "p"))
    obj.update(apiVersion=kind.api_version, kind=kind.kind)

    def patch(node: Any) -> None:  # every pod template of the example gets the tolerations
        if isinstance(node, dict):
            if "containers" in node:
                node.update(copy.deepcopy(spec))
            for v in node.values():
                patch(v)
        elif isinstance(node, list):
            for v in node:
                patch(v)
    patch(obj["spec"])
    return obj


def _has_pod_template(kind) -> bool:
    plain = copy.deepcopy(kind.example("hyperpod-ns-team-b", "q", "p"))
    plain.update(apiVersion=kind.api_version, kind=kind.kind)
    return _in_kind(kind, {"tolerations": [TOLERATE_B]}) != plain


@pytest.mark.parametrize("kind", [k for k in WORKLOAD_KINDS if _has_pod_template(k)], ids=lambda k: k.kind)
def test_every_kinds_pod_template_is_checked(kind):
    policy = dedicated_policy()
    assert _matched(policy, kind.group, kind.resource)
    assert denials(policy, _in_kind(kind, {"tolerations": [TOLERATE_B]}), namespace=NS_B) == []
    assert denials(policy, _in_kind(kind, {"tolerations": [TOLERATE_B]}), namespace=NS_A) != []


def test_kinds_without_a_pod_template_are_held_to_the_rule_through_the_pods_their_operator_makes():
    """InferenceEndpointConfig, JumpStartModel and Workspace carry no tolerations or node selection of a team's
    own: the inference and spaces operators make the pods, and those Pods are checked like any other."""
    policy = dedicated_policy()
    assert [k.kind for k in WORKLOAD_KINDS if not _has_pod_template(k)]
    assert _matched(policy, "", "pods")
    assert denials(policy, _pod(tolerations=[TOLERATE_B]), namespace=NS_A) != []


def _claim(volume: str | None) -> dict:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                            "resources": {"requests": {"storage": "1Gi"}}}
    if volume is not None:
        spec["volumeName"] = volume
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"}, "spec": spec}


@pytest.mark.parametrize("volume, admitted", [
    ("hyperpod-ns-team-a.shared-fsx", True),
    ("hyperpod-ns-team-a.other", True),
    (None, True),
    ("hyperpod-ns-team-b.shared-fsx", False),
    ("hyperpod-ns-team-a-b.shared-fsx", False),  # team "a-b"'s volume is not team "a"'s ('.' separates)
    ("pvc-0123", False),
])
def test_a_claim_names_only_its_own_teams_volumes(volume, admitted):
    policy = claim_policy()
    assert _matched(policy, "", "persistentvolumeclaims")
    assert (denials(policy, _claim(volume), namespace=NS_A) == []) is admitted


def test_the_volume_binder_is_not_checked():
    assert denials(claim_policy(), _claim("pvc-0123"), namespace=NS_A, user=VOLUME_BINDER) == []


# --- the objects a spec gets -----------------------------------------------------------------------------------


def _spec(mode: str) -> dict:
    d = copy.deepcopy(BASE)
    d["scheduler"]["mode"] = mode
    d["cluster"]["instanceGroups"].append({"name": "b-reserved", "instanceType": "ml.g5.8xlarge", "count": 2,
                                           "dedicatedTo": "team-b"})
    d["teams"][1]["quota"] = [{"instanceType": "ml.g5.8xlarge", "count": 3}]
    d["cluster"]["sharedStorage"] = {"fsxLustre": {"storageCapacityGiB": 2400, "perUnitStorageThroughput": 125}}
    return d


@pytest.fixture(scope="module", params=["task-governance", "kueue"])
def rendered(request):
    plan = build_plan(parse_spec(_spec(request.param), today=TODAY))
    return plan, render(plan)


def _find(objs: list[dict], kind: str, name: str) -> dict:
    return next(o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name)


def test_each_team_gets_a_volume_of_its_own_directory_pinned_to_its_claim(rendered):
    plan, manifests = rendered
    for team in ("team-a", "team-b"):
        ns = f"hyperpod-ns-{team}"
        pv = _find(manifests.teams[team], "PersistentVolume", f"{ns}.shared-fsx")
        pvc = _find(manifests.teams[team], "PersistentVolumeClaim", "shared-fsx")
        assert pv["spec"]["claimRef"]["namespace"] == ns and pv["spec"]["claimRef"]["name"] == "shared-fsx"
        assert pvc["metadata"]["namespace"] == ns and pvc["spec"]["volumeName"] == f"{ns}.shared-fsx"
        assert pv["spec"]["csi"]["driver"] == "fsx.csi.aws.com"
        assert pv["spec"]["csi"]["volumeAttributes"]["mountname"] == "${hyperpod-gov:fsx-lustre:LustreMountName}/" + team
        assert pv["spec"]["storageClassName"] == "" == pvc["spec"]["storageClassName"]
        assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
        assert pv["metadata"]["labels"]["hyperpod-gov.io/team"] == team


def test_the_policies_are_bound_to_every_team_namespace(rendered):
    plan, manifests = rendered
    for policy in (DEDICATED_POLICY, CLAIM_POLICY):
        binding = _find(manifests.cluster, "ValidatingAdmissionPolicyBinding", policy)
        (expr,) = binding["spec"]["matchResources"]["namespaceSelector"]["matchExpressions"]
        assert expr["values"] == ["hyperpod-ns-team-a", "hyperpod-ns-team-b"]


def test_kueue_mode_gives_the_dedicated_groups_a_flavor_only_their_team_lists(rendered):
    plan, manifests = rendered
    flavors = {o["metadata"]["name"]: o for o in manifests.cluster if o["kind"] == "ResourceFlavor"}
    if not plan.emits_kueue_objects:
        assert flavors == {}
        return
    own = flavors["team-b.ml.g5.8xlarge"]["spec"]
    assert own["nodeLabels"] == {"node.kubernetes.io/instance-type": "ml.g5.8xlarge", KEY: "team-b"}
    assert own["tolerations"] == [TOLERATE_B]

    def queue(team: str) -> list[dict]:
        cq = _find(manifests.teams[team], "ClusterQueue", f"hyperpod-ns-{team}-clusterqueue")
        return cq["spec"]["resourceGroups"][0]["flavors"]

    b = queue("team-b")
    assert [f["name"] for f in b] == ["team-b.ml.g5.8xlarge", "ml.g5.8xlarge", "ml.p5.48xlarge"]
    gpu = {f["name"]: next(r for r in f["resources"] if r["name"] == "nvidia.com/gpu") for f in b}
    # 3 instances of quota (1 GPU each): 2 on the dedicated nodes, lent to nobody; 1 on the shared nodes.
    assert gpu["team-b.ml.g5.8xlarge"] == {"name": "nvidia.com/gpu", "nominalQuota": 2, "lendingLimit": 0,
                                           "borrowingLimit": 0}
    assert gpu["ml.g5.8xlarge"]["nominalQuota"] == 1
    assert "team-b.ml.g5.8xlarge" not in [f["name"] for f in queue("team-a")]


def test_dedicated_nodes_are_labelled_and_tainted_through_the_plan(rendered):
    plan, _ = rendered
    group = next(g for g in plan.instance_groups if g.name == "b-reserved")
    assert group.kubernetes_labels[KEY] == "team-b"
    assert [(t.key, t.value, t.effect) for t in group.taints] == [(KEY, "team-b", "NoSchedule")]
    assert all(KEY not in g.kubernetes_labels and not g.taints for g in plan.instance_groups if g is not group)


def test_an_existing_file_system_is_named_as_the_spec_gives_it():
    d = copy.deepcopy(BASE)
    d["cluster"].pop("admins")
    d["cluster"]["vpc"] = {"cidr": "10.0.0.0/16"}
    d["cluster"]["existing"] = {"hyperPodClusterArn": "arn:aws:sagemaker:us-east-1:111111111111:cluster/abcd1234efgh",
                                "eksClusterName": "ml-eks", "vpcId": "vpc-0123456789abcdef0",
                                "subnetIds": ["subnet-0123456789abcdef0"], "securityGroupId": "sg-0123456789abcdef0"}
    d["cluster"]["sharedStorage"] = {"fsxLustre": {
        "fileSystemId": "fs-0123456789abcdef0", "dnsName": "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com",
        "mountName": "abcdef12"}}
    plan = build_plan(parse_spec(d, today=TODAY))
    pv = _find(render(plan).teams["team-a"], "PersistentVolume", "hyperpod-ns-team-a.shared-fsx")
    assert pv["spec"]["csi"]["volumeHandle"] == "fs-0123456789abcdef0::team-a"
    assert pv["spec"]["csi"]["volumeAttributes"] == {
        "dnsname": "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com", "mountname": "abcdef12/team-a"}
    assert "aws-fsx-csi-driver" not in plan.addon_versions  # the existing cluster runs its own driver


def test_the_kueue_objects_with_a_dedicated_flavor_are_valid_v1beta2():
    from tests.kueue_schema import kueue_errors

    plan = build_plan(parse_spec(_spec("kueue"), today=TODAY))
    manifests = render(plan)
    objs = [o for o in manifests.all() if o["apiVersion"].startswith("kueue.x-k8s.io/")]
    assert {o["kind"] for o in objs} >= {"ResourceFlavor", "ClusterQueue"}
    assert [(o["kind"], o["metadata"]["name"], e) for o in objs for e in kueue_errors(o)] == []


def test_drift_reads_every_kind_these_manifests_hold(rendered):
    from hyperpod_gov.live.k8s import KINDS

    plan, manifests = rendered
    assert {o["kind"] for o in manifests.all()} - set(KINDS) == set()
    assert KINDS["PersistentVolume"] == ("persistentvolumes", False)
