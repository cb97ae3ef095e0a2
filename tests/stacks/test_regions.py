"""Task governance where CloudFormation lacks the native types (us-west-2): the SDK-backed custom resource, with
the same properties; and a HyperPod dependencies chart from a local directory."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan import task_governance as tg
from hyperpod_gov.spec import load_spec
from tests.conftest import BASE, TODAY
from tests.synth_helpers import cfn_lint, resources

CHART = {"apiVersion": "v2", "name": "hyperpod-dependencies", "version": "0.1.0"}


@pytest.fixture(scope="module")
def west(tmp_path_factory):
    """BASE in us-west-2 with a directory chart, synthesized once."""
    from hyperpod_gov.stacks.app import synth

    root = tmp_path_factory.mktemp("west")
    chart = root / "charts" / "hyperpod-dependencies"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(yaml.safe_dump(CHART))
    (chart / "templates" / "configmap.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    data = copy.deepcopy(BASE)
    data["accounts"]["capacity"]["region"] = "us-west-2"
    data["accounts"]["consumers"][0]["region"] = "us-west-2"
    data["cluster"]["dependenciesChart"] = {"directory": "charts/hyperpod-dependencies"}
    data["sharedPool"] = {"name": "shared"}
    (root / "spec.yaml").write_text(yaml.safe_dump(data))
    plan = build_plan(load_spec(root / "spec.yaml", today=TODAY), base_dir=root)
    assembly = synth(plan, root / "out")
    return plan, {s.stack_name: s.template for s in assembly.stacks}, root / "out" / "cdk.out"


def _all(templates, type_):
    return [(lid, p) for t in templates.values() for lid, p in resources(t, type_)]


def test_the_plan_chooses_the_custom_resource_in_us_west_2(west):
    plan, _, _ = west
    assert plan.task_governance_backend == "custom-resource"


def test_policy_and_quotas_go_through_the_custom_resource_with_the_native_properties(west):
    plan, templates, _ = west
    assert not _all(templates, "AWS::SageMaker::ComputeQuota")
    assert not _all(templates, "AWS::SageMaker::ClusterSchedulerConfig")
    quotas = {p["ComputeQuotaTarget"]["TeamName"]: p for _, p in _all(templates, "Custom::ComputeQuota")}
    assert set(quotas) == {t.name for t in plan.teams}  # the shared pool included
    for team in plan.teams:
        expected = tg.compute_quota_properties(team, "<cluster-arn>")
        got = {k: v for k, v in quotas[team.name].items() if k not in ("ServiceToken", "ClusterArn")}
        assert got == {k: v for k, v in expected.items() if k != "ClusterArn"}, team.name
    (_, policy), = _all(templates, "Custom::ClusterSchedulerConfig")
    assert policy["SchedulerConfig"] == tg.scheduler_config([(p.name, p.weight) for p in plan.priority_classes],
                                                             plan.fair_sharing)


def test_every_stack_with_a_custom_resource_has_its_own_provider(west):
    _, templates, _ = west
    for name, template in templates.items():
        custom = [i for i, r in template["Resources"].items() if r["Type"].startswith("Custom::Cluster")
                  or r["Type"] == "Custom::ComputeQuota"]
        if custom:
            tokens = {json.dumps(template["Resources"][i]["Properties"]["ServiceToken"]) for i in custom}
            assert len(tokens) == 1, name
            assert "TaskGovernanceProvider" in tokens.pop(), name


def test_a_directory_dependencies_chart_synthesizes_as_an_asset(west):
    _, templates, out = west
    charts = _all(templates, "Custom::AWSCDK-EKS-HelmChart")
    deps = [(i, p) for i, p in charts if p.get("Release") == "hyperpod-dependencies"]
    assert len(deps) == 1 and "ChartAsset" in json.dumps(deps[0][1])
    capacity = next(t for n, t in templates.items() if n.endswith("-capacity"))
    (cluster_id, _), = resources(capacity, "AWS::SageMaker::Cluster")
    assert deps[0][0] in capacity["Resources"][cluster_id]["DependsOn"]  # installed before the cluster


def test_templates_are_cfn_lint_clean_in_us_west_2(west):
    from tests.test_app_quality import KEPT_WARNINGS

    _, _, out = west
    for path in sorted(out.glob("*.template.json")):
        matches = cfn_lint(path, "us-west-2")
        assert not [str(m) for m in matches if m.rule.id not in KEPT_WARNINGS], path.name


def test_explain_says_which_was_chosen(west):
    from hyperpod_gov.explain import explain

    plan, _, _ = west
    assert "through an SDK-backed custom resource (us-west-2's CloudFormation has no" in " ".join(explain(plan).split())
