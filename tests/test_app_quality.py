"""Whole-app checks: cfn-lint, cdk-nag, determinism, stable logical ids, snapshots."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from cfnlint.api import ManualArgs, lint_file

from hyperpod_gov.spec import parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY
from tests.synth_helpers import normalise, synthesize

# cfn-lint warnings we keep, each explained in README.md ("cfn-lint warnings kept").
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
        matches = lint_file(Path(path), config=ManualArgs(regions=[region]))
        errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, "\n".join(errors)
        unexplained = sorted({m.rule.id for m in matches} - set(KEPT_WARNINGS))
        assert not unexplained, [str(m) for m in matches if m.rule.id in unexplained]


def test_readme_lists_every_kept_cfn_lint_warning():
    readme = (EXAMPLES.parent / "README.md").read_text()
    for rule in KEPT_WARNINGS:
        assert rule in readme


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

    app = build_app_for(enterprise_spec, outdir=str(tmp_path))
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


def test_synthesizing_twice_gives_the_same_bytes(enterprise, tmp_path):
    again = synthesize(enterprise.spec, tmp_path)
    for first, second in zip(enterprise.template_files(), again.template_files()):
        assert first.read_bytes() == second.read_bytes(), first.name


def test_reordering_teams_and_instance_groups_changes_no_logical_id(enterprise, tmp_path):
    def reorder(data):
        data["teams"].reverse()
        data["cluster"]["instanceGroups"].reverse()
        data["cluster"]["admins"].reverse()

    reordered = synthesize(_spec(EXAMPLES / "enterprise.yaml", reorder), tmp_path)
    for name, template in enterprise.templates.items():
        assert json.dumps(reordered.templates[name], sort_keys=True) == json.dumps(template, sort_keys=True)


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_templates_match_snapshot(example, request, snapshot_json):
    synthesized = request.getfixturevalue(example)
    assert {k: normalise(v) for k, v in sorted(synthesized.templates.items())} == snapshot_json
