"""MultiKueue across a fleet: the manager's quota is the workers' sum, every object is valid against Kueue
v0.19.2's CRDs, the worker's role grants what Kueue's kubeconfig script grants, and the output is deterministic.

The fleet: three single-cluster plans from copies of examples/startup.yaml (kueue mode). ``mgr`` (the manager)
keeps ml-engineering only, on ml.g5.2xlarge; ``use1`` is the example as is (ml-engineering 6, researchers 5,
chatbot 4 x ml.g5.2xlarge); ``usw2`` adds 2 x ml.g5.12xlarge and has no chatbot team (ml-engineering 4 x
ml.g5.2xlarge + 1 x ml.g5.12xlarge, researchers 4 x ml.g5.2xlarge).
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import jsonschema
import pytest
import yaml

from hyperpod_gov.charts.multikueue import multikueue_objects
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.multikueue import SCRIPT_RULES, multikueue_plans, worker_rules
from hyperpod_gov.plan.workloads import kinds_for
from hyperpod_gov.spec import parse_spec
from tests.conftest import EXAMPLES, TODAY
from tests.kueue_schema import CRDS, cel_errors, kueue_errors, schema_for, webhook_errors

MULTIKUEUE = CRDS / "multikueue"
WORKERS = ("use1", "usw2")


def _member(name: str, data: dict) -> dict:
    data = copy.deepcopy(data)
    data["name"] = f"startup-{name}"
    data["cluster"]["name"] = f"gpu-{name}"
    return data


def fleet_data() -> dict[str, dict]:
    base = yaml.safe_load((EXAMPLES / "startup.yaml").read_text())
    mgr = _member("mgr", base)
    mgr["cluster"]["instanceGroups"][0]["count"] = 2
    mgr["teams"] = [t for t in mgr["teams"] if t["name"] == "ml-engineering"]
    mgr["teams"][0]["quota"] = [{"instanceType": "ml.g5.2xlarge", "count": 2}]
    use1 = _member("use1", base)
    usw2 = _member("usw2", base)
    usw2["accounts"]["capacity"]["region"] = "us-west-2"
    usw2["cluster"]["instanceGroups"][0]["count"] = 8
    usw2["cluster"]["instanceGroups"].append(
        {"name": "big-gpu", "instanceType": "ml.g5.12xlarge", "count": 2, "volumeSizeGb": 200})
    usw2["teams"] = [t for t in usw2["teams"] if t["name"] != "chatbot"]
    quotas = {"ml-engineering": [{"instanceType": "ml.g5.2xlarge", "count": 4},
                                 {"instanceType": "ml.g5.12xlarge", "count": 1}],
              "researchers": [{"instanceType": "ml.g5.2xlarge", "count": 4}]}
    for t in usw2["teams"]:
        t["quota"] = quotas[t["name"]]
    return {"mgr": mgr, "use1": use1, "usw2": usw2}


def plans_of(data: dict[str, dict]):
    return {name: build_plan(parse_spec(d, today=TODAY)) for name, d in data.items()}


@lru_cache(maxsize=1)
def fleet():
    members = plans_of(fleet_data())
    return members, multikueue_plans(members, "mgr", WORKERS)


def objects_of(members, mk) -> dict[str, list[dict]]:
    return {name: multikueue_objects(members[name], p) for name, p in mk.items()}


def fleet_cq(objs: list[dict], team: str) -> dict:
    return next(o for o in objs if o["kind"] == "ClusterQueue" and o["metadata"]["name"] == f"{team}-fleet")


def nominal(cq: dict) -> dict[tuple[str, str], object]:
    return {(f["name"], r["name"]): r["nominalQuota"]
            for g in cq["spec"]["resourceGroups"] for f in g["flavors"] for r in f["resources"]}


# --- the manager's quota -----------------------------------------------------------------------------------------

def test_the_managers_quota_is_the_sum_of_the_workers_per_team_and_flavor():
    """Hand-checked: ml.g5.2xlarge is 1 GPU, 8 vCPU, 32 GiB; ml.g5.12xlarge 4 GPUs, 48 vCPU, 192 GiB."""
    members, mk = fleet()
    manager = objects_of(members, mk)["mgr"]
    assert nominal(fleet_cq(manager, "ml-engineering")) == {
        ("ml.g5.12xlarge", "cpu"): 48, ("ml.g5.12xlarge", "memory"): "192Gi", ("ml.g5.12xlarge", "nvidia.com/gpu"): 4,
        ("ml.g5.2xlarge", "cpu"): 80, ("ml.g5.2xlarge", "memory"): "320Gi", ("ml.g5.2xlarge", "nvidia.com/gpu"): 10,
    }
    assert nominal(fleet_cq(manager, "researchers")) == {
        ("ml.g5.2xlarge", "cpu"): 72, ("ml.g5.2xlarge", "memory"): "288Gi", ("ml.g5.2xlarge", "nvidia.com/gpu"): 9}


def test_a_team_absent_from_a_worker_sums_only_where_present():
    members, mk = fleet()
    chatbot = next(q for q in mk["mgr"].queues if q.team == "chatbot")
    assert chatbot.workers == ("use1",)
    assert nominal(fleet_cq(objects_of(members, mk)["mgr"], "chatbot")) == {
        ("ml.g5.2xlarge", "cpu"): 32, ("ml.g5.2xlarge", "memory"): "128Gi", ("ml.g5.2xlarge", "nvidia.com/gpu"): 4}
    assert [q.team for q in mk["usw2"].queues] == ["ml-engineering", "researchers"]
    assert [q.team for q in mk["use1"].queues] == ["chatbot", "ml-engineering", "researchers"]


def test_the_sum_follows_every_worker_and_a_wrong_total_is_caught():
    """The check itself fails when the manager's quota is not the workers' sum (here: one worker's share
    doubled), and a worker's quota change moves the manager's total."""
    members, mk = fleet()
    for q in mk["mgr"].queues:
        for f in q.flavors:
            summed = {r: sum(dict(share)[r] for _, share in f.by_worker) for r, _ in f.nominal}
            assert dict(f.nominal) == summed, (q.team, f.name)
    q = next(q for q in mk["mgr"].queues if q.team == "researchers")
    f = q.flavors[0]
    wrong = replace(f, nominal=tuple((r, v + dict(f.by_worker[0][1])[r]) for r, v in f.nominal))
    assert dict(wrong.nominal) != {r: sum(dict(s)[r] for _, s in wrong.by_worker) for r, _ in wrong.nominal}

    data = fleet_data()
    data["usw2"]["teams"][1]["quota"] = [{"instanceType": "ml.g5.2xlarge", "count": 2}]  # researchers 4 -> 2
    changed = plans_of(data)
    objs = objects_of(changed, multikueue_plans(changed, "mgr", WORKERS))["mgr"]
    assert nominal(fleet_cq(objs, "researchers"))[("ml.g5.2xlarge", "nvidia.com/gpu")] == 7


def test_a_teams_dedicated_nodes_count_in_its_instance_types_flavor_on_the_manager():
    """On use1, chatbot's 4 ml.g5.2xlarge are a dedicated group: the worker's ClusterQueue splits them into a
    flavor of their own; the manager's sum is per instance type, the same 4 GPUs."""
    data = fleet_data()
    groups = data["use1"]["cluster"]["instanceGroups"]
    groups[0]["count"] = 11
    groups.append({"name": "chatbot-gpu", "instanceType": "ml.g5.2xlarge", "count": 4, "volumeSizeGb": 200,
                   "dedicatedTo": "chatbot"})
    members = plans_of(data)
    worker_cq = members["use1"].cluster_queue_spec(members["use1"].team("chatbot"))
    worker_gpus = {f["name"]: r["nominalQuota"] for g in worker_cq["resourceGroups"] for f in g["flavors"]
                   for r in f["resources"] if r["name"] == "nvidia.com/gpu"}
    assert len(worker_gpus) == 2 and sum(worker_gpus.values()) == 4, worker_gpus
    manager = objects_of(members, multikueue_plans(members, "mgr", WORKERS))["mgr"]
    assert nominal(fleet_cq(manager, "chatbot")) == {
        ("ml.g5.2xlarge", "cpu"): 32, ("ml.g5.2xlarge", "memory"): "128Gi", ("ml.g5.2xlarge", "nvidia.com/gpu"): 4}


def test_flavors_the_manager_lacks_get_resource_flavors_named_as_the_workers_name_them():
    members, mk = fleet()
    manager = objects_of(members, mk)["mgr"]
    flavors = [o for o in manager if o["kind"] == "ResourceFlavor"]
    assert [(o["metadata"]["name"], o["spec"]) for o in flavors] == [
        ("ml.g5.12xlarge", {"nodeLabels": {"node.kubernetes.io/instance-type": "ml.g5.12xlarge"}})]
    assert "ml.g5.12xlarge" in {f.name for f in members["usw2"].flavors}


def test_the_manager_dispatches_through_a_check_per_set_and_gets_namespaces_it_lacks():
    """chatbot is on use1 only, the others on both: two sets, each a MultiKueueConfig and an AdmissionCheck naming
    it (tests/fleet/test_multikueue_sets.py: the sets themselves)."""
    members, mk = fleet()
    manager = objects_of(members, mk)["mgr"]
    clusters = [o for o in manager if o["kind"] == "MultiKueueCluster"]
    assert [(o["metadata"]["name"], o["spec"]["clusterSource"]["kubeConfig"]) for o in clusters] == [
        ("use1", {"locationType": "Secret", "location": "use1-kubeconfig"}),
        ("usw2", {"locationType": "Secret", "location": "usw2-kubeconfig"})]
    for o in clusters:  # the objects say where the credential comes from
        note = o["metadata"]["annotations"]["hyperpod-gov.io/kubeconfig-secret"]
        assert "docs/fleet.md#the-worker-credential" in note
    configs = {o["metadata"]["name"]: o["spec"] for o in manager if o["kind"] == "MultiKueueConfig"}
    checks = {o["metadata"]["name"]: o["spec"] for o in manager if o["kind"] == "AdmissionCheck"}
    assert configs == {"hyperpod-gov-fleet-4e31e511f1": {"clusters": ["use1"]},
                       "hyperpod-gov-fleet-b2e7448769": {"clusters": ["use1", "usw2"]}}
    assert checks == {name: {"controllerName": "kueue.x-k8s.io/multikueue", "parameters": {
        "apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": name}} for name in configs}
    on = {"chatbot": "hyperpod-gov-fleet-4e31e511f1", "ml-engineering": "hyperpod-gov-fleet-b2e7448769",
          "researchers": "hyperpod-gov-fleet-b2e7448769"}
    for team, check in on.items():
        cq = fleet_cq(manager, team)
        assert cq["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": check}]}
        assert "cohortName" not in cq["spec"]
        lq = next(o for o in manager if o["kind"] == "LocalQueue" and o["metadata"]["name"] == f"hyperpod-ns-{team}-fleet")
        assert lq["metadata"]["namespace"] == f"hyperpod-ns-{team}"
        assert lq["spec"] == {"clusterQueue": f"{team}-fleet"}
    # ml-engineering has quota on the manager's own cluster (its tenant chart makes the namespace); the others not
    assert sorted(o["metadata"]["name"] for o in manager if o["kind"] == "Namespace") == [
        "hyperpod-ns-chatbot", "hyperpod-ns-researchers"]
    assert not any(o["kind"] == "Secret" for objs in objects_of(members, mk).values() for o in objs)


def test_each_worker_mirrors_the_fleet_queue_onto_the_teams_own_cluster_queue():
    members, mk = fleet()
    for w in WORKERS:
        objs = objects_of(members, mk)[w]
        queues = {(o["metadata"]["namespace"], o["metadata"]["name"]): o["spec"]["clusterQueue"]
                  for o in objs if o["kind"] == "LocalQueue"}
        assert queues == {(t.namespace, f"{t.namespace}-fleet"): t.cluster_queue for t in members[w].tenants}
        assert not any(o["kind"] in ("ClusterQueue", "MultiKueueCluster", "AdmissionCheck") for o in objs)


# --- validity ----------------------------------------------------------------------------------------------------

def _go_patterns(schema):
    """The schema with Go (RE2) patterns Python's re cannot compile rewritten to the same meaning: RE2 accepts a
    flag group after ``^`` (``^(?i)[a-z]...``, AdmissionCheck parameters.kind), Python only at the start."""
    if isinstance(schema, dict):
        out = {k: _go_patterns(v) for k, v in schema.items()}
        if isinstance(out.get("pattern"), str) and out["pattern"].startswith("^(?i)"):
            out["pattern"] = "(?i)^" + out["pattern"][len("^(?i)"):]
        return out
    if isinstance(schema, list):
        return [_go_patterns(v) for v in schema]
    return schema


@lru_cache(maxsize=None)
def multikueue_schema(kind: str) -> dict:
    for path in sorted(MULTIKUEUE.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        if crd["spec"]["names"]["kind"] == kind:
            version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta2")
            return _go_patterns(version["schema"]["openAPIV3Schema"])
    raise KeyError(kind)


def pruned(schema: dict, value, path: str = "") -> list[str]:
    """Fields the API server would drop silently (structural schema pruning): not in the schema's properties.
    A v1beta1 field in a v1beta2 object (``spec.admissionChecks``) is lost this way, without an error."""
    if isinstance(value, dict) and "properties" in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
        out = [f"{path}.{k}: unknown field (pruned)" for k in value if k not in schema["properties"]]
        return out + [e for k, v in value.items() if k in schema["properties"]
                      for e in pruned(schema["properties"][k], v, f"{path}.{k}")]
    if isinstance(value, list) and "items" in schema:
        return [e for i, v in enumerate(value) for e in pruned(schema["items"], v, f"{path}[{i}]")]
    return []


def crd_errors(obj: dict) -> list[str]:
    """Kueue objects against the vendored v0.19.2 CRDs: the MultiKueue kinds from tests/kueue-crds/multikueue
    (schema and CEL), the rest through tests/kueue_schema.py; and no field the API server would prune."""
    if obj["kind"] not in ("AdmissionCheck", "MultiKueueCluster", "MultiKueueConfig"):
        return kueue_errors(obj) + pruned(schema_for(obj["kind"]), obj)
    assert obj["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    schema = multikueue_schema(obj["kind"])
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
              for e in jsonschema.Draft7Validator(schema).iter_errors(obj)]
    return errors + cel_errors(schema, obj) + webhook_errors(obj) + pruned(schema, obj)


def test_every_kueue_object_is_valid_against_the_v0_19_2_crds():
    members, mk = fleet()
    seen = set()
    for name, objs in objects_of(members, mk).items():
        for obj in objs:
            if obj["apiVersion"].startswith("kueue.x-k8s.io/"):
                seen.add(obj["kind"])
                assert not crd_errors(obj), (name, obj["kind"], obj["metadata"]["name"], crd_errors(obj))
    assert seen == {"AdmissionCheck", "ClusterQueue", "LocalQueue", "MultiKueueCluster", "MultiKueueConfig",
                    "ResourceFlavor"}


@pytest.mark.parametrize("kind, breaks", [
    ("MultiKueueCluster", lambda o: o["spec"]["clusterSource"].update({"clusterProfileRef": {"name": "x"}})),
    ("MultiKueueConfig", lambda o: o["spec"]["clusters"].append(o["spec"]["clusters"][0])),
    ("AdmissionCheck", lambda o: o["spec"]["parameters"].update({"name": "Not_A_Name"})),
    ("AdmissionCheck", lambda o: o["spec"]["parameters"].update({"kind": "Multi_Kueue"})),
    ("ClusterQueue", lambda o: o["spec"].update({"admissionChecks": ["x"]})),  # the v1beta1 field: pruned
    ("MultiKueueCluster", lambda o: o["spec"]["clusterSource"]["kubeConfig"].update({"location": ""})),
    ("LocalQueue", lambda o: o["spec"].update({"clusterQueue": ""})),
])
def test_the_validation_catches_a_broken_object(kind, breaks):
    members, mk = fleet()
    obj = copy.deepcopy(next(o for o in objects_of(members, mk)["mgr"] if o["kind"] == kind))
    assert not crd_errors(obj)
    breaks(obj)
    assert crd_errors(obj)


# --- the worker's role -------------------------------------------------------------------------------------------

def script_rules() -> list[dict]:
    """The ClusterRole rules of Kueue's create-multikueue-kubeconfig.sh (vendored, v0.19.2)."""
    text = (MULTIKUEUE / "create-multikueue-kubeconfig.sh").read_text()
    manifest = text.split("kubectl apply -f - <<EOF\n", 1)[1].split("\nEOF\n", 1)[0]
    role = next(d for d in yaml.safe_load_all(manifest) if d["kind"] == "ClusterRole")
    return role["rules"]


def test_the_workers_role_grants_every_rule_of_kueues_script():
    members, mk = fleet()
    for w in WORKERS:
        role = next(o for o in objects_of(members, mk)[w] if o["kind"] == "ClusterRole")
        rules = script_rules()
        assert len(rules) == 30
        for rule in rules:
            assert rule in role["rules"], rule
        binding = next(o for o in objects_of(members, mk)[w] if o["kind"] == "ClusterRoleBinding")
        sa = next(o for o in objects_of(members, mk)[w] if o["kind"] == "ServiceAccount")
        assert binding["roleRef"]["name"] == role["metadata"]["name"]
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": sa["metadata"]["name"],
                                        "namespace": "kueue-system"}]
    assert [r.as_dict() for r in SCRIPT_RULES] == script_rules()  # the plan's copy is the script's, in its order


def test_the_workers_role_adds_the_kinds_the_fleets_teams_may_run():
    members, mk = fleet()
    role = next(o for o in objects_of(members, mk)["use1"] if o["kind"] == "ClusterRole")
    granted = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    kinds = {(k.group, k.resource) for w in WORKERS for t in members[w].tenants for k in kinds_for(t)}
    assert ("sagemaker.amazonaws.com", "hyperpodpytorchjobs") in kinds  # training teams
    assert ("inference.sagemaker.aws.amazon.com", "inferenceendpointconfigs") in kinds  # chatbot (use1 only)
    for group, resource in kinds:
        assert (group, resource) in granted and (group, f"{resource}/status") in granted, (group, resource)
    # without the chatbot team, its inference kinds are not granted
    assert ("inference.sagemaker.aws.amazon.com", "inferenceendpointconfigs") not in {
        (g, r) for rule in worker_rules(members["usw2"].tenants) for g in rule.api_groups for r in rule.resources}


# --- determinism -------------------------------------------------------------------------------------------------

def test_the_same_fleet_renders_the_same_bytes_and_team_order_changes_nothing():
    members, mk = fleet()
    first = json.dumps(objects_of(members, mk), sort_keys=False)
    again = plans_of(fleet_data())
    assert json.dumps(objects_of(again, multikueue_plans(again, "mgr", WORKERS)), sort_keys=False) == first
    data = fleet_data()
    for d in data.values():
        d["teams"].reverse()
    reordered = plans_of(data)
    assert json.dumps(objects_of(reordered, multikueue_plans(reordered, "mgr", WORKERS)), sort_keys=False) == first


def test_the_workers_order_is_the_dispatch_order_and_renames_nothing():
    members, mk = fleet()
    swapped = multikueue_plans(members, "mgr", ("usw2", "use1"))
    configs = {o["metadata"]["name"]: o["spec"]["clusters"] for o in objects_of(members, swapped)["mgr"]
               if o["kind"] == "MultiKueueConfig"}
    assert configs == {"hyperpod-gov-fleet-4e31e511f1": ["use1"], "hyperpod-gov-fleet-b2e7448769": ["usw2", "use1"]}
    names = {(o["kind"], o["metadata"]["name"]) for o in objects_of(members, mk)["mgr"]}
    assert {(o["kind"], o["metadata"]["name"]) for o in objects_of(members, swapped)["mgr"]} == names


@pytest.mark.parametrize("manager, workers, message", [
    ("mgr", ("mgr", "use1"), "cannot run the manager as one of its own workers"),
    ("mgr", (), "1 to 20 distinct clusters"),
    ("mgr", ("use1", "use1"), "1 to 20 distinct clusters"),
    ("mgr", ("use1", "nope"), "nope: not a member"),
])
def test_a_dispatch_kueue_cannot_run_is_refused(manager, workers, message):
    members, _ = fleet()
    with pytest.raises(ValueError, match=message):
        multikueue_plans(members, manager, workers)


@pytest.mark.parametrize("paused_on, held", [(("use1", "usw2"), True), (("usw2",), False)])
def test_a_fleet_queue_is_held_only_when_the_team_is_paused_on_every_worker(paused_on, held):
    data = fleet_data()
    for w in paused_on:
        next(t for t in data[w]["teams"] if t["name"] == "researchers")["active"] = False
    members = plans_of(data)
    cq = fleet_cq(objects_of(members, multikueue_plans(members, "mgr", WORKERS))["mgr"], "researchers")
    assert ("stopPolicy" in cq["spec"]) is held
    assert cq["spec"].get("stopPolicy", "Hold") == "Hold"


def test_a_task_governance_member_cannot_dispatch():
    data = fleet_data()
    data["usw2"]["scheduler"]["mode"] = "task-governance"
    members = plans_of(data)
    assert members["usw2"].mode == "task-governance"
    with pytest.raises(ValueError, match="usw2: MultiKueue needs scheduler.mode kueue"):
        multikueue_plans(members, "mgr", WORKERS)


# --- a gap outside this module -----------------------------------------------------------------------------------

def test_the_queue_policy_admits_a_job_sent_to_the_fleet_queue():
    """A team member's Job on the manager, and the copy Kueue's MultiKueue service account creates on a worker,
    carry the queue label ``<namespace>-fleet``: the team-queue policy admits it, and still refuses another team's
    fleet queue."""
    from hyperpod_gov.charts.admission import queue_policy
    from hyperpod_gov.plan.workloads import WORKLOAD_KINDS
    from tests.security.cel import denials

    members, mk = fleet()
    queue = next(q for q in mk["usw2"].queues if q.team == "researchers")
    job = next(k for k in WORKLOAD_KINDS if k.kind == "Job")
    obj = {"apiVersion": job.api_version, "kind": job.kind,
           **job.example(queue.namespace, queue.local_queue, "training-priority")}
    copier = {"username": "system:serviceaccount:kueue-system:hyperpod-gov-multikueue", "groups": []}
    assert denials(queue_policy(), obj, namespace=queue.namespace, user=copier) == []
    other = {"apiVersion": job.api_version, "kind": job.kind,
             **job.example(queue.namespace, "hyperpod-ns-chatbot-fleet", "training-priority")}
    assert denials(queue_policy(), other, namespace=queue.namespace, user=copier) != []
