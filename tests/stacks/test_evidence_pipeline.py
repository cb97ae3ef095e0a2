"""The pipeline's post-deploy step of a spec with monitoring.evidence: `hyperpod-gov evidence` of what it deployed,
verified, uploaded with `aws s3 cp --recursive` to the bucket its stack outputs, through the capacity account's
deploy role; none without the key."""

from __future__ import annotations

import json

import pytest

from hyperpod_gov.spec import parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY
from tests.synth_helpers import build_pipeline_app_for, cfn_lint, minimal_app, resources
from tests.test_app_quality import KEPT_WARNINGS

DEPLOY_ROLE = "cdk-hnb659fds-deploy-role-{account}-{region}"


def _synth(tmp_path, evidence: bool):
    data = read_yaml(str(EXAMPLES / "startup.yaml"))
    if evidence:
        data.setdefault("monitoring", {})["evidence"] = {"bucket": "create", "retentionDays": 400}
    app = minimal_app(outdir=str(tmp_path), context={
        "pipelineRepository": "startup/gov",
        "pipelineConnectionArn": "arn:aws:codeconnections:us-east-1:444444444444:connection/abc-123",
    })
    build_pipeline_app_for(parse_spec(data, today=TODAY), spec_path="examples/startup.yaml", app=app,
                           nag=True).synth()
    (path,) = tmp_path.glob("*-pipeline.template.json")
    return path, json.loads(path.read_text())


def _buildspecs(template):
    return [json.loads(p["Source"]["BuildSpec"]) for _, p in resources(template, "AWS::CodeBuild::Project")
            if "BuildSpec" in p["Source"]]


@pytest.fixture(scope="module")
def with_evidence(tmp_path_factory):
    return _synth(tmp_path_factory.mktemp("pipeline-evidence"), True)


def test_the_post_step_records_verifies_and_uploads_what_was_deployed(with_evidence):
    _, template = with_evidence
    (spec,) = [b for b in _buildspecs(template) if "hyperpod-gov evidence" in json.dumps(b)]
    commands = spec["phases"]["build"]["commands"]
    assert "git show HEAD~1:examples/startup.yaml > /tmp/base.yaml 2>/dev/null || cp examples/startup.yaml " \
           "/tmp/base.yaml" in commands
    (run,) = [c for c in commands if "hyperpod-gov evidence examples/startup.yaml" in c]
    assert "--base /tmp/base.yaml --out /tmp/evidence &&" in run and "evidence --verify /tmp/evidence &&" in run
    assert 'aws s3 cp --recursive /tmp/evidence "s3://$EVIDENCE_BUCKET/Deploy/$(git rev-parse HEAD)/"' in run
    assert "--environment" not in run  # the spec has no environments
    roles = [c for c in commands if "profile.evidence.role_arn" in c]
    assert roles and roles[0].endswith(DEPLOY_ROLE.format(account="444444444444", region="us-east-1"))


def test_the_bucket_comes_from_the_monitoring_stacks_output_and_the_source_is_cloned(with_evidence):
    _, template = with_evidence
    text = json.dumps(template)
    assert "EVIDENCE_BUCKET" in text and "EvidenceBucketName" in text
    (pipeline,) = [p for _, p in resources(template, "AWS::CodePipeline::Pipeline")]
    source = pipeline["Stages"][0]["Actions"][0]["Configuration"]
    assert source.get("OutputArtifactFormat") == "CODEBUILD_CLONE_REF"  # git history for the commit and the base


def test_the_pipeline_template_passes_cfn_lint(with_evidence):
    path, _ = with_evidence
    matches = cfn_lint(path, "us-east-1")
    assert not [m for m in matches if m.rule.id.startswith("E")], [str(m) for m in matches]
    assert not {m.rule.id for m in matches} - set(KEPT_WARNINGS), [str(m) for m in matches]


def test_without_the_key_no_step_and_no_clone(tmp_path):
    _, template = _synth(tmp_path, False)
    assert "hyperpod-gov evidence" not in json.dumps(template)
    (pipeline,) = [p for _, p in resources(template, "AWS::CodePipeline::Pipeline")]
    assert "OutputArtifactFormat" not in pipeline["Stages"][0]["Actions"][0]["Configuration"]


def test_the_step_and_the_bucket_name_the_same_role_and_output():
    """The reference pipeline uses only the public API, so it spells the deploy role and the output itself."""
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.plan.evidence import BUCKET_OUTPUT, evidence_of
    from stacks.pipeline import DEPLOY_ROLE as PIPELINE_ROLE, EVIDENCE_OUTPUT

    data = read_yaml(str(EXAMPLES / "startup.yaml"))
    data.setdefault("monitoring", {})["evidence"] = {"bucket": "create"}
    plan = build_plan(parse_spec(data, today=TODAY))
    assert evidence_of(plan).writer == PIPELINE_ROLE.format(account=plan.account, region=plan.region)
    assert EVIDENCE_OUTPUT == BUCKET_OUTPUT
