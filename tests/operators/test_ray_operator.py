"""cluster.operators: ray installs KubeRay from its pinned Helm chart (the way sagemaker-hyperpod-ray-install-kuberay.html
installs it) after the nodes and the scheduler, on a cluster hyperpod-gov creates and, when listed, on an existing
one; the Kueue Configuration then queues the Ray kinds of the teams approved for ray."""

from __future__ import annotations

import copy
import json

import pytest

from hyperpod_gov.explain import explain
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.operators import KUBERAY_NAMESPACE
from hyperpod_gov.spec import SpecError, parse_spec, read_yaml
from tests.conftest import BASE, EXAMPLES, TODAY
from tests.synth_helpers import resources, synthesize

CONTRACT = {"businessOwner": "b@example.com", "operationsOwner": "o@example.com", "costOwner": "c@example.com",
            "dataClassification": "internal", "reviewBy": "2027-06-30"}
HELM = "Custom::AWSCDK-EKS-HelmChart"


def ray_spec(**cluster) -> dict:
    data = copy.deepcopy(BASE)
    data["scheduler"]["mode"] = "kueue"
    data["cluster"]["operators"] = ["training", "ray"]
    data["cluster"].update(cluster)
    data["teams"][0]["contract"] = {**CONTRACT, "approvedWorkloads": ["training", "ray"]}
    return data


@pytest.fixture(scope="module")
def ray_app(tmp_path_factory):
    return synthesize(parse_spec(ray_spec(), today=TODAY), tmp_path_factory.mktemp("ray"), nag=False)


def _charts(template) -> dict[str, tuple[str, dict]]:
    return {p["Release"]: (lid, p) for lid, p in resources(template, HELM)}


def _depends(template, logical_id) -> set[str]:
    depends = template["Resources"][logical_id].get("DependsOn", [])
    return set([depends] if isinstance(depends, str) else depends)


def test_ray_plans_the_pinned_kuberay_chart_and_its_namespace():
    plan = build_plan(parse_spec(ray_spec(), today=TODAY))
    (chart,) = plan.operator_charts
    assert (chart.chart, chart.repository, chart.version, chart.release, chart.namespace) == (
        "kuberay-operator", "https://ray-project.github.io/kuberay-helm/", "1.6.2", "kuberay-operator", "ray-system")
    assert KUBERAY_NAMESPACE in plan.strict_mode_namespaces
    without = ray_spec(operators=["training"])
    without["teams"][0]["contract"]["approvedWorkloads"] = ["training"]
    plan = build_plan(parse_spec(without, today=TODAY))
    assert plan.operator_charts == () and KUBERAY_NAMESPACE not in plan.strict_mode_namespaces


def test_the_kuberay_chart_version_is_pinned_and_checked():
    plan = build_plan(parse_spec(ray_spec(addonVersions={"kuberayChart": "1.5.1"}), today=TODAY))
    assert plan.operator_charts[0].version == "1.5.1"
    with pytest.raises(SpecError) as info:
        parse_spec(ray_spec(addonVersions={"kuberayChart": "latest"}), today=TODAY)
    assert "cluster.addonVersions.kuberayChart" in str(info.value) and "1.6.2" in str(info.value)


def test_the_capacity_stack_installs_kuberay_after_the_nodes_and_the_scheduler(ray_app):
    t = ray_app.template("capacity")
    charts = _charts(t)
    lid, props = charts["kuberay-operator"]
    assert (props["Chart"], props["Repository"], props["Version"], props["Namespace"], props["CreateNamespace"],
            props["Wait"]) == ("kuberay-operator", "https://ray-project.github.io/kuberay-helm/", "1.6.2",
                               "ray-system", True, True)
    (hyperpod, _), = resources(t, "AWS::SageMaker::Cluster")
    kueue_id = charts["kueue"][0]
    assert {hyperpod, kueue_id} <= _depends(t, lid)


def test_the_kueue_chart_queues_the_ray_kinds(ray_app):
    (_, kueue), = [c for c in _charts(ray_app.template("capacity")).values() if c[1]["Release"] == "kueue"]
    values = kueue["Values"]
    text = values if isinstance(values, str) else json.dumps(values)
    config = json.loads(json.loads(text)["managerConfig"]["controllerManagerConfigYaml"])
    assert {"ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice"} <= set(config["integrations"]["frameworks"])


def test_explain_names_the_kuberay_chart():
    assert "chart kuberay-operator 1.6.2" in explain(build_plan(parse_spec(ray_spec(), today=TODAY)))


def test_an_existing_cluster_gets_kuberay_from_the_governance_stack_when_listed(tmp_path):
    data = copy.deepcopy(read_yaml(EXAMPLES / "existing.yaml"))
    data["cluster"]["existing"]["hyperPodClusterArn"] = "arn:aws:sagemaker:us-west-2:111111111111:cluster/abcd1234efgh"
    data["cluster"]["operators"] = ["ray"]
    t = synthesize(parse_spec(data, today=TODAY), tmp_path, nag=False).template("governance")
    lid, props = _charts(t)["kuberay-operator"]
    assert (props["Version"], props["Namespace"]) == ("1.6.2", "ray-system")
    assert [lid_ for lid_, _ in resources(t, "AWS::EKS::Addon")] == []  # KubeRay is no EKS add-on
