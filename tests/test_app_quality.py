"""Whole-app checks: cfn-lint, cdk-nag, determinism, stable logical ids, snapshots."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hyperpod_gov.spec import parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY
from tests.synth_helpers import cfn_lint, resources, snapshot_parts, synthesize

# cfn-lint warnings we keep, each explained in docs/synth.md ("cfn-lint warnings kept").
KEPT_WARNINGS = {
    "W3005": "DependsOn that CDK adds on top of a Ref, in aws-cdk-lib's own constructs (harmless)",
    "W3010": "AZ names are written into the template so that synth needs no AWS lookup",
}


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_every_template_passes_cfn_lint(example, request):
    synthesized = request.getfixturevalue(example)
    region = synthesized.spec.accounts.capacity.region
    files = synthesized.template_files()
    assert files
    for path in files:
        matches = cfn_lint(Path(path), region)
        errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, "\n".join(errors)
        unexplained = sorted({m.rule.id for m in matches} - set(KEPT_WARNINGS))
        assert not unexplained, [str(m) for m in matches if m.rule.id in unexplained]


def test_the_synth_page_lists_every_kept_cfn_lint_warning():
    page = (EXAMPLES.parent / "docs" / "synth.md").read_text()
    kept = page[page.index("Warnings\n  kept"):]
    for rule in KEPT_WARNINGS:
        assert f"`{rule}`" in kept, rule


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_cdk_nag_acknowledgements_name_a_finding_and_a_reason(example, request):
    """Synth itself fails on an unacknowledged AwsSolutions finding; here we read what was acknowledged."""
    synthesized = request.getfixturevalue(example)
    acks = {}
    for path in (synthesized.out_dir / "cdk.out").glob("*.metadata.json"):
        for construct, entries in json.loads(path.read_text()).items():
            for entry in entries:
                if entry["type"] == "aws:cdk:acknowledged-rules":
                    acks.update({(construct, k): v for k, v in entry["data"].items()})
    assert any(k.startswith("AwsSolutions::AwsSolutions-IAM4[Policy::") for _, k in acks)
    for (construct, rule), reason in acks.items():
        assert rule.startswith(("AwsSolutions::AwsSolutions-", "CloudFormation-Validate::")), rule
        if "IAM4" in rule or "IAM5" in rule:
            assert "[" in rule, f"{construct}: {rule} acknowledges a whole rule, not one finding"
        assert len(reason) > 40, (construct, rule, reason)


def test_an_unacknowledged_finding_fails_the_synth(enterprise_spec, tmp_path):
    from aws_cdk import aws_iam as iam

    from tests.synth_helpers import build_app_for

    # cdk-nag alone: CDK's template check (its engine built in this process) has its own tests
    app = build_app_for(enterprise_spec, outdir=str(tmp_path), builtin_template_checks=False)
    stack = app.node.find_child("acme-ml-capacity")
    role = iam.Role(stack, "Careless", assumed_by=iam.ServicePrincipal("ec2.amazonaws.com"))
    role.add_to_policy(iam.PolicyStatement(actions=["s3:*"], resources=["*"]))
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()
    report = json.loads((tmp_path / "validation-report.json").read_text())
    rules = {v["ruleName"] for p in report["pluginReports"] for v in p["violations"]}
    assert "AwsSolutions-IAM5[Action::s3:*]" in rules


def _spec(path: Path, mutate=None):
    data = read_yaml(path)
    if mutate:
        data = copy.deepcopy(data)
        mutate(data)
    return parse_spec(data, today=TODAY)


def _reorder(data):
    data["teams"].reverse()
    data["cluster"]["instanceGroups"].reverse()
    data["cluster"]["admins"].reverse()


@pytest.fixture(scope="module")
def reordered(tmp_path_factory):
    """The enterprise spec synthesized again, its teams, instance groups and admins in reverse order: one synth for
    both properties below (a second synth of the spec as written proved nothing more, and cost as much)."""
    return synthesize(_spec(EXAMPLES / "enterprise.yaml", _reorder), tmp_path_factory.mktemp("reordered"))


def test_synthesizing_twice_gives_the_same_bytes(enterprise, reordered):
    """Another synth of the same spec, its lists in another order: the same files, byte for byte."""
    assert [p.name for p in reordered.template_files()] == [p.name for p in enterprise.template_files()]
    for first, second in zip(enterprise.template_files(), reordered.template_files()):
        assert first.read_bytes() == second.read_bytes(), first.name


def test_an_annotation_carries_no_stack_trace_so_two_synths_write_the_same_metadata(enterprise_spec, tmp_path):
    """A warning CDK attaches (here: one added to a stack, as CDK adds one to a template near its size limit)
    would record JavaScript's stack, which names the jsii kernel's temporary directory of that process."""
    import aws_cdk as cdk

    from tests.synth_helpers import build_app_for

    app = build_app_for(enterprise_spec, outdir=str(tmp_path), nag=False, builtin_template_checks=False)
    cdk.Annotations.of(app.node.find_child("acme-ml-monitoring")).add_warning_v2("test:near-limit", "a warning")
    app.synth()
    entries = json.loads((tmp_path / "acme-ml-monitoring.metadata.json").read_text())["/acme-ml-monitoring"]
    warning = next(e for e in entries if e["type"] == "aws:cdk:warning")
    assert warning["data"].startswith("a warning") and "trace" not in warning


def test_reordering_teams_and_instance_groups_changes_no_logical_id(enterprise, reordered):
    for name, template in enterprise.templates.items():
        assert json.dumps(reordered.templates[name], sort_keys=True) == json.dumps(template, sort_keys=True)


def _estimated_resources(plan) -> dict[str, int]:
    """The plan's resource estimate of every team and access stack, as plan.invariants budgets it."""
    from hyperpod_gov.plan import invariants

    overhead = invariants.provider_resources(plan)
    out = {s.name: overhead + sum(invariants._team_resources(plan, t) for t in s.members)
           + invariants.TOPIC_RESOURCES * len(plan.monitoring.owner_topics(plan.team(t).monitoring for t in s.members))
           for s in plan.stacks.teams}
    return out | {s.name: len(s.members) for s in plan.stacks.access}


@pytest.mark.parametrize("example", ["enterprise", "startup"])  # task-governance (native) and kueue mode
def test_the_plans_resource_estimate_is_the_synthesized_count_of_every_team_and_access_stack(example, request):
    from hyperpod_gov.plan import build_plan

    synthesized = request.getfixturevalue(example)
    estimate = _estimated_resources(build_plan(synthesized.spec))
    assert estimate == {name: len(synthesized.templates[name]["Resources"]) for name in estimate}


def test_the_resource_estimate_counts_the_task_governance_provider_exactly(tmp_path):
    from hyperpod_gov.plan import build_plan
    from tests.conftest import BASE

    data = copy.deepcopy(BASE)
    data["scheduler"]["taskGovernanceResources"] = "custom-resource"
    spec = parse_spec(data, today=TODAY)
    plan = build_plan(spec)
    assert plan.task_governance_backend == "custom-resource"
    synthesized = synthesize(spec, tmp_path, nag=False)  # cdk-nag adds no resource
    estimate = _estimated_resources(plan)
    assert estimate == {name: len(synthesized.templates[name]["Resources"]) for name in estimate}


def test_the_kueue_chart_installs_the_plans_controller_configuration(startup):
    """The fair-sharing preemption strategies (tests/charts) reach the cluster through this Helm value."""
    from hyperpod_gov.plan import build_plan

    (chart,) = [p for _, p in resources(startup.template("capacity"), "Custom::AWSCDK-EKS-HelmChart")
                if p["Chart"] == "kueue"]
    config = json.loads(chart["Values"])["managerConfig"]["controllerManagerConfigYaml"]
    assert config == build_plan(startup.spec).kueue_config
    assert json.loads(config)["fairSharing"]["preemptionStrategies"] == ["LessThanOrEqualToFinalShare",
                                                                        "LessThanInitialShare"]


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_templates_match_snapshot(example, request, snapshot_json):
    """One snapshot per stack, and per team in a team stack, so that a change reads as a small diff."""
    from hyperpod_gov.plan import build_plan

    synthesized = request.getfixturevalue(example)
    team_stacks = {s.name: s.members for s in build_plan(synthesized.spec).stacks.teams}
    for name, part in snapshot_parts(synthesized.templates, team_stacks).items():
        assert part == snapshot_json(name=name), name


def test_a_cdk_error_during_synth_is_reported_like_a_spec_error(startup_spec, tmp_path):
    """Break an invariant behind the plan's back (two admins, one construct id): CDK refuses, and the user gets
    path, value and fix instead of a jsii traceback."""
    from dataclasses import replace

    from hyperpod_gov.plan import AdminPlan, build_plan
    from hyperpod_gov.spec import SpecError
    from hyperpod_gov.stacks.app import synth

    plan = build_plan(startup_spec)
    clash = (AdminPlan("arn:aws:iam::444444444444:role/A-B", "Same", path="cluster.admins[0]"),
             AdminPlan("arn:aws:iam::444444444444:role/A_B", "Same", path="cluster.admins[1]"))
    broken = replace(plan, cluster=replace(plan.cluster, admins=clash))
    with pytest.raises(SpecError) as info:
        synth(broken, tmp_path, nag=False)
    (issue,) = info.value.issues
    assert issue.path == "(synth)"
    assert "There is already a Construct with name 'AdminSame'" in issue.problem
    assert "report the spec to hyperpod-gov" in issue.fix


def test_an_oversized_team_manifest_names_the_team_before_cdk_runs(startup_spec, tmp_path):
    from hyperpod_gov.charts import render
    from hyperpod_gov.constructs.manifests import MAX_MANIFEST_BYTES
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.spec import SpecError
    from hyperpod_gov.stacks.app import synth

    plan = build_plan(startup_spec)
    manifests = render(plan)
    big = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "hyperpod-ns-chatbot"},
           "data": {"x": "y" * MAX_MANIFEST_BYTES}}
    manifests.teams["chatbot"].append(big)
    with pytest.raises(SpecError, match=r"teams\[chatbot\]: the team's Kubernetes objects take \d+ bytes, over 262144"):
        synth(plan, tmp_path, manifests=manifests)
    assert not (tmp_path / "cdk.out").exists()  # nothing was synthesized


def test_cdk_json_carries_every_feature_flag_the_app_sets(startup):
    """So that `cdk synth` builds what the tests build, and the CDK CLI reports no unconfigured flag."""
    from hyperpod_gov.stacks.base import FEATURE_FLAGS

    context = json.loads((Path(__file__).resolve().parents[1] / "cdk.json").read_text())["context"]
    assert {k: v for k, v in context.items() if k != "spec"} == FEATURE_FLAGS
    manifest = json.loads((startup.out_dir / "cdk.out" / "manifest.json").read_text())
    report = manifest["artifacts"]["aws-cdk-lib/feature-flag-report"]["properties"]["flags"]
    unconfigured = [name for name, f in report.items() if "userValue" not in f
                    and f.get("recommendedValue") != f.get("unconfiguredBehavesLike", {}).get("v2", False)]
    assert unconfigured == []
