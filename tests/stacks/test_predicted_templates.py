"""A template predicted while the app is built (stacks/predicted.py, assets/template_checks/predict.js) is the one
CDK writes, byte for byte; the check answers a written template with those bytes from the prediction's findings,
reports what a check of the written files reports, and checks a template written otherwise as it comes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Optional

import pytest

from hyperpod_gov.charts import render
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec
from hyperpod_gov.template_checks import SCRIPT, TemplateChecks
from hyperpod_gov.stacks import predicted
from hyperpod_gov.stacks.app import build_app
from hyperpod_gov.stacks.predicted import Predictions
from tests.conftest import TODAY
from tests.scale import many_teams_spec

PREDICT_JS = SCRIPT.with_name("predict.js")


class Recorder:
    """Keeps what ``Predictions`` sends (``TemplateChecks.predict``'s arguments)."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, Any], Optional[str], Optional[str]]] = []

    def predict(self, request: dict[str, Any], account: Optional[str], region: Optional[str]) -> None:
        self.requests.append((request, account, region))


def _build(spec, outdir: Path, checks) -> tuple[Any, Predictions, list[str]]:
    """Build the app with ``checks`` given its predictions; the app, the predictions and the stacks offered."""
    plan = build_plan(spec)
    offered: list[str] = []
    with Predictions(checks, plan) as predictions:
        offer = predictions.offer

        def counted(stack) -> bool:
            sent = offer(stack)
            if sent:
                offered.append(stack.stack_name)
            return sent
        predictions.offer = counted  # type: ignore[method-assign]
        app = build_app(plan, render(plan), outdir=str(outdir), nag=False, builtin_template_checks=False,
                        predictions=predictions)
    return app, predictions, offered


def _rendered(requests: list[dict[str, Any]]) -> list[Optional[str]]:
    """Each request's template as predict.js renders it (None: not predictable)."""
    node = subprocess.run(["node", str(PREDICT_JS)], input="".join(json.dumps(r) + "\n" for r in requests),
                          capture_output=True, text=True, check=True)
    return [json.loads(line) for line in node.stdout.splitlines()]


def _checks() -> TemplateChecks:
    """A check process of its own, without the kept findings (every template checked in it), on V8's baseline
    WebAssembly compiler alone: what is predicted and checked does not depend on the compiler (the findings are the
    same under both, tests/stacks/test_template_checks.py), and a 5-team app's templates are too few for the
    optimizing compiler to pay back its CPU."""
    started = TemplateChecks.start(keep_findings=False, tier_up=False)
    if started is None:
        pytest.skip("the template check is not available here")
    return started


def _settle(checks: TemplateChecks) -> int:
    """Wait until the check process has checked every prediction sent (check.js, "settle"); how many it rendered."""
    process = checks._processes[0]
    checks._send(process, {"settle": True})
    return json.loads(process.stdout.readline())["settled"]


def _report(checks: TemplateChecks, assembly: Path) -> tuple[str, int]:
    outcome = checks.finish(assembly)
    return json.dumps(outcome.report, sort_keys=True), outcome.reused


class Recording(Recorder):
    """A check process that also keeps what it is sent to predict."""

    def __init__(self, checks: TemplateChecks) -> None:
        super().__init__()
        self.checks = checks

    def predict(self, request: dict[str, Any], account: Optional[str], region: Optional[str]) -> None:
        super().predict(request, account, region)
        self.checks.predict(request, account, region)


@pytest.fixture(scope="module")
def scale(tmp_path_factory):
    """The 5-team spec built with a check process given its predictions, synthesized, the predictions checked:
    (assembly, recorder, offered, the check's report and how many templates it answered from them, the report of
    another process that checks the written files anew)."""
    checks, baseline = _checks(), _checks()
    try:
        recorder = Recording(checks)
        out = tmp_path_factory.mktemp("scale-5") / "cdk.out"
        app, predictions, offered = _build(parse_spec(many_teams_spec(5), today=TODAY), out, recorder)
        app.synth()
        assert predictions.sent == len(offered) == _settle(checks)  # each checked before a written one is asked for
        report, reused = _report(checks, out)
        expected, none = _report(baseline, out)
    finally:
        checks.close()
        baseline.close()
    assert none == 0
    return out, recorder, offered, (report, reused), expected


@pytest.fixture(scope="module")
def tagged(tmp_path_factory):
    """The 5-team spec with tags of its own on every resource (keys whose order differs by case), built with its
    predictions kept and synthesized."""
    data = many_teams_spec(5)
    data["tags"] = {"acme:cost-center": "ml", "Acme:Owner": "platform", "ZONE": "eu"}
    recorder = Recorder()
    out = tmp_path_factory.mktemp("tagged") / "cdk.out"
    app, _, offered = _build(parse_spec(data, today=TODAY), out, recorder)
    app.synth()
    return out, recorder, offered


@pytest.fixture(scope="module")
def enterprise_offered(enterprise_spec, enterprise, tmp_path_factory):
    """The enterprise example built (not synthesized) with its predictions kept, and the folder where the session's
    synth of it (the same app, so the same bytes) wrote its templates."""
    recorder = Recorder()
    _, _, offered = _build(enterprise_spec, tmp_path_factory.mktemp("enterprise") / "cdk.out", recorder)
    return enterprise.out_dir / "cdk.out", recorder, offered


def test_every_template_offered_renders_as_cdk_writes_it(scale, tagged, enterprise_offered):
    for assembly, recorder, offered in (scale[:3], tagged, enterprise_offered):
        assert recorder.requests and len(recorder.requests) == len(offered)
        templates = _rendered([r for r, _, _ in recorder.requests])
        for stack, template in zip(offered, templates):
            assert template == (assembly / f"{stack}.template.json").read_text(), stack


def test_the_stacks_offered_are_those_of_plain_data_alone(scale, tagged, enterprise_offered):
    assert scale[2] == ["scale-access", "scale-access-01", "scale-teams-02", "scale-teams-05", "scale-teams-09",
                        "scale-teams-15"]
    tags = [t["Key"] for t in json.loads((tagged[0] / "scale-teams-02.template.json").read_text())["Resources"][
        "AlarmTopicsfinanceexamplecomD29CFF0C"]["Properties"]["Tags"]]
    assert tags == ["acme:cost-center", "Acme:Owner", "hyperpod-gov:spec", "ZONE"] and tagged[2] == scale[2]
    assembly, _, enterprise = enterprise_offered
    written = {p.name.removesuffix(".template.json") for p in assembly.glob("*-teams-*.template.json")}
    # a team with a bucket of its own (a construct) keeps its stack out; every other teams stack is offered
    assert "acme-ml-teams-06" in written and "acme-ml-teams-06" not in enterprise
    assert written - {"acme-ml-teams-06"} <= set(enterprise)


def test_the_export_names_are_cdks():
    assert predicted.export_name("scale-capacity", {"Ref": "EksBC5472D2"}) == \
        "scale-capacity:ExportsOutputRefEksBC5472D27F5E192C"
    assert predicted.export_name("scale-monitoring", {"Fn::GetAtt": ["AlarmTopicsKey1622932D", "Arn"]}) == \
        "scale-monitoring:ExportsOutputFnGetAttAlarmTopicsKey1622932DArnCC493F98"


def test_the_check_answers_from_the_predictions_what_a_check_of_the_files_answers(scale):
    _, _, offered, (report, reused), expected = scale
    assert reused == len(offered) == 6 and report == expected


def test_a_prediction_that_misses_is_checked_as_written(scale):
    """The same requests with every import under another name: rendered and checked, none matches the files, each
    written template is checked as it comes and the report is the same."""
    assembly, recorder, _, _, expected = scale
    checks = _checks()
    try:
        for request, account, region in recorder.requests:
            tokens = {k: ({"Fn::ImportValue": "elsewhere"} if "Fn::ImportValue" in v else v)
                      for k, v in request["tokens"].items()}
            checks.predict({**request, "tokens": tokens}, account, region)
        assert _settle(checks) == 6
        report, reused = _report(checks, assembly)
    finally:
        checks.close()
    assert reused == 0 and report == expected
