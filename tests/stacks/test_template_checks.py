"""CDK's template check run beside the synth (hyperpod_gov.template_checks) is CDK's check: the same engine, rules
and options as aws-cdk-lib's plugin, the same report on the same templates, acknowledged the same way, failing the
synth on the same findings."""

from __future__ import annotations

import copy
import json
import os
import re
import tarfile
import uuid
from pathlib import Path

import pytest

from hyperpod_gov.spec import parse_spec
from hyperpod_gov.template_checks import NICENESS, PLUGIN_NAME, SCRIPT, TemplateChecks, shared
from hyperpod_gov.template_engine import ENGINE_PREFIX, cdk_tarball, engine_files
from tests.conftest import BASE, TODAY

PLUGIN_JS = "package/core/lib/validation/cloudformation-validate-plugin.js"


@pytest.fixture(scope="module")
def cdk_files() -> dict[str, str]:
    """aws-cdk-lib's template-check plugin and the engine's package.json, read from the package Python imports."""
    wanted = {PLUGIN_JS, "package/package.json", f"{ENGINE_PREFIX}package.json"}
    out = {}
    with tarfile.open(cdk_tarball(), "r|gz") as archive:
        for member in archive:
            if member.name in wanted:
                out[member.name] = archive.extractfile(member).read().decode()
    return out


def _js_list(text: str, pattern: str) -> list:
    found = re.search(pattern, text, re.S)
    assert found, pattern
    return json.loads("[" + found.group(1).replace("'", '"').rstrip(", \n") + "]")


def test_the_options_are_those_of_cdks_plugin(cdk_files):
    plugin, ours = cdk_files[PLUGIN_JS], SCRIPT.read_text()
    assert sorted(_js_list(plugin, r"IGNORE_RULES=new Set\(\[(.*?)\]\)")) == sorted(
        _js_list(ours, r"const IGNORE_RULES = \[(.*?)\];"))
    assert 'services:[{ruleId:"W3697",service:"AWS::AutoScaling"}]' in plugin
    assert "const EXCLUDE_SERVICES = [{ ruleId: 'W3697', service: 'AWS::AutoScaling' }];" in ours
    assert 'detailLevel:"STANDARD"' in plugin and "const DETAIL_LEVEL = 'STANDARD';" in ours
    assert 'severityLevel:"WARN"' in plugin and "const SEVERITY_LEVEL = 'WARN';" in ours
    # The default rules: every .rego of core/lib/validation/rules, sorted, as regoRules (both read the folder).
    assert 'path().join(__dirname,"rules")' in plugin and 'f.endsWith(".rego")' in plugin
    assert f'static PLUGIN_NAME="{PLUGIN_NAME}"' in plugin


def test_the_engine_is_the_one_aws_cdk_lib_bundles(cdk_files):
    bundled = json.loads(cdk_files["package/package.json"])["dependencies"]["@aws/cloudformation-validate"]
    engine, rules = engine_files()
    assert json.loads((engine / "package.json").read_text())["version"] == bundled
    assert json.loads(cdk_files[f"{ENGINE_PREFIX}package.json"])["version"] == bundled
    assert sorted(p.name for p in rules.glob("*.rego"))  # CDK's default rules came with it


def _comparable(violations: list[dict]) -> list[str]:
    """A violation without what only CDK can know (stack traces, construct classes), its resources sorted."""
    out = []
    for v in violations:
        kept = {k: v[k] for k in v if k not in ("violatingConstructs", "acknowledgedStackTrace")}
        kept["resources"] = sorted((c["constructPath"], json.dumps(c["cloudFormationResource"], sort_keys=True))
                                   for c in v["violatingConstructs"])
        out.append(json.dumps(kept, sort_keys=True))
    return sorted(out)


def _niceness(pid: int) -> int:
    """The niceness every thread of a process runs at (V8's compiler and collector threads included); one value or
    an error."""
    values = {int(stat.read_text().rsplit(")", 1)[1].split()[16]) for stat in Path(f"/proc/{pid}/task").glob("*/stat")}
    assert len(values) == 1, values
    return values.pop()


@pytest.mark.parametrize("tier_up", [False, True], ids=["baseline-compiler", "optimizing-compiler"])
def test_the_report_is_cdks_on_the_pipeline_app_and_its_stages(pipeline, tier_up):
    """The pipeline app was synthesized with CDK's built-in check (its stages nest assemblies): the check run
    beside it reports the same findings, placed and acknowledged alike, whichever of V8's compilers runs it: with
    the optimizing one (a large app's) as two warmed-up processes sharing the templates out, with the baseline one (a
    small app's) as the one process a small app's synth runs."""
    report = json.loads((pipeline / "validation-report.json").read_text())
    (cdk,) = [p for p in report["pluginReports"] if p["pluginName"] == PLUGIN_NAME]
    checks = TemplateChecks.start(tier_up=tier_up)
    assert checks is not None
    assert ("--liftoff-only" in checks._command) is not tier_up
    if tier_up:
        checks.grow(2)  # the templates shared out by size between two processes
        checks.warm_up()  # its findings are dropped: the report is the same
    try:
        ours = checks.finish(pipeline).report
        assert {_niceness(p.pid) for p in checks._processes} == {min(19, os.nice(0) + NICENESS)}
    finally:
        checks.close()
    assert ours["pluginVersion"] == cdk["pluginVersion"]
    assert ours["conclusion"] == cdk["conclusion"] == "success"
    assert _comparable(ours["violations"]) == _comparable(cdk["violations"])
    assert _comparable(ours["suppressedViolations"]) == _comparable(cdk["suppressedViolations"])
    rules = {v["acknowledgedId"] for v in ours["suppressedViolations"]}
    assert {"CloudFormation-Validate::W3010", "CloudFormation-Validate::F3006"} <= rules


def test_templates_watched_as_they_are_written_are_checked_as_after_the_synth(enterprise, tmp_path):
    """``watch``: each template is checked once it is whole (one written in two parts is not taken at the first),
    an earlier synth's file is not taken for this one's, and a template watched for another region than the
    assembly gives its stack is checked again; the report is the one ``finish`` makes of the finished assembly."""
    import shutil
    import threading
    import time

    from hyperpod_gov.template_checks import environment

    source = enterprise.out_dir / "cdk.out"
    expected = shared().finish(source).report
    target = tmp_path / "cdk.out"
    shutil.copytree(source, target)
    manifest = json.loads((target / "manifest.json").read_text())["artifacts"]
    stacks = [(target / a["properties"]["templateFile"], *environment(a["environment"]))
              for a in manifest.values() if a["type"] == "aws:cloudformation:stack"]
    texts = {path: path.read_bytes() for path, _, _ in stacks}
    first, *_ = stacks
    stacks[-1] = (stacks[-1][0], stacks[-1][1], "eu-west-1")  # not the region the assembly gives it
    (target / first[0].name).write_text("{}")  # what an earlier synth left there: removed by watch
    checks = shared()
    checks.watch(stacks)
    assert not first[0].exists()

    def write() -> None:  # as CDK's synth would: one template after another, the first in two parts
        half = len(texts[first[0]]) // 2
        with first[0].open("wb") as f:
            f.write(texts[first[0]][:half])
            f.flush()
            time.sleep(0.3)
            f.write(texts[first[0]][half:])
        for path, text in texts.items():
            if path != first[0]:
                path.write_bytes(text)

    writer = threading.Thread(target=write)
    writer.start()
    writer.join()
    outcome = checks.finish(target)
    assert outcome.watched == len(stacks) - 1  # the one watched for another region was checked again
    assert _comparable(outcome.report["violations"]) == _comparable(expected["violations"])
    assert _comparable(outcome.report["suppressedViolations"]) == _comparable(expected["suppressedViolations"])
    assert outcome.report["conclusion"] == expected["conclusion"]
    assert outcome.report["pluginVersion"] == expected["pluginVersion"]


def test_the_synth_watches_each_template_as_the_assembly_names_it(tmp_path):
    """What ``synth`` asks the check to watch (read from the app before it is synthesized) is each stack's template
    file, account and region as the assembly then holds them: else every template is checked after the synth."""
    from hyperpod_gov.template_checks import _stacks
    from hyperpod_gov.stacks.app import _templates
    from tests.synth_helpers import build_app_for

    app = build_app_for(parse_spec(BASE, today=TODAY), outdir=str(tmp_path), nag=False)
    watched = _templates(app, tmp_path)
    app.synth()
    assert sorted(watched) == sorted((s.template_path, s.account, s.region) for s in _stacks(tmp_path))
    assert len(watched) >= 4 and all(account and region for _, account, region in watched)


def test_a_watch_whose_templates_never_come_ends_with_the_next_request(enterprise, tmp_path):
    """A synth that failed before writing its templates leaves the watch open: the next check still answers."""
    checks = shared()
    checks.watch([(tmp_path / "never.template.json", "111111111111", "us-east-1")])
    outcome = checks.finish(enterprise.out_dir / "cdk.out")
    assert outcome.watched == 0 and outcome.report["conclusion"] == "success"


def test_a_template_the_process_checked_already_gets_the_same_findings_again_unless_a_byte_changed(
        enterprise, tmp_path):
    """The check process keeps each template's findings by its bytes, account and region: an app checked again
    (the tests, `hyperpod-gov diff`'s two synths) is not checked again, and its report is the same; a template
    whose bytes changed is checked again."""
    import shutil

    source = enterprise.out_dir / "cdk.out"
    templates = sorted(source.glob("*.template.json"))
    checks = shared()
    first = checks.finish(source)
    again = checks.finish(source)
    assert again.reused == len(templates) >= 4
    assert again.report == first.report
    target = tmp_path / "cdk.out"
    shutil.copytree(source, target)
    changed = target / templates[0].name
    template = json.loads(changed.read_text())
    # changed in a way of its own to this run: the findings of the template changed as before are kept (stored.js)
    template["Description"] = template.get("Description", "") + f" (changed, {uuid.uuid4().hex})"
    changed.write_text(json.dumps(template, indent=1))
    outcome = checks.finish(target)
    assert outcome.reused == len(templates) - 1
    assert outcome.report["conclusion"] == first.report["conclusion"]


def test_the_enterprise_synth_ran_the_check_beside_cdk(enterprise):
    report = json.loads((enterprise.out_dir / "cdk.out" / "validation-report.json").read_text())
    (section,) = [p for p in report["pluginReports"] if p["pluginName"] == PLUGIN_NAME]
    assert section["conclusion"] == "success" and section["suppressedViolations"]


@pytest.fixture(scope="module")
def b200_spec():
    """A new cluster of ml.p6-b200.48xlarge in us-east-1: cfn-lint's data has it, CDK's validator data not
    (E3644, acknowledged by the cluster construct with HPG-I006 as the reason)."""
    data = copy.deepcopy(BASE)
    data["cluster"]["instanceGroups"] = [{"name": "b200", "instanceType": "ml.p6-b200.48xlarge", "count": 1}]
    for team in data["teams"]:
        team["quota"] = []
        team.pop("sharing", None)
    return parse_spec(data, today=TODAY)


def test_an_unacknowledged_finding_fails_the_synth_and_names_resource_and_rule(b200_spec, tmp_path, monkeypatch):
    from hyperpod_gov.constructs.hyperpod_cluster import _InstanceGroups
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.stacks.app import PolicyValidationError, synth

    monkeypatch.setattr(_InstanceGroups, "_acknowledge_instance_types", lambda self, c: None)
    with pytest.raises(PolicyValidationError) as failed:
        synth(build_plan(b200_spec), tmp_path)
    (line,) = [v for v in failed.value.violations if "E3644" in v]
    assert line.startswith("acme-capacity/HyperPod/Resource: CloudFormation-Validate::E3644: InstanceGroups")
    assert "ml.p6-b200.48xlarge" in line
    report = json.loads(Path(failed.value.report).read_text())
    (section,) = [p for p in report["pluginReports"] if p["pluginName"] == PLUGIN_NAME]
    assert section["conclusion"] == "failure"


def test_without_the_engine_cdk_checks_inside_the_synth(b200_spec, tmp_path, monkeypatch):
    """No engine to run beside (an aws-cdk-lib without one): CDK's built-in check runs, and fails alike."""
    import hyperpod_gov.template_checks as template_checks
    import hyperpod_gov.stacks.app
    from hyperpod_gov.constructs.hyperpod_cluster import _InstanceGroups
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.stacks.app import PolicyValidationError, synth

    monkeypatch.setattr(template_checks, "engine_files", lambda tarball=None: None)
    assert TemplateChecks.start() is None
    monkeypatch.setattr(hyperpod_gov.stacks.app, "shared_template_checks", lambda: None)
    monkeypatch.setattr(_InstanceGroups, "_acknowledge_instance_types", lambda self, c: None)
    with pytest.raises(PolicyValidationError) as failed:
        synth(build_plan(b200_spec), tmp_path)
    assert any("E3644" in v for v in failed.value.violations)
    report = json.loads(Path(failed.value.report).read_text())
    assert [p["pluginVersion"] for p in report["pluginReports"] if p["pluginName"] == PLUGIN_NAME]  # CDK's own


def test_one_check_process_serves_every_synth_of_a_process():
    checks = shared()
    assert checks is not None and checks.alive() and shared() is checks


def test_cdk_validation_false_turns_it_off_as_it_turns_off_cdks(monkeypatch):
    monkeypatch.setenv("CDK_VALIDATION", "false")
    assert TemplateChecks.start() is None and shared() is None


def test_a_cache_folder_it_cannot_write_leaves_the_check_to_cdk(monkeypatch, tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should go")
    monkeypatch.setenv("HYPERPOD_GOV_CACHE", str(blocker))
    assert TemplateChecks.start() is None


def test_the_warm_up_template_has_every_resource_type_the_examples_write(enterprise, startup):
    """check.js warms its engine up on one resource of each type hyperpod-gov writes (custom resources as one)."""
    from hyperpod_gov.template_checks import SCRIPT

    warm = json.loads(SCRIPT.with_name("warmup.template.json").read_text())["Resources"]
    kind = lambda t: "Custom" if t.startswith("Custom::") or t == "AWS::CloudFormation::CustomResource" else t  # noqa: E731
    written = {kind(r["Type"]) for synthesized in (enterprise, startup) for template in synthesized.templates.values()
               for r in template.get("Resources", {}).values()}
    assert written <= {kind(r["Type"]) for r in warm.values()}
