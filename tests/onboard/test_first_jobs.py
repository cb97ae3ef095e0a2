"""``hyperpod-gov onboard``: every first job the page prints, parsed back from the page, for every team of both
examples and of the enterprise example in kueue mode: admitted in the team's namespace by the generated admission
policies (their CEL in cel-python, bound by namespace as the API server binds them) and allowed by the team's
submitter Role; refused in another team's namespace by both. And it asks only for instance types and accelerator
counts the team can be admitted with (counted here from the manifest and the plan, not from the page's code)."""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from typing import Any, Iterator

import pytest
import yaml

from hyperpod_gov.charts.render import render
from hyperpod_gov.onboard import example_kinds, render_onboarding
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.workloads import WORKLOAD_KINDS
from hyperpod_gov.spec import load_spec, parse_spec
from tests.charts.rbac_eval import Authorizer, Request
from tests.conftest import EXAMPLES, TODAY

RESOURCE = {k.kind: (k.group, k.resource) for k in WORKLOAD_KINDS}
SPECS = ("enterprise", "startup", "enterprise-kueue", "every-workload", "enterprise-topology")
LEVELS = ["topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2", "kubernetes.io/hostname"]


@lru_cache(maxsize=None)
def _plan(name: str):
    if name == "every-workload":  # kueue mode, every operator, a team approved for every word (Ray among them)
        from tests.charts.test_kueue_integrations import every_workload_spec
        return build_plan(parse_spec(every_workload_spec(), today=TODAY))
    if name == "enterprise-topology":  # kueue mode with scheduler.topology: multi-node jobs carry a request
        data = yaml.safe_load((EXAMPLES / "enterprise.yaml").read_text())
        data["scheduler"].update(mode="kueue", topology={"levels": LEVELS})
        return build_plan(parse_spec(data, today=TODAY))
    if name == "startup-topology":  # the same on ml.g5 types, which carry no network-layer labels
        data = yaml.safe_load((EXAMPLES / "startup.yaml").read_text())
        data["scheduler"].update(mode="kueue", topology={"levels": LEVELS})
        return build_plan(parse_spec(data, today=TODAY))
    if name == "enterprise-kueue":
        data = yaml.safe_load((EXAMPLES / "enterprise.yaml").read_text())
        data["scheduler"]["mode"] = "kueue"
        return build_plan(parse_spec(data, today=TODAY))
    return build_plan(load_spec(EXAMPLES / f"{name}.yaml", today=TODAY))


@lru_cache(maxsize=None)
def _rendered(name: str):
    objects = render(_plan(name)).all()
    return objects, Authorizer(objects)


def admission_denials(objects: list[dict[str, Any]], obj: dict[str, Any], namespace: str) -> list[str]:
    """Every message of every ValidatingAdmissionPolicy bound to ``namespace`` (by the binding's namespace label
    selector) that ``obj`` fails on CREATE, with the binding's parameter object where it names one (the
    evaluator of tests/security/cel.py)."""
    from tests.security.cel import denials

    policies = {o["metadata"]["name"]: o for o in objects if o["kind"] == "ValidatingAdmissionPolicy"}
    params = {(o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in objects if o["kind"] == "ConfigMap"}
    labels = {"kubernetes.io/metadata.name": namespace}
    failed = []
    for b in (o for o in objects if o["kind"] == "ValidatingAdmissionPolicyBinding"):
        selector = b["spec"].get("matchResources", {}).get("namespaceSelector", {})
        wanted = selector.get("matchLabels", {})
        if any(labels.get(k) != v for k, v in wanted.items()):
            continue
        if any(e["operator"] == "In" and namespace not in e["values"]
               for e in selector.get("matchExpressions", []) if e["key"] == "kubernetes.io/metadata.name"):
            continue
        ref = b["spec"].get("paramRef")
        param = params.get((ref.get("namespace"), ref["name"])) if ref else None
        failed += denials(policies[b["spec"]["policyName"]]["spec"], obj, namespace=namespace, params=param)
    return failed


def page_jobs(page: str) -> dict[str, dict[str, Any]]:
    """The first job under each ``### <Kind>`` heading of the page, parsed back from its YAML block."""
    found = {}
    for kind, body in re.findall(r"^### (\S+)\n(.*?)(?=^#{2,3} |\Z)", page, re.S | re.M):
        blocks = re.findall(r"```yaml\n(.*?)```", body, re.S)
        if blocks:
            (block,) = blocks
            found[kind] = yaml.safe_load(block)
    return found


CASES = [pytest.param(spec, team.name, k.kind, id=f"{spec}-{team.name}-{k.kind}")
         for spec in SPECS for team in _plan(spec).tenants for k in example_kinds(_plan(spec), team)]


def _other(plan, team):
    teams = list(plan.tenants)
    return teams[(teams.index(team) + 1) % len(teams)]


@pytest.mark.parametrize("spec, team_name, kind", CASES)
def test_every_first_job_is_admitted_in_the_team_namespace_and_refused_in_another(spec, team_name, kind):
    plan = _plan(spec)
    objects, authz = _rendered(spec)
    team = plan.team(team_name)
    manifest = page_jobs(render_onboarding(plan, team))[kind]
    group, resource = RESOURCE[kind]
    assert manifest["metadata"]["namespace"] == team.namespace
    assert manifest["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == team.local_queue
    assert admission_denials(objects, manifest, team.namespace) == []
    assert authz.allowed([team.submitters_group], Request("create", group, resource, namespace=team.namespace))
    assert not authz.allowed([team.viewers_group], Request("create", group, resource, namespace=team.namespace))

    other = _other(plan, team)
    moved = copy.deepcopy(manifest)
    moved["metadata"]["namespace"] = other.namespace
    assert admission_denials(objects, moved, other.namespace) != []
    assert not authz.allowed([team.submitters_group], Request("create", group, resource, namespace=other.namespace))


# --- instance types and accelerators, counted from the manifest ------------------------------------------------------
def _instance_types(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("instanceType", "node.kubernetes.io/instance-type"):
                yield value
            yield from _instance_types(value)
    elif isinstance(node, list):
        for item in node:
            yield from _instance_types(item)


def _accelerators(node: Any, replicas: int = 1) -> Iterator[tuple[int, int]]:
    """(accelerators per pod, pods) of every container-like mapping with resources; replicas from the nearest
    mapping that states them."""
    if isinstance(node, dict):
        replicas = node.get("replicas", replicas)
        resources = node.get("resources")
        if isinstance(resources, dict) and "requests" in resources:
            n = sum(int(v) for r, v in {**resources.get("requests", {}), **resources.get("limits", {})}.items()
                    if r.startswith(("nvidia.com/", "aws.amazon.com/neuron")))
            if n:
                yield n, replicas
        for value in node.values():
            yield from _accelerators(value, replicas)
    elif isinstance(node, list):
        for item in node:
            yield from _accelerators(item, replicas)


def pod_templates_of(node: Any) -> list[Any]:
    if isinstance(node, dict):
        found = [node["template"]] if isinstance(node.get("template"), dict) else []
        return found + [t for v in node.values() for t in pod_templates_of(v)]
    if isinstance(node, list):
        return [t for v in node for t in pod_templates_of(v)]
    return []


@pytest.mark.parametrize("spec", SPECS)
def test_every_first_job_asks_only_for_what_the_team_can_be_admitted_with(spec):
    plan = _plan(spec)
    for team in plan.tenants:
        jobs = page_jobs(render_onboarding(plan, team))
        assert list(jobs) == [k.kind for k in example_kinds(plan, team)]
        quota = {q.instance_type: q for q in team.flavors}
        for kind, manifest in jobs.items():
            types = set(_instance_types(manifest))
            asked = list(_accelerators(manifest))
            if not types:  # a kind with no pod template and no instance type field (a Workspace): CPU only
                assert not asked and not pod_templates_of(manifest), (team.name, kind)
                continue
            for t in types:
                q = quota[t]  # a type of the cluster
                nominal = q.governed(q.nominal)
                borrow = q.governed(q.borrowing_limit) if q.borrowing_limit is not None and team.can_borrow else 0
                assert nominal + borrow > 0, (team.name, kind, t)
            if asked:
                (t,) = types
                per_node = plan.catalog.lookup(t).accelerators
                assert all(per_pod <= per_node for per_pod, _ in asked), (team.name, kind)
                q = quota[t]
                limit = q.governed(q.nominal) + (q.governed(q.borrowing_limit) if team.can_borrow else 0)
                assert sum(per_pod * pods for per_pod, pods in asked) <= limit, (team.name, kind)


def test_the_training_kinds_ask_for_one_gpu_on_the_teams_type_and_a_launcher_for_none():
    plan = _plan("startup")
    jobs = page_jobs(render_onboarding(plan, plan.team("ml-engineering")))
    job = jobs["Job"]["spec"]["template"]["spec"]
    assert job["nodeSelector"] == {"node.kubernetes.io/instance-type": "ml.g5.2xlarge"}
    (container,) = job["containers"]
    resources = container["resources"]
    assert resources["requests"]["nvidia.com/gpu"] == resources["limits"]["nvidia.com/gpu"] == 1
    assert "env" not in container  # NVIDIA_VISIBLE_DEVICES: void would hide the GPU
    mpi = jobs["MPIJob"]["spec"]["mpiReplicaSpecs"]
    (launcher,) = mpi["Launcher"]["template"]["spec"]["containers"]
    assert "nvidia.com/gpu" not in launcher["resources"]["requests"]
    assert launcher["env"] == [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]
    (worker,) = mpi["Worker"]["template"]["spec"]["containers"]
    assert worker["resources"]["limits"]["nvidia.com/gpu"] == 1


def test_an_endpoint_runs_on_an_instance_type_the_team_holds_not_the_tables_example():
    plan = _plan("startup")
    team = plan.team("chatbot")
    assert "InferenceEndpointConfig" not in page_jobs(render_onboarding(plan, team))  # no model source yet
    data = yaml.safe_load((EXAMPLES / "startup.yaml").read_text())
    chatbot = next(t for t in data["teams"] if t["name"] == "chatbot")
    chatbot["workloadIdentities"][0]["grants"] = {"s3": [{"bucket": "chatbot-models", "prefix": "llm/"}]}
    plan = build_plan(parse_spec(data, today=TODAY))
    endpoint = page_jobs(render_onboarding(plan, plan.team("chatbot")))["InferenceEndpointConfig"]
    assert endpoint["spec"]["instanceType"] == "ml.g5.2xlarge"
    assert endpoint["spec"]["modelSourceConfig"]["s3Storage"]["bucketName"] == "chatbot-models"
    worker = endpoint["spec"]["worker"]["resources"]
    assert worker["requests"]["nvidia.com/gpu"] == worker["limits"]["nvidia.com/gpu"] == 1
    # half of one GPU's share of an ml.g5.2xlarge (8 vCPU, 32 GiB, 1 GPU)
    assert (worker["requests"]["cpu"], worker["requests"]["memory"]) == ("4", "16Gi")
    objects = render(plan).all()
    assert admission_denials(objects, endpoint, plan.team("chatbot").namespace) == []


def test_a_team_on_a_cpu_type_asks_for_no_accelerator_and_a_team_without_quota_is_told_it_waits(base):
    base["cluster"]["instanceGroups"].append({"name": "cpu", "instanceType": "ml.m5.2xlarge", "count": 2})
    base["teams"][1]["quota"] = [{"instanceType": "ml.m5.2xlarge", "count": 1}]
    base["teams"].append({"name": "team-c", "quota": []})
    plan = build_plan(parse_spec(base, today=TODAY))
    cpu = render_onboarding(plan, plan.team("team-b"))
    assert "| `ml.m5.2xlarge` | 8 vCPU, 32 GiB | 8 vCPU | nothing (sharing: DontLend) |" in cpu
    job = page_jobs(cpu)["Job"]["spec"]["template"]["spec"]
    assert job["nodeSelector"] == {"node.kubernetes.io/instance-type": "ml.m5.2xlarge"}
    assert job["containers"][0]["env"] == [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]
    assert not list(_accelerators(page_jobs(cpu)["Job"]))
    assert "Asks for no accelerator (the type has none) on `ml.m5.2xlarge`." in cpu
    none = render_onboarding(plan, plan.team("team-c"))
    assert "The team holds no quota on any instance type and may borrow none" in none
    assert "nodeSelector" not in page_jobs(none)["Job"]["spec"]["template"]["spec"]


def test_a_multi_node_kind_gets_accelerators_on_its_workers_alone():
    """RayCluster (a head group and worker groups with replicas), a row of the table the page has no code for: the
    head coordinates and gets no accelerator, each worker pod gets one, and every pod template the instance type."""
    from hyperpod_gov.onboard import first_job

    (kind,) = [k for k in WORKLOAD_KINDS if k.kind == "RayCluster"]
    plan = _plan("startup")
    job = first_job(plan, plan.team("ml-engineering"), kind)
    head = job.manifest["spec"]["headGroupSpec"]["template"]["spec"]
    workers = job.manifest["spec"]["workerGroupSpecs"]
    assert head["nodeSelector"] == {"node.kubernetes.io/instance-type": "ml.g5.2xlarge"}
    assert all(w["template"]["spec"]["nodeSelector"] == head["nodeSelector"] for w in workers)
    assert "nvidia.com/gpu" not in head["containers"][0]["resources"].get("requests", {})
    assert all(w["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1 for w in workers)
    assert job.accelerators == sum(w.get("replicas", 1) for w in workers)
    assert sum(n * pods for n, pods in _accelerators(job.manifest)) == job.accelerators


def _topology_cases(plan) -> Iterator[tuple[str, str, bool, list]]:
    """(team, kind, whether the team's type is topology-aware, each pod template with its annotations)."""
    from hyperpod_gov.onboard import first_job
    from hyperpod_gov.onboard.jobs import placement, pod_templates

    flavors = {o["metadata"]["name"]: o["spec"] for o in render(plan).all() if o["kind"] == "ResourceFlavor"}
    for team in plan.tenants:
        where = placement(plan, team)
        aware = where is not None and "topologyName" in flavors.get(where.instance_type, {})
        for kind in example_kinds(plan, team):
            templates = [(t.replicas, t.template.get("metadata", {}).get("annotations", {}))
                         for t in pod_templates(first_job(plan, team, kind).manifest)]
            yield team.name, kind.kind, aware, templates


def test_multi_node_first_jobs_ask_for_one_topology_domain_on_topology_aware_types_only():
    """With scheduler.topology, every pod template of a job of several pods carries Kueue's preferred-topology
    annotation at the innermost network level, on a type whose flavor names the Topology; a job of one pod, and a
    team placed on a type without the network labels (startup's ml.g5), carry none (Kueue would find no domain)."""
    asked = {"kueue.x-k8s.io/podset-preferred-topology": "topology.k8s.aws/network-node-layer-2"}
    seen = {"multi": 0, "single": 0, "not-aware": 0}
    for name in ("startup-topology", "enterprise-topology"):
        for team, kind, aware, templates in _topology_cases(_plan(name)):
            if not aware:
                seen["not-aware"] += 1
                assert all(annotations == {} for _, annotations in templates), (team, kind)
            elif sum(replicas for replicas, _ in templates) > 1:
                seen["multi"] += 1
                assert all(annotations == asked for _, annotations in templates), (team, kind)
            else:
                seen["single"] += 1
                assert all(annotations == {} for _, annotations in templates), (team, kind)
    assert all(seen.values()), seen  # the two specs exercise all three cases
    plan = _plan("enterprise-topology")
    assert "`kueue.x-k8s.io/podset-preferred-topology: topology.k8s.aws/network-node-layer-2`" in render_onboarding(
        plan, plan.tenants[0])
    assert "podset-preferred-topology" not in render_onboarding(_plan("enterprise"), _plan("enterprise").tenants[0])
    assert "podset-preferred-topology" not in render_onboarding(_plan("startup-topology"),
                                                                _plan("startup-topology").tenants[0])
