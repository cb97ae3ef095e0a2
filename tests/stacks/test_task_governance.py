"""The task governance constructs on minimal stacks: typed plan parts in, the API's properties built inside, the
native types or one SDK-backed provider per stack."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

from hyperpod_gov.constructs.task_governance import ClusterPolicy, GovernedCluster, TeamQuota
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan import task_governance as tg
from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY
from tests.synth_helpers import minimal_app

ARN = "arn:aws:sagemaker:us-east-1:111111111111:cluster/abc"


@pytest.fixture(scope="module")
def plan():
    return build_plan(parse_spec(BASE, today=TODAY))


def _template(plan, backend: str) -> Template:
    stack = cdk.Stack(minimal_app(analytics_reporting=False), "tg",
                      env=cdk.Environment(account="111111111111", region="us-east-1"))
    cluster = GovernedCluster(ARN, plan.eks_cluster_name, backend)  # type: ignore[arg-type]
    policy = ClusterPolicy(stack, "ClusterPolicy", policy=plan.cluster_policy, cluster=cluster)
    for team in plan.teams:
        TeamQuota(_scope(stack, team.name),
                  "Quota", team=team, cluster=cluster).node.add_dependency(policy)
    return Template.from_stack(stack)


def _scope(stack, name):
    from constructs import Construct

    return Construct(stack, name)


def test_native_types_take_the_properties_of_the_plan_parts(plan):
    t = _template(plan, "native")
    quotas = t.find_resources("AWS::SageMaker::ComputeQuota")
    assert sorted(q["Properties"]["Name"] for q in quotas.values()) == sorted(x.quota_name for x in plan.teams)
    for team in plan.teams:
        t.has_resource_properties("AWS::SageMaker::ComputeQuota", tg.compute_quota_properties(team, ARN))
    p = plan.cluster_policy
    expected = tg.cluster_policy_properties(p.name, p.cluster_name, list(p.priority_classes), p.fair_sharing, ARN,
                                            idle_resource_sharing=p.idle_resource_sharing)
    t.has_resource_properties("AWS::SageMaker::ClusterSchedulerConfig", expected)
    t.resource_count_is("AWS::Lambda::Function", 0)


def test_the_custom_resource_backend_shares_one_provider_per_stack(plan):
    t = _template(plan, "custom-resource")
    t.resource_count_is("AWS::SageMaker::ComputeQuota", 0)
    quotas = t.find_resources("Custom::ComputeQuota")
    assert len(quotas) == len(plan.teams)
    tokens = {str(q["Properties"]["ServiceToken"]) for q in quotas.values()}
    (policy,) = t.find_resources("Custom::ClusterSchedulerConfig").values()
    assert tokens == {str(policy["Properties"]["ServiceToken"])}
    handlers = [f for f in t.find_resources("AWS::Lambda::Function").values()
                if f["Properties"].get("Handler", "").startswith("index.")]
    assert len(handlers) == 2  # onEvent and isComplete of the one provider


def test_every_stack_takes_its_common_settings_from_one_base():
    """env, description and the spec tag are set in stacks/base.py only: each stack class derives from it."""
    import ast
    from pathlib import Path

    stacks_dir = Path(__file__).resolve().parents[2] / "hyperpod_gov" / "stacks"  # the reference pipeline: its own
    found = {}
    for path in sorted(stacks_dir.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [b.id if isinstance(b, ast.Name) else b.attr for b in node.bases]  # type: ignore[union-attr]
                if any(b.endswith("Stack") for b in bases):
                    found[node.name] = (path.name, bases)
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add" and path.name != "base.py":
                assert "Tags.of" not in ast.unparse(node), f"{path.name}: tags are the base's"
    assert len(found) >= 9, found
    assert {name: bases for name, (_, bases) in found.items() if bases != ["SpecStack"] and name != "SpecStack"} == {}
