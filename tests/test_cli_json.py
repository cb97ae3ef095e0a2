"""`--format json` of validate, explain and diff: one document on standard output, valid against the schema the
package ships (hyperpod_gov/schemas), its values the plan's and the same changes the text prints."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml
from referencing import Registry, Resource

from hyperpod_gov.cli import main
from hyperpod_gov.schemas import NAMES, schema
from hyperpod_gov.spec import read_yaml
from tests.conftest import EXAMPLES, ROOT

STARTUP = EXAMPLES / "startup.yaml"
ENTERPRISE = EXAMPLES / "enterprise.yaml"


def _registry() -> Registry:
    return Registry().with_resources((schema(n)["$id"], Resource.from_contents(schema(n))) for n in NAMES)


def check(name: str, document: dict) -> dict:
    """``document`` is valid against the shipped schema ``name`` (every error listed if not)."""
    validator = jsonschema.Draft202012Validator(schema(name), registry=_registry())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)
    return document


def run_json(argv: list[str], capsys) -> tuple[int, dict, str]:
    code = main([*argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out), err


def write(tmp_path, data, name="spec.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_the_schemas_are_json_schemas_and_shipped_as_package_data():
    for name in NAMES:
        jsonschema.Draft202012Validator.check_schema(schema(name))
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"schemas/*.json"' in pyproject


# --- validate -----------------------------------------------------------------------------------------------------


def test_validate_json_of_a_valid_spec_lists_its_warning_with_the_rule_id(capsys):
    code, doc, err = run_json(["validate", str(STARTUP)], capsys)
    assert code == 0
    check("validate", doc)
    assert doc["valid"] is True
    assert doc["checked"] == [{"environment": None, "valid": True, "teams": 3, "mode": "kueue", "acknowledged": 0,
                               "unusedAcknowledgements": []}]
    (warning,) = doc["issues"]
    assert warning["id"] == "HPG-D001" and warning["level"] == "warning"
    assert warning["path"] == "cluster.dependenciesChart" and warning["environment"] is None
    assert err == ""  # the warning is in the document


def test_validate_json_of_an_invalid_spec_exits_1_with_the_document_on_stdout(tmp_path, capsys):
    data = read_yaml(STARTUP)
    data["teams"][2]["name"] = "Chat_Bot"
    data["cluster"]["kubernetesVersion"] = "1.29"
    code, doc, _ = run_json(["validate", str(write(tmp_path, data))], capsys)
    assert code == 1
    check("validate", doc)
    assert doc["valid"] is False and doc["checked"] == [{"environment": None, "valid": False}]
    paths = {i["path"]: i for i in doc["issues"]}
    assert paths["teams[2].name"]["value"] == "Chat_Bot" and paths["teams[2].name"]["level"] == "error"
    assert paths["teams[2].name"]["id"] is None  # a field's own check: no rule id
    assert "cluster.kubernetesVersion" in paths


def test_validate_json_of_a_missing_file_is_a_document_too(tmp_path, capsys):
    code, doc, _ = run_json(["validate", str(tmp_path / "nope.yaml")], capsys)
    assert code == 1
    check("validate", doc)
    assert doc["issues"][0]["path"] == "(file)" and doc["issues"][0]["message"] == "no such file"


def test_validate_json_marks_each_issue_with_its_environment(tmp_path, capsys):
    data = read_yaml(STARTUP)
    data["environments"] = [
        {"name": "staging", "accounts": {"capacity": {"id": "555555555555"}, "trusted": ["444444444444"]}},
        {"name": "production", "overrides": {"cluster": {"instanceGroups": [{"name": "gpu-worker", "count": 1}]}}},
    ]
    code, doc, _ = run_json(["validate", str(write(tmp_path, data))], capsys)
    assert code == 1
    check("validate", doc)
    assert [(c["environment"], c["valid"]) for c in doc["checked"]] == [
        (None, True), ("staging", True), ("production", False)]
    errors = [i for i in doc["issues"] if i["level"] == "error"]
    assert errors and {i["environment"] for i in errors} == {"production"}
    assert {i["environment"] for i in doc["issues"] if i["id"] == "HPG-D001"} == {None, "staging"}


def test_validate_text_is_unchanged_by_the_format_option(capsys):
    assert main(["validate", str(STARTUP)]) == 0
    plain = capsys.readouterr()
    assert main(["validate", str(STARTUP), "--format", "text"]) == 0
    assert capsys.readouterr() == plain


# --- explain ------------------------------------------------------------------------------------------------------


def test_explain_json_gives_each_teams_quota_sharing_people_and_the_stacks(capsys):
    code, doc, _ = run_json(["explain", str(ENTERPRISE)], capsys)
    assert code == 0
    check("explain", doc)
    teams = {t["name"]: t for t in doc["teams"]}
    research = teams["applied-research"]
    assert [(q["instanceType"], q["accelerators"]) for q in research["quota"]] == [("ml.p5.48xlarge", 5)]
    assert research["sharing"]["strategy"] == "LendAndBorrow" and research["sharing"]["borrowLimitPercent"] == 150
    assert research["words"]["borrows"] == "up to 7 GPUs (ml.p5.48xlarge) (150%)"
    fm = teams["foundation-models"]
    assert fm["sharing"]["strategy"] == "DontLend" and fm["sharing"]["canLend"] is False
    assert "arn:aws:iam::111111111111:role/FoundationModelsScientist" in fm["submitters"]
    assert doc["stacks"][:3] == ["acme-ml-capacity", "acme-ml-governance", "acme-ml-monitoring"]
    assert [p["weight"] for p in doc["priorityClasses"]] == sorted((p["weight"] for p in doc["priorityClasses"]),
                                                                    reverse=True)


def test_explain_json_values_are_the_plans(capsys):
    from hyperpod_gov.cli import plan_of

    plan = plan_of(str(STARTUP), warn=False)
    code, doc, _ = run_json(["explain", str(STARTUP)], capsys)
    assert code == 0
    check("explain", doc)
    assert doc["stacks"] == list(plan.stacks.all_names)
    assert {c["instanceType"]: (c["instances"], c["accelerators"]) for c in doc["capacity"]} == {
        "ml.g5.2xlarge": (15, 15)}
    assert {t["name"]: t["quota"][0]["accelerators"] for t in doc["teams"]} == {
        "ml-engineering": 6, "researchers": 5, "chatbot": 4}
    assert {t["name"]: t["fairShareWeight"] for t in doc["teams"]} == {t.name: t.fair_share_weight for t in plan.teams}
    ml = next(t for t in doc["teams"] if t["name"] == "ml-engineering")
    assert [i["serviceAccount"] for i in ml["identities"]] == ["trainer"]
    assert [w["id"] for w in doc["warnings"]] == ["HPG-D001"]


def test_explain_json_of_a_slurm_spec_is_valid_too(capsys):
    code, doc, _ = run_json(["explain", str(EXAMPLES / "startup-slurm.yaml")], capsys)
    assert code == 0
    check("explain", doc)
    assert doc["orchestrator"] == "slurm"


def test_explain_json_of_an_invalid_spec_exits_1_and_prints_nothing(tmp_path, capsys):
    code = main(["explain", str(tmp_path / "nope.yaml"), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and "(file): no such file" in err


# --- diff ---------------------------------------------------------------------------------------------------------


def _changed_enterprise(tmp_path):
    data = read_yaml(ENTERPRISE)
    data["teams"][4]["quota"][0]["accelerators"] = 20
    data["teams"][4]["access"]["submitters"].append("arn:aws:iam::111111111111:role/SpeechIntern")
    data["scheduler"]["priorityClasses"][2]["weight"] = 30
    return write(tmp_path, data, "changed.yaml")


def test_diff_json_carries_each_change_with_its_old_and_new_value_and_privilege(tmp_path, capsys):
    code, doc, _ = run_json(["diff", str(ENTERPRISE), str(_changed_enterprise(tmp_path)), "--governance-only"],
                            capsys)
    assert code == 0
    check("diff", doc)
    by_words = {c["words"]: c for c in doc["changes"]}
    owns = by_words["team speech owns: 25 GPUs (ml.p5.48xlarge) -> 20 GPUs (ml.p5.48xlarge)"]
    assert (owns["view"], owns["key"], owns["path"], owns["kind"]) == ("team", "speech", "teams[].quota", "changed")
    assert (owns["old"], owns["new"], owns["privilege"]) == ("25 GPUs (ml.p5.48xlarge)", "20 GPUs (ml.p5.48xlarge)",
                                                             False)
    assert [r["event"] for r in owns["review"]] == ["cluster capacity"]
    assert all(r["team"] == "speech" for r in owns["review"])
    intern = next(c for c in doc["changes"] if c["new"] == "arn:aws:iam::111111111111:role/SpeechIntern")
    assert intern["kind"] == "added" and intern["old"] is None and intern["privilege"] is True
    assert intern["privilegeReason"] == "runs work on the team's quota"
    assert {r["event"] for r in intern["review"]} == {"access roles"}
    weight = next(c for c in doc["changes"] if c["view"] == "priority class")
    assert (weight["key"], weight["old"], weight["new"], weight["review"]) == ("experimentation", 20, 30, [])
    assert doc["privilegeWidening"] == 1 and doc["resources"] is None and doc["simulatedEffect"] is None
    # every attributed review is one of the top-level list
    assert all(r in doc["reviews"] for c in doc["changes"] for r in c["review"])
    assert doc["changed"] is True


def test_diff_json_and_text_list_the_same_changes_and_reviews(tmp_path, capsys):
    new = _changed_enterprise(tmp_path)
    assert main(["diff", str(ENTERPRISE), str(new), "--governance-only"]) == 0
    text = capsys.readouterr().out
    _, doc, _ = run_json(["diff", str(ENTERPRISE), str(new), "--governance-only"], capsys)
    governance = text.split("Contract reviews")[0].splitlines()[1:]
    printed = [line.strip() for line in governance if "widen privilege" not in line]
    assert printed == [c["words"] for c in doc["changes"]]
    reviews = text.split("Contract reviews (event-driven) and retirement:\n")[1].splitlines()
    assert [line.strip() for line in reviews] == [r["words"] for r in doc["reviews"]] + doc["retirement"]


def test_diff_json_of_a_new_team_attributes_its_first_approval(tmp_path, capsys):
    data = read_yaml(STARTUP)
    extra = dict(data["teams"][2], name="vision")
    data["teams"].append(extra)
    data["teams"][0]["quota"][0]["count"] = 2  # keep the quotas within capacity
    code, doc, _ = run_json(["diff", str(STARTUP), str(write(tmp_path, data)), "--governance-only", "--fail"], capsys)
    assert code == 1  # --fail: something changed
    check("diff", doc)
    added = next(c for c in doc["changes"] if c["kind"] == "added" and c["view"] == "team")
    assert added["key"] == "vision" and [r["event"] for r in added["review"]] == ["new connection"]


def test_diff_json_without_a_change_says_so_and_fail_exits_0(capsys):
    code, doc, _ = run_json(["diff", str(STARTUP), str(STARTUP), "--governance-only", "--fail"], capsys)
    assert code == 0
    check("diff", doc)
    assert doc["changes"] == [] and doc["reviews"] == [] and doc["changed"] is False


def test_diff_json_lists_resource_changes_unless_governance_only(tmp_path, capsys):
    data = read_yaml(ENTERPRISE)
    data["teams"][2]["sharing"]["borrowLimitPercent"] = 100
    new = write(tmp_path, data)
    code, doc, _ = run_json(["diff", str(ENTERPRISE), str(new)], capsys)
    assert code == 0
    check("diff", doc)
    assert [(r["op"], r["stack"], r["type"]) for r in doc["resources"]] == [
        ("~", "acme-ml-monitoring", "AWS::CloudWatch::Dashboard"),
        ("~", "acme-ml-teams-06", "AWS::CloudWatch::Dashboard"),
        ("~", "acme-ml-teams-06", "AWS::SageMaker::ComputeQuota"),
    ]
    assert doc["resources"][2]["logicalId"].startswith("appliedresearchQuota")
    assert doc["resources"][2]["words"].startswith("~ acme-ml-teams-06/appliedresearchQuota")


def test_every_contract_review_line_is_read_into_team_event_and_detail():
    """``diff.review_events`` reads contracts.events' lines; a line in another form would fail here first."""
    from hyperpod_gov.cli import plan_of
    from hyperpod_gov.contracts import events
    from hyperpod_gov.diff import review_events

    old = plan_of(str(ENTERPRISE), warn=False)
    data = read_yaml(ENTERPRISE)
    data["cluster"]["kubernetesVersion"] = "1.32"
    for team in data["teams"]:
        team["access"]["viewers"] = [*team["access"].get("viewers", []), "arn:aws:iam::111111111111:role/Auditor"]
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "new.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        new = plan_of(str(path), warn=False)
    lines = events(old, new)
    parsed = review_events(old, new)
    assert len(lines) > 5 and [r.words for r in parsed] == lines
    assert {r.event for r in parsed} >= {"orchestrator version", "access roles"}
    assert all(f"team {r.team}: review ({r.event}): {r.detail}" == r.words for r in parsed)


@pytest.mark.parametrize("command", ["validate", "explain"])
def test_format_json_is_offered_where_the_schema_is(command, capsys):
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    assert f"hyperpod_gov/schemas/{command}.json" in " ".join(capsys.readouterr().out.split())
