"""HyperPod-managed Karpenter's objects (charts/karpenter.py): a HyperpodNodeClass and a NodePool per autoscaled
group of examples/elastic.yaml, valid against the vendored CRDs, in k8s/, drift and diff."""

from __future__ import annotations

import copy
import json
import re
import subprocess

import pytest
import yaml

from hyperpod_gov.charts import governance_manifests, render
from hyperpod_gov.charts.karpenter import dont_lend_types
from hyperpod_gov.charts.render import dump_manifests
from hyperpod_gov.diff import resource_diff
from hyperpod_gov.live.k8s import KINDS, connect_kubeconfig, kinds_to_read, kubernetes_drift
from hyperpod_gov.live.k8s_compare import planned_kubernetes
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import load_spec, parse_spec, read_yaml
from tests.conftest import EXAMPLES, ROOT, TODAY
from tests.karpenter_schema import CRDS, karpenter_errors
from tests.live.fake_k8s import FakeKubernetes, kubeconfig

KARPENTER_KINDS = ("HyperpodNodeClass", "NodePool")


def _plan(data: dict):
    return build_plan(parse_spec(data, today=TODAY))


def _karpenter(manifests) -> dict[tuple[str, str], dict]:
    return {(o["kind"], o["metadata"]["name"]): o for o in manifests.cluster if o["kind"] in KARPENTER_KINDS}


def _pool(manifests, name: str) -> dict:
    return _karpenter(manifests)[("NodePool", name)]["spec"]


def _variant() -> dict:
    """The elastic example with gpu-elastic dedicated to chatbot (labels and a taint of its own; researchers give
    up their ml.g5.2xlarge quota so the dedicated instances fit) and an autoscaled MIG group."""
    data = read_yaml(EXAMPLES / "elastic.yaml")
    groups = data["cluster"]["instanceGroups"]
    groups[1].update(dedicatedTo="chatbot", count=4, labels={"workload": "serving"},
                     taints=[{"key": "serving", "value": "true", "effect": "NoSchedule"}])
    del data["teams"][1]["quota"][0]
    groups.append({"name": "mig-pool", "instanceType": "ml.p4d.24xlarge", "count": 2, "autoscale": True,
                   "mig": {"profile": "mig-1g.5gb"}})
    return data


@pytest.fixture(scope="module")
def elastic():
    plan = build_plan(load_spec(EXAMPLES / "elastic.yaml", today=TODAY))
    return plan, render(plan)


@pytest.fixture(scope="module")
def variant():
    plan = _plan(_variant())
    return plan, render(plan)


# --- what each autoscaled group gets ---------------------------------------------------------------------------


def test_each_autoscaled_group_gets_a_node_class_and_a_pool_that_references_it(elastic):
    _, manifests = elastic
    objects = _karpenter(manifests)
    assert sorted(objects) == [("HyperpodNodeClass", "burst"), ("HyperpodNodeClass", "gpu-elastic"),
                               ("NodePool", "burst"), ("NodePool", "gpu-elastic")]  # gpu-base does not autoscale
    for name in ("burst", "gpu-elastic"):
        node_class = objects[("HyperpodNodeClass", name)]
        assert node_class["apiVersion"] == "karpenter.sagemaker.amazonaws.com/v1"
        assert node_class["spec"] == {"instanceGroups": [name]}
        pool = objects[("NodePool", name)]
        assert pool["apiVersion"] == "karpenter.sh/v1"
        assert pool["spec"]["template"]["spec"]["nodeClassRef"] == {
            "group": "karpenter.sagemaker.amazonaws.com", "kind": "HyperpodNodeClass", "name": name}
        assert pool["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "hyperpod-gov"}
        assert "namespace" not in pool["metadata"] and "namespace" not in node_class["metadata"]


def test_the_limits_allow_count_nodes(elastic):
    _, manifests = elastic
    # gpu-elastic: 9 x ml.g5.2xlarge (8 vCPU, 32 GiB, 1 A10G)
    assert _pool(manifests, "gpu-elastic")["limits"] == {"cpu": "72", "memory": "288Gi", "nvidia.com/gpu": "9"}
    # burst: 8 of ml.g5.12xlarge (48 vCPU, 192 GiB, 4 A10G) or ml.g6e.12xlarge (48 vCPU, 384 GiB, 4 L40S): each
    # resource at the larger type's value, so 8 of either fit
    assert _pool(manifests, "burst")["limits"] == {"cpu": "384", "memory": "3072Gi", "nvidia.com/gpu": "32"}


def test_the_requirements_are_the_groups_types_on_amd64_and_no_zone(elastic):
    _, manifests = elastic
    assert _pool(manifests, "burst")["template"]["spec"]["requirements"] == [
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["ml.g5.12xlarge", "ml.g6e.12xlarge"]},
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
    ]
    keys = {r["key"] for r in _pool(manifests, "gpu-elastic")["template"]["spec"]["requirements"]}
    assert keys == {"node.kubernetes.io/instance-type", "kubernetes.io/arch"}


def test_nodes_expire_never_and_consolidate_after_two_minutes_within_a_budget(elastic):
    _, manifests = elastic
    for name in ("burst", "gpu-elastic"):
        spec = _pool(manifests, name)
        assert spec["template"]["spec"]["expireAfter"] == "Never"
        assert spec["disruption"]["consolidateAfter"] == "2m"  # non-zero: time for graceful eviction (AWS)
        assert spec["disruption"]["budgets"] == [{"nodes": "10%"}]


def test_a_pool_with_a_dont_lend_teams_quota_is_consolidated_only_when_empty(elastic):
    """chatbot (DontLend) holds quota on ml.g5.2xlarge, gpu-elastic's type: its admitted work is never evicted to
    repack nodes. burst's types carry no DontLend quota."""
    _, manifests = elastic
    assert _pool(manifests, "gpu-elastic")["disruption"]["consolidationPolicy"] == "WhenEmpty"
    assert _pool(manifests, "burst")["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"


def _dont_lend_types_of(data: dict) -> set[str]:
    """Straight from the spec's YAML: the types a DontLend team has quota on."""
    return {q["instanceType"] for t in data["teams"] if t.get("sharing", {}).get("strategy") == "DontLend"
            for q in t.get("quota", [])}


def _group_types(group: dict) -> set[str]:
    return set(group.get("instanceTypes") or [group["instanceType"]])


def _dont_lend_violations(data: dict, manifests) -> list[str]:
    """Autoscaled groups whose types carry a DontLend team's quota but whose pool may consolidate underutilized
    nodes (the other way round too: a policy the types do not call for)."""
    reserved = _dont_lend_types_of(data)
    out = []
    for group in data["cluster"]["instanceGroups"]:
        if group.get("autoscale"):
            policy = _pool(manifests, group["name"])["disruption"]["consolidationPolicy"]
            if policy != ("WhenEmpty" if _group_types(group) & reserved else "WhenEmptyOrUnderutilized"):
                out.append(f"{group['name']}: {policy}")
    return out


@pytest.mark.parametrize("dont_lend", [(), ("chatbot",), ("researchers",), ("chatbot", "researchers"),
                                       ("ml-engineering", "researchers", "chatbot")])
def test_no_group_with_a_dont_lend_teams_quota_gets_underutilized_consolidation(dont_lend):
    data = read_yaml(EXAMPLES / "elastic.yaml")
    for team in data["teams"]:
        team["sharing"] = {"strategy": "DontLend"} if team["name"] in dont_lend else {"strategy": "Lend"}
    manifests = render(_plan(data))
    assert _dont_lend_violations(data, manifests) == []
    policies = {_pool(manifests, n)["disruption"]["consolidationPolicy"] for n in ("burst", "gpu-elastic")}
    assert ("WhenEmpty" in policies) == bool(dont_lend)  # not vacuous: some DontLend team reaches a pool


def test_the_dont_lend_check_catches_a_pool_that_consolidates_a_dont_lend_teams_nodes(elastic):
    plan, manifests = elastic
    data = read_yaml(EXAMPLES / "elastic.yaml")
    assert dont_lend_types(plan.teams) == {"ml.g5.2xlarge"} == _dont_lend_types_of(data)
    broken = copy.deepcopy(manifests)
    _pool(broken, "gpu-elastic")["disruption"]["consolidationPolicy"] = "WhenEmptyOrUnderutilized"
    assert _dont_lend_violations(data, broken) == ["gpu-elastic: WhenEmptyOrUnderutilized"]


def test_a_dedicated_groups_labels_and_taints_are_on_the_pools_nodes(variant):
    _, manifests = variant
    template = _pool(manifests, "gpu-elastic")["template"]
    assert template["metadata"]["labels"] == {"hyperpod-gov.io/dedicated": "chatbot", "workload": "serving"}
    assert template["spec"]["taints"] == [
        {"key": "hyperpod-gov.io/dedicated", "value": "chatbot", "effect": "NoSchedule"},
        {"key": "serving", "value": "true", "effect": "NoSchedule"},
    ]
    assert _pool(manifests, "gpu-elastic")["limits"] == {"cpu": "32", "memory": "128Gi", "nvidia.com/gpu": "4"}


def test_a_partitioned_groups_pool_carries_the_mig_label(variant):
    _, manifests = variant
    spec = _pool(manifests, "mig-pool")
    assert spec["template"]["metadata"]["labels"] == {"nvidia.com/mig.config": "all-1g.5gb"}
    assert "taints" not in spec["template"]["spec"]
    # 2 x ml.p4d.24xlarge (96 vCPU, 1152 GiB, 8 A100)
    assert spec["limits"] == {"cpu": "192", "memory": "2304Gi", "nvidia.com/gpu": "16"}


def test_a_group_without_labels_or_taints_has_neither_in_its_template(elastic):
    _, manifests = elastic
    template = _pool(manifests, "burst")["template"]
    assert "metadata" not in template and "taints" not in template["spec"]


@pytest.mark.parametrize("example", ["enterprise", "startup", "existing"])
def test_nothing_is_emitted_where_no_group_autoscales(example):
    manifests = governance_manifests(build_plan(load_spec(EXAMPLES / f"{example}.yaml", today=TODAY)))
    assert not [o for o in manifests.all() if o["kind"] in KARPENTER_KINDS]


def test_the_objects_come_after_every_other_cluster_wide_object(elastic):
    _, manifests = elastic
    kinds = [o["kind"] for o in manifests.cluster]
    first = min(kinds.index(k) for k in KARPENTER_KINDS)
    assert set(kinds[first:]) == set(KARPENTER_KINDS)
    assert kinds[first:] == ["HyperpodNodeClass", "NodePool"] * 2  # a pool after the class it names


# --- the schemas -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["elastic", "variant"])
def test_every_object_validates_against_its_crd(which, request):
    _, manifests = request.getfixturevalue(which)
    objects = _karpenter(manifests)
    assert objects
    assert {key: karpenter_errors(o) for key, o in objects.items()} == {key: [] for key in objects}


def _broken(elastic, kind: str, name: str = "gpu-elastic") -> dict:
    return copy.deepcopy(_karpenter(elastic[1])[(kind, name)])


def test_a_pool_without_its_node_class_ref_fails_the_schema(elastic):
    pool = _broken(elastic, "NodePool")
    del pool["spec"]["template"]["spec"]["nodeClassRef"]
    assert any("'nodeClassRef' is a required property" in e for e in karpenter_errors(pool))


@pytest.mark.parametrize("breaks, expected", [
    (lambda s: s["disruption"].update(consolidationPolicy="WhenIdle"), "is not one of"),
    (lambda s: s["disruption"].update(consolidateAfter="2 minutes"), "does not match"),
    (lambda s: s["template"]["spec"].update(expireAfter="30d"), "does not match"),
    (lambda s: s["limits"].update(memory="lots"), "does not match"),
    (lambda s: s["template"]["spec"]["requirements"][0].update(values=[]), "CEL rule failed"),
    (lambda s: s["template"]["spec"]["nodeClassRef"].update(name=""), "CEL rule failed"),
    (lambda s: s["template"].update(metadata={"labels": {"kubernetes.io/hostname": "x"}}), "CEL rule failed"),
    (lambda s: s["template"]["spec"].update(terminationGracePeriodSeconds=30), "unknown field"),
])
def test_a_broken_pool_fails_the_schema(elastic, breaks, expected):
    pool = _broken(elastic, "NodePool")
    breaks(pool["spec"])
    assert any(expected in e for e in karpenter_errors(pool)), karpenter_errors(pool)


def test_a_node_class_of_more_than_ten_groups_or_none_fails_the_schema(elastic):
    node_class = _broken(elastic, "HyperpodNodeClass")
    node_class["spec"]["instanceGroups"] = [f"g{i}" for i in range(11)]
    assert any("is too long" in e for e in karpenter_errors(node_class))
    node_class["spec"] = {}
    assert any("'instanceGroups' is a required property" in e for e in karpenter_errors(node_class))
    node_class["spec"] = {"instanceGroups": ["a"], "subnets": ["subnet-1"]}  # not a documented field
    assert any("unknown field" in e for e in karpenter_errors(node_class))


def test_the_vendored_node_pool_crd_is_upstream_karpenter_v1_6_0_unmodified():
    path = CRDS / "karpenter.sh_nodepools.yaml"
    blob = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout
    assert blob.strip() == "c31c4050b7c6a465d8c25dc20448d844227ccd70"  # kubernetes-sigs/karpenter v1.6.0's blob


def test_the_node_class_crd_says_it_is_derived_from_the_aws_docs():
    text = (CRDS / "karpenter.sagemaker.amazonaws.com_hyperpodnodeclasses.yaml").read_text()
    assert text.startswith("# NOT PUBLISHED BY AWS.")
    url = "https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-autoscaling-nodeclass.html"
    assert url in text and url in (CRDS / "README.md").read_text()
    crd = yaml.safe_load(text)
    assert (crd["spec"]["group"], crd["spec"]["names"]["plural"], crd["spec"]["names"]["kind"]) == (
        "karpenter.sagemaker.amazonaws.com", "hyperpodnodeclasses", "HyperpodNodeClass")


# --- k8s/, drift and diff --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def synthesized(elastic, tmp_path_factory):
    """``hyperpod-gov synth`` of the elastic example: the cloud assembly and k8s/."""
    from hyperpod_gov.stacks.app import synth

    plan, _ = elastic
    out = tmp_path_factory.mktemp("elastic")
    return plan, synth(plan, out), out


def test_synth_writes_them_to_k8s_and_the_governance_stack_applies_them_after_the_cluster(synthesized):
    plan, assembly, out = synthesized
    written = [o for o in yaml.safe_load_all((out / "k8s" / "cluster.yaml").read_text())
               if o["kind"] in KARPENTER_KINDS]
    assert [(o["kind"], o["metadata"]["name"]) for o in written] == [
        ("HyperpodNodeClass", "burst"), ("NodePool", "burst"),
        ("HyperpodNodeClass", "gpu-elastic"), ("NodePool", "gpu-elastic")]
    stacks = {s.stack_name: s for s in assembly.stacks}
    governance = stacks[plan.stacks.governance]
    (applied,) = [r for r in governance.template["Resources"].values()
                  if r["Type"] == "Custom::AWSCDK-EKS-KubernetesResource"]
    manifest = json.loads(applied["Properties"]["Manifest"])
    assert [(o["kind"], o["metadata"]["name"]) for o in manifest if o["kind"] in KARPENTER_KINDS] == [
        (o["kind"], o["metadata"]["name"]) for o in written]
    # the capacity stack holds the HyperPod cluster (AWS::SageMaker::Cluster): deployed first
    assert plan.stacks.capacity in [d.id for d in governance.dependencies]
    capacity = stacks[plan.stacks.capacity].template["Resources"]
    assert any(r["Type"] == "AWS::SageMaker::Cluster" for r in capacity.values())


def test_drift_plans_and_reads_them(elastic):
    plan, _ = elastic
    planned = {(p.kind, p.name) for p in planned_kubernetes(plan)}
    assert {("NodePool", "gpu-elastic"), ("HyperpodNodeClass", "burst")} <= planned
    assert set(KARPENTER_KINDS) <= set(KINDS)
    kinds = kinds_to_read(plan, ())  # a cluster with autoScaling lists them even with no pool planned
    assert kinds["NodePool"] == "karpenter.sh/v1"
    assert kinds["HyperpodNodeClass"] == "karpenter.sagemaker.amazonaws.com/v1"


@pytest.fixture
def served_elastic(elastic, tmp_path):
    plan, manifests = elastic
    fake = FakeKubernetes(manifests.all())
    url = fake.start()
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig(url))
    yield plan, fake, str(path)
    fake.stop()


def _drift(plan, path: str) -> list[dict]:
    side = kubernetes_drift(plan, lambda: connect_kubeconfig(path))
    assert side.checked, side.reason
    return [i.to_json() for i in side.items]


def test_drift_finds_a_changed_missing_or_leftover_pool(served_elastic):
    plan, fake, path = served_elastic
    assert _drift(plan, path) == []
    fake.find("NodePool", "gpu-elastic")["spec"]["disruption"]["consolidationPolicy"] = "WhenEmptyOrUnderutilized"
    fake.remove("HyperpodNodeClass", "burst")
    leftover = copy.deepcopy(fake.find("NodePool", "burst"))
    leftover["metadata"]["name"] = "old-pool"
    fake.add(leftover)
    items = _drift(plan, path)
    assert {(i["kind"], i["name"], i["change"], i.get("field")) for i in items} == {
        ("NodePool", "gpu-elastic", "changed", "spec.disruption"),
        ("HyperpodNodeClass", "burst", "missing", None),
        ("NodePool", "old-pool", "unexpected", None),
    }


def test_diff_names_the_pools_a_change_adds_removes_or_changes(elastic):
    _, manifests = elastic
    data = read_yaml(EXAMPLES / "elastic.yaml")
    data["cluster"]["instanceGroups"][1]["count"] = 12  # gpu-elastic: a larger limit
    del data["cluster"]["instanceGroups"][2]["autoscale"]  # burst: Spot, no longer autoscaled
    changed = render(_plan(data))

    def snapshot(m):
        return {"templates": {}, "manifests": {"cluster": m.cluster, "teams": m.teams}}

    lines = [line for line in resource_diff(snapshot(manifests), snapshot(changed))
             if re.search(r"k8s (NodePool|HyperpodNodeClass)", line)]
    assert lines == ["- k8s HyperpodNodeClass burst", "- k8s NodePool burst", "~ k8s NodePool gpu-elastic"]


# --- docs ------------------------------------------------------------------------------------------------------


def test_the_docs_page_shows_what_the_elastic_example_renders(elastic):
    _, manifests = elastic
    text = (ROOT / "docs" / "elastic-k8s.md").read_text()
    (shown,) = [b for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.S) if "kind: NodePool" in b]
    objects = [o for o in manifests.cluster if o["kind"] in KARPENTER_KINDS]
    assert shown == dump_manifests(objects)
