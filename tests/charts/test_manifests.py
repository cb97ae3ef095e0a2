"""The Kubernetes objects: valid against real schemas, right numbers, secure by default."""

from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from hyperpod_gov.charts import render
from hyperpod_gov.charts.admission import PARAMS_NAMESPACE
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY
from tests.kueue_schema import kueue_errors, quantity


@pytest.fixture(scope="session")
def startup_manifests(startup_spec):
    return render(build_plan(startup_spec))


@pytest.fixture(scope="session")
def enterprise_manifests(enterprise_spec):
    return render(build_plan(enterprise_spec))


def by_kind(objs, kind):
    return [o for o in objs if o["kind"] == kind]


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_every_object_validates_against_its_schema(example, request):
    spec = request.getfixturevalue(f"{example}_spec")
    objs = request.getfixturevalue(f"{example}_manifests").all()
    version = f"{spec.cluster.kubernetes_version}.0"
    assert objs
    for obj in objs:
        if obj["apiVersion"].startswith("kueue.x-k8s.io/"):
            assert not kueue_errors(obj), (obj["metadata"]["name"], kueue_errors(obj))
        else:
            kubernetes_validate.validate(obj, version, strict=True)


def test_kueue_validator_catches_a_broken_cluster_queue(startup_manifests):
    cq = copy.deepcopy(by_kind(startup_manifests.all(), "ClusterQueue")[0])
    flavor = cq["spec"]["resourceGroups"][0]["flavors"][0]
    flavor["resources"][0]["lendingLimit"] = 10_000  # more than nominal
    flavor["resources"].reverse()  # out of coveredResources order
    del cq["spec"]["cohortName"]  # limits without a cohort
    errors = kueue_errors(cq)
    assert any("lendingLimit > nominalQuota" in e for e in errors)
    assert any("coveredResources order" in e for e in errors)
    assert any("CEL rule failed" in e for e in errors)
    assert any("size(x.resources)" in e or "without cohortName" in e for e in errors)


def cluster_queue(manifests, team):
    return next(o for o in by_kind(manifests.all(), "ClusterQueue")
                if o["metadata"]["name"] == f"hyperpod-ns-{team}-clusterqueue")


def limits(cq, flavor="ml.g5.2xlarge"):
    f = next(f for f in cq["spec"]["resourceGroups"][0]["flavors"] if f["name"] == flavor)
    return {r["name"]: r for r in f["resources"]}


def test_startup_cluster_queues_carry_the_quota_semantics(startup_manifests):
    # ml.g5.2xlarge: 1 GPU, 8 vCPU, 32 GiB per instance
    ml = limits(cluster_queue(startup_manifests, "ml-engineering"))
    assert (ml["nvidia.com/gpu"]["nominalQuota"], ml["cpu"]["nominalQuota"], ml["memory"]["nominalQuota"]) == (
        6, 48, "192Gi")
    assert (ml["nvidia.com/gpu"]["borrowingLimit"], ml["cpu"]["borrowingLimit"], ml["memory"]["borrowingLimit"]) == (
        3, 24, "96Gi")
    assert "lendingLimit" not in ml["nvidia.com/gpu"]
    research = limits(cluster_queue(startup_manifests, "researchers"))
    assert research["nvidia.com/gpu"]["nominalQuota"] == 5
    assert research["nvidia.com/gpu"]["borrowingLimit"] == 2  # 50 % of 5, rounded down
    chatbot = limits(cluster_queue(startup_manifests, "chatbot"))
    assert chatbot["nvidia.com/gpu"]["nominalQuota"] == 4
    for r in chatbot.values():
        assert quantity(r["lendingLimit"]) == 0 and quantity(r["borrowingLimit"]) == 0
    total = sum(limits(cq)["nvidia.com/gpu"]["nominalQuota"] for cq in by_kind(startup_manifests.all(), "ClusterQueue"))
    assert total == 15


def test_startup_queues_share_one_cohort_and_admit_only_their_namespace(startup_manifests):
    queues = by_kind(startup_manifests.all(), "ClusterQueue")
    assert len(queues) == 3
    assert {q["spec"]["cohortName"] for q in queues} == {"startup-cohort"}
    for q in queues:
        ns = q["metadata"]["name"].removesuffix("-clusterqueue")
        assert q["spec"]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": ns}}
        assert q["spec"]["fairSharing"] == {"weight": 100}
        assert q["spec"]["preemption"]["withinClusterQueue"] == "LowerPriority"
    assert cluster_queue(startup_manifests, "chatbot")["spec"]["preemption"]["reclaimWithinCohort"] == "Never"
    assert cluster_queue(startup_manifests, "researchers")["spec"]["preemption"]["reclaimWithinCohort"] == "Any"


def test_startup_flavors_priority_classes_and_local_queues(startup_manifests):
    (flavor,) = by_kind(startup_manifests.cluster, "ResourceFlavor")
    assert flavor["metadata"]["name"] == "ml.g5.2xlarge"
    assert flavor["spec"]["nodeLabels"] == {"node.kubernetes.io/instance-type": "ml.g5.2xlarge"}
    classes = {o["metadata"]["name"]: o["value"] for o in by_kind(startup_manifests.cluster, "WorkloadPriorityClass")}
    assert classes == {"inference-priority": 100, "training-priority": 50}
    for team, objs in startup_manifests.teams.items():
        (lq,) = by_kind(objs, "LocalQueue")
        assert lq["metadata"] == {**lq["metadata"], "name": f"hyperpod-ns-{team}-localqueue",
                                  "namespace": f"hyperpod-ns-{team}"}
        assert lq["spec"] == {"clusterQueue": f"hyperpod-ns-{team}-clusterqueue"}


def test_task_governance_mode_emits_no_kueue_objects_and_does_not_own_namespaces(enterprise_manifests):
    kinds = {o["kind"] for o in enterprise_manifests.all()}
    assert not kinds & {"ClusterQueue", "LocalQueue", "ResourceFlavor", "WorkloadPriorityClass"}
    # The one namespace emitted is the platform's own, holding the teams' admission parameters.
    assert [o["metadata"]["name"] for o in by_kind(enterprise_manifests.all(), "Namespace")] == [PARAMS_NAMESPACE]


def test_kueue_mode_owns_the_namespace_with_contract_annotations(startup_manifests):
    (ns,) = by_kind(startup_manifests.teams["chatbot"], "Namespace")
    assert ns["metadata"]["name"] == "hyperpod-ns-chatbot"
    assert ns["metadata"]["annotations"]["hyperpod-gov.io/business-owner"] == "product@example.com"
    assert ns["metadata"]["annotations"]["hyperpod-gov.io/data-classification"] == "confidential"


# --- security -----------------------------------------------------------------------


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_every_team_namespace_denies_ingress_and_egress_by_default(example, request):
    manifests = request.getfixturevalue(f"{example}_manifests")
    spec = request.getfixturevalue(f"{example}_spec")
    for team in spec.teams:
        policies = {p["metadata"]["name"]: p for p in by_kind(manifests.teams[team.name], "NetworkPolicy")}
        deny = policies["default-deny"]
        assert deny["metadata"]["namespace"] == f"hyperpod-ns-{team.name}"
        assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
        assert set(policies) >= {"allow-dns", "allow-same-namespace", "allow-pod-identity-agent", "allow-vpc-https"}
        agent = policies["allow-pod-identity-agent"]["spec"]["egress"][0]
        assert agent == {"to": [{"ipBlock": {"cidr": "169.254.170.23/32"}}], "ports": [{"protocol": "TCP", "port": 80}]}
        # DNS over TCP too: answers over 512 bytes (many records, DNSSEC) are retried over TCP/53, and a UDP-only
        # allow makes those lookups hang.
        assert policies["allow-dns"]["spec"] == {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{
            "to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
            "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
        }]}
        https = policies["allow-vpc-https"]["spec"]["egress"][0]
        assert https["to"] == [{"ipBlock": {"cidr": spec.cluster.vpc.cidr}}]
        for name, p in policies.items():
            for rule in p["spec"].get("ingress", []):
                assert rule["from"] == [{"podSelector": {}}], name  # only the same namespace gets in
            for rule in p["spec"].get("egress", []):
                for peer in rule["to"]:
                    assert peer.get("ipBlock", {}).get("cidr") != "0.0.0.0/0", name


def test_team_egress_entries_become_explicit_allows(startup_manifests):
    policies = {p["metadata"]["name"]: p for p in by_kind(startup_manifests.teams["ml-engineering"], "NetworkPolicy")}
    assert policies["allow-team-egress"]["spec"]["egress"] == [
        {"to": [{"ipBlock": {"cidr": "10.20.0.0/16"}}], "ports": [{"protocol": "TCP", "port": 5432}]}
    ]
    assert "allow-team-egress" not in {p["metadata"]["name"] for p in by_kind(startup_manifests.teams["chatbot"],
                                                                             "NetworkPolicy")}


WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate"}


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_no_role_has_a_wildcard_and_viewer_cannot_write(example, request):
    objs = request.getfixturevalue(f"{example}_manifests").all()
    roles = by_kind(objs, "Role") + by_kind(objs, "ClusterRole")
    assert roles
    for role in roles:
        for rule in role["rules"]:
            for field in ("verbs", "resources", "apiGroups"):
                assert "*" not in rule.get(field, []), (role["metadata"], rule)
        if role["metadata"]["name"] == "viewer" or role["kind"] == "ClusterRole":
            assert not {v for r in role["rules"] for v in r["verbs"]} & WRITE_VERBS, role["metadata"]


def _role_of(manifests, team, name):
    return next(r for r in by_kind(manifests.teams[team], "Role") if r["metadata"]["name"] == name)


WRITE = ["create", "update", "patch", "delete"]


def test_submitter_acts_on_the_kinds_its_contract_approves_only(startup_manifests):
    # ml-engineering's contract approves training and fine-tuning: the training kinds, nothing of inference.
    assert _role_of(startup_manifests, "ml-engineering", "submitter")["rules"] == [
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": WRITE},
        {"apiGroups": ["kubeflow.org"], "resources": ["mpijobs", "pytorchjobs", "tfjobs"], "verbs": WRITE},
        {"apiGroups": ["sagemaker.amazonaws.com"], "resources": ["hyperpodpytorchjobs"], "verbs": WRITE},
    ]
    viewer = _role_of(startup_manifests, "ml-engineering", "viewer")
    seen = {(g, res) for r in viewer["rules"] for g in r["apiGroups"] for res in r["resources"]}
    assert seen == {("", "events"), ("", "pods"), ("", "pods/log"), ("batch", "jobs"), ("kubeflow.org", "mpijobs"),
                    ("kubeflow.org", "pytorchjobs"), ("kubeflow.org", "tfjobs"), ("kueue.x-k8s.io", "localqueues"),
                    ("kueue.x-k8s.io", "workloads"), ("sagemaker.amazonaws.com", "hyperpodpytorchjobs")}
    # chatbot approves inference only: the inference operator's kinds, and no job kind.
    assert _role_of(startup_manifests, "chatbot", "submitter")["rules"] == [
        {"apiGroups": ["inference.sagemaker.aws.amazon.com"], "resources": ["inferenceendpointconfigs",
                                                                           "jumpstartmodels"], "verbs": WRITE},
    ]
    # researchers approve experimentation (HyperPod spaces) and training.
    groups = {g for r in _role_of(startup_manifests, "researchers", "submitter")["rules"] for g in r["apiGroups"]}
    assert groups == {"batch", "kubeflow.org", "sagemaker.amazonaws.com", "workspace.jupyter.org"}


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_every_binding_subject_is_a_team_group(example, request):
    manifests = request.getfixturevalue(f"{example}_manifests")
    bindings = by_kind(manifests.all(), "RoleBinding") + by_kind(manifests.all(), "ClusterRoleBinding")
    assert bindings
    for b in bindings:
        for subject in b["subjects"]:
            assert subject["kind"] == "Group", b["metadata"]
            assert subject["name"].startswith("hyperpod-ns-") and subject["name"].endswith(("-viewers", "-submitters"))


def test_cluster_role_reads_only_the_teams_own_cluster_queue(startup_manifests):
    role = next(o for o in by_kind(startup_manifests.teams["chatbot"], "ClusterRole")
                if o["metadata"]["name"] == "hyperpod-ns-chatbot-queue-reader")
    own = role["rules"][0]
    assert own["resources"] == ["clusterqueues"] and own["resourceNames"] == ["hyperpod-ns-chatbot-clusterqueue"]


def test_one_service_account_per_workload_identity(enterprise_manifests, enterprise_spec):
    for team in enterprise_spec.teams:
        sas = {o["metadata"]["name"] for o in by_kind(enterprise_manifests.teams[team.name], "ServiceAccount")}
        assert sas == {w.service_account for w in team.workload_identities}


CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "ClusterQueue", "ResourceFlavor",
                  "WorkloadPriorityClass", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_only_namespaced_objects_carry_a_namespace(example, request):
    for obj in request.getfixturevalue(f"{example}_manifests").all():
        assert ("namespace" in obj["metadata"]) == (obj["kind"] not in CLUSTER_SCOPED), obj["metadata"]


def test_rendering_ignores_team_order(startup_spec):
    data = read_yaml(EXAMPLES / "startup.yaml")
    data["teams"].reverse()
    reordered = render(build_plan(parse_spec(data, today=TODAY)))
    assert reordered.all() == render(build_plan(startup_spec)).all()


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_manifests_match_snapshot(example, request, snapshot_json):
    """One snapshot for the cluster-wide objects, one per team."""
    m = request.getfixturevalue(f"{example}_manifests")
    assert m.cluster == snapshot_json(name="cluster")
    for team, objects in sorted(m.teams.items()):
        assert objects == snapshot_json(name=f"team.{team}"), team


def test_vendored_kueue_crds_equal_the_shared_ones():
    from tests.kueue_schema import CRDS, SHARED_CRDS

    vendored = sorted(p.name for p in CRDS.glob("*.yaml"))
    assert len(vendored) == 6
    if not SHARED_CRDS.exists():
        pytest.skip(f"{SHARED_CRDS} is not beside this clone")
    for name in vendored:
        assert (CRDS / name).read_bytes() == (SHARED_CRDS / name).read_bytes(), name


def test_submitters_also_see_their_work_through_the_viewer_binding(startup_manifests):
    for team, objects in startup_manifests.teams.items():
        binding = next(o for o in objects if o["kind"] == "RoleBinding" and o["metadata"]["name"] == "viewers")
        assert binding["roleRef"]["name"] == "viewer"
        groups = {s["name"] for s in binding["subjects"]}
        assert groups == {f"hyperpod-ns-{team}-viewers", f"hyperpod-ns-{team}-submitters"}, team


def test_every_allocation_kind_renders_valid_objects():
    """Partitions, vCPU + memory, an absolute borrow cap and a paused team (tests/plan/test_allocations.py)."""
    from tests.plan.test_allocations import allocation_spec

    spec = parse_spec(allocation_spec("kueue"), today=TODAY)
    objs = render(build_plan(spec)).all()
    for obj in objs:
        if obj["apiVersion"].startswith("kueue.x-k8s.io/"):
            assert not kueue_errors(obj), (obj["metadata"]["name"], kueue_errors(obj))
        else:
            kubernetes_validate.validate(obj, f"{spec.cluster.kubernetes_version}.0", strict=True)
    held = [o["metadata"]["name"] for o in by_kind(objs, "ClusterQueue") if o["spec"].get("stopPolicy") == "Hold"]
    assert held == ["hyperpod-ns-team-b-clusterqueue"]
    p5 = limits(cluster_queue(_Manifests(objs), "team-a"), "ml.p5.48xlarge")
    assert p5["nvidia.com/mig-1g.10gb"] == {"name": "nvidia.com/mig-1g.10gb", "nominalQuota": 56, "borrowingLimit": 28}


class _Manifests:
    def __init__(self, objs):
        self._objs = objs

    def all(self):
        return self._objs


def _kueue_teams_spec(base, idle_compute):
    base["scheduler"].update({"mode": "kueue", "idleCompute": idle_compute})
    base["teams"][0]["preemptTeamTasks"] = "Never"  # team-a: LendAndBorrow
    base["teams"].append({"name": "team-c", "quota": [{"instanceType": "ml.g5.8xlarge", "count": 1}],
                          "sharing": {"strategy": "Lend"}})
    return parse_spec(base, today=TODAY)


@pytest.mark.parametrize("idle_compute", ["fair-share", "first-come-first-serve"])
def test_kueue_mode_preemption_follows_the_teams_settings(base, idle_compute):
    """withinClusterQueue from preemptTeamTasks; lenders reclaim what they lent (reclaimWithinCohort: Any), a
    DontLend team lent nothing to reclaim; no borrowWithinCohort: a team that borrows never preempts a lender's work
    to borrow more (and Kueue's fair sharing does not support it)."""
    plan = build_plan(_kueue_teams_spec(base, idle_compute))
    queues = by_kind(render(plan).all(), "ClusterQueue")
    preemption = {q["metadata"]["name"].removeprefix("hyperpod-ns-").removesuffix("-clusterqueue"):
                  q["spec"]["preemption"] for q in queues}
    assert preemption == {
        "team-a": {"withinClusterQueue": "Never", "reclaimWithinCohort": "Any"},
        "team-b": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Never"},
        "team-c": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
    }


@pytest.mark.parametrize("idle_compute, enabled", [("fair-share", True), ("first-come-first-serve", False)])
def test_kueue_fair_sharing_preempts_down_to_the_final_share_then_below_the_initial_one(base, idle_compute, enabled):
    """The Kueue controller configuration the capacity stack installs (Helm value, plan.kueue_config)."""
    import json

    config = json.loads(build_plan(_kueue_teams_spec(base, idle_compute)).kueue_config)
    assert config["fairSharing"] == {"enable": enabled,
                                     "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
