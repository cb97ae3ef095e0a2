"""The `hyperpod-gov` command as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hyperpod_gov.cli import main
from tests.conftest import EXAMPLES


def test_validate_accepts_both_examples(capsys):
    assert main(["validate", str(EXAMPLES / "enterprise.yaml")]) == 0
    assert main(["validate", str(EXAMPLES / "startup.yaml")]) == 0
    assert "valid (5 teams, task-governance mode)" in capsys.readouterr().out


def test_validate_names_slurm_for_a_slurm_spec(capsys):
    assert main(["validate", str(EXAMPLES / "startup-slurm.yaml")]) == 0
    assert "valid (3 teams, Slurm)" in capsys.readouterr().out


def test_validate_prints_every_error_and_exits_1_without_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    text = (EXAMPLES / "startup.yaml").read_text()
    text = text.replace("name: chatbot", "name: Chat_Bot").replace("count: 15", "count: 1")
    bad.write_text(text.replace('kubernetesVersion: "1.33"', 'kubernetesVersion: "1.29"'))
    run = subprocess.run(
        [sys.executable, "-m", "hyperpod_gov.cli", "validate", str(bad)], capture_output=True, text=True
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert "teams[2].name: team name is not a DNS-1123 label ('Chat_Bot')" in run.stderr
    assert "cluster.kubernetesVersion: is older than 1.30" in run.stderr


def test_validate_reports_a_missing_file(capsys, tmp_path):
    assert main(["validate", str(tmp_path / "nope.yaml")]) == 1
    assert "(file): no such file" in capsys.readouterr().err


def test_explain_prints_a_readable_table(capsys):
    """The team table, split into tables of at most 100 columns that each start with TEAM."""
    assert main(["explain", str(EXAMPLES / "enterprise.yaml")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100
    headers = [line.split("  ") for line in lines if line.startswith("TEAM  ")]
    columns = [c.strip() for h in headers for c in h if c.strip() and c.strip() != "TEAM"]
    assert columns[:5] == ["OWNS", "CAN LEND", "MAY BORROW", "WEIGHT", "PREEMPTS OWN"]
    research = " ".join(line for line in lines if line.startswith("applied-research "))
    assert "5 GPUs (ml.p5.48xlarge)" in research
    assert "up to 7 GPUs (ml.p5.48xlarge) (150%)" in research
    fm = " ".join(line for line in lines if line.startswith("foundation-models "))
    assert "nothing (DontLend)" in fm
    assert "111111111111:role/FoundationModelsScientist" in out


def test_schema_is_json_schema_with_descriptions(capsys):
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert "teams" in schema["properties"]
    team = schema["$defs"]["Team"]
    assert team["additionalProperties"] is False
    assert all("description" in p for p in team["properties"].values())
    assert "fairShareWeight" in team["properties"]


def test_synth_into_a_path_it_cannot_write_says_so_without_a_traceback(tmp_path, capsys):
    # In this process, main as the console script calls it (an exception would fail the test): a subprocess would
    # start Node.js and load the CDK for a synth that stops before it. Two validate tests run the command line as a
    # process.
    blocker = tmp_path / "build"
    blocker.write_text("a file where the output folder should go")
    assert main(["synth", str(EXAMPLES / "startup.yaml"), "--out", str(blocker)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"--out: cannot be written (File exists) ('{blocker}'); give a folder you can write to" in err


def test_diff_names_the_spec_that_is_wrong(capsys, tmp_path):
    assert main(["diff", str(EXAMPLES / "startup.yaml"), str(tmp_path / "nope.yaml"), "--governance-only"]) == 1
    assert capsys.readouterr().err.startswith(f"{tmp_path / 'nope.yaml'}: 1 problem in the spec:")


# --- rule ids, acknowledgements and --strict ----------------------------------------------

STRICT_NOTE = "--strict: warnings are errors; to accept one, acknowledge it in the spec by its id with a reason"
CHART_WARNING = "HPG-D001 cluster.dependenciesChart: is not set"


def docs_acknowledgements() -> str:
    """The acknowledgements example of docs/rules.md, as written there."""
    import re

    from tests.conftest import ROOT

    (block,) = re.findall(r"```yaml\n(acknowledgements:.*?)```", (ROOT / "docs" / "rules.md").read_text(), flags=re.S)
    return block


def startup_with(tmp_path, extra: str):
    path = tmp_path / "startup.yaml"
    path.write_text((EXAMPLES / "startup.yaml").read_text() + "\n" + extra)
    return path


def test_docs_example_acknowledgements_make_the_startup_example_pass_strict(tmp_path, capsys):
    path = startup_with(tmp_path, docs_acknowledgements())
    assert main(["validate", str(path), "--strict"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{path}: valid (3 teams, kueue mode), 1 warning acknowledged\n"
    assert "warning:" not in err
    # the startup example's teams all have contracts: the HPG-C001 acknowledgement accepts nothing
    assert err == "note: acknowledgements[0] accepts no finding; remove it if what it accepted is fixed\n"


def test_validate_prints_a_warning_with_its_rule_id():
    run = subprocess.run([sys.executable, "-m", "hyperpod_gov.cli", "validate", str(EXAMPLES / "startup.yaml")],
                         capture_output=True, text=True)
    assert run.returncode == 0
    assert f"warning: {CHART_WARNING}" in run.stderr
    assert "valid (3 teams, kueue mode)\n" in run.stdout  # nothing acknowledged, so no count


@pytest.mark.parametrize("command", [
    ["validate", "SPEC"], ["explain", "SPEC"], ["synth", "SPEC", "--out", "OUT"], ["diff", "SPEC", "SPEC",
                                                                                     "--governance-only"],
], ids=["validate", "explain", "synth", "diff"])
def test_strict_fails_on_an_unacknowledged_warning_wherever_it_is_offered(command, tmp_path, capsys):
    argv = [str(EXAMPLES / "startup.yaml") if a == "SPEC" else str(tmp_path / "out") if a == "OUT" else a
            for a in command]
    code = main([*argv, "--strict"])  # in this process, as above
    out, err = capsys.readouterr()
    assert code == 1, out + err
    assert "Traceback" not in err
    assert f"1 problem in the spec:\n  - {CHART_WARNING}" in err
    assert STRICT_NOTE in err
    assert not (tmp_path / "out").exists()  # synth stops before it writes anything


def test_synth_strict_passes_when_the_spec_acknowledges_every_warning_and_prints_none(tmp_path, capsys):
    """Without leaving out the CDK warning that HPG-D001 already reported, synth --strict would fail on it."""
    path = startup_with(tmp_path, "acknowledgements:\n  - id: HPG-D001\n    reason: the platform team installs "
                                  "the dependencies chart with its own pipeline\n")
    assert main(["synth", str(path), "--strict", "--out", str(tmp_path / "out")]) == 0
    out, err = capsys.readouterr()
    assert "warning" not in err and "dependenciesChartMissing" not in err, err
    assert "startup-capacity: " in out
    # each stack's line: its template's resources, counted while the template check finished
    printed = {line.split(" -> ")[1]: int(line.split(": ")[1].split()[0]) for line in out.splitlines()
               if " resources -> " in line}
    templates = sorted((tmp_path / "out" / "cdk.out").glob("*.template.json"))
    assert len(printed) == len(templates) > 1
    assert printed == {str(t): len(json.loads(t.read_text())["Resources"]) for t in templates}


def test_synth_leaves_out_only_the_cdk_warnings_a_spec_rule_reported():
    from hyperpod_gov.cli import unreported_synth_warnings

    chart = "/s-capacity/HyperPod: cluster.dependenciesChart is not set ... [ack: hyperpod-gov:dependenciesChartMissing]"
    other = "/s-capacity/Vpc: something else [ack: hyperpod-gov:other]"
    assert unreported_synth_warnings([chart, other], {"hyperpod-gov:dependenciesChartMissing"}) == [other]
    assert unreported_synth_warnings([chart, other], set()) == [chart, other]


def test_synth_strict_fails_on_a_cdk_warning_no_spec_rule_reported(capsys):
    from hyperpod_gov.cli import report_synth_warnings

    chart = "/s-capacity/HyperPod: cluster.dependenciesChart is not set [ack: hyperpod-gov:dependenciesChartMissing]"
    other = "/s-capacity/Vpc: something else [ack: hyperpod-gov:other]"
    assert report_synth_warnings([chart, other], strict=True) == 1
    assert capsys.readouterr().err == (f"warning: {other}\n--strict: synth added 1 warning (above), errors with "
                                       "--strict; the cloud assembly is written but must not be deployed\n")
    assert report_synth_warnings([chart, other], strict=False) == 0
    assert capsys.readouterr().err == f"warning: {other}\n"
    assert report_synth_warnings([chart], strict=True) == 0


def test_a_rule_that_raises_fails_the_cli_with_its_id_and_no_traceback(monkeypatch, capsys):
    from hyperpod_gov.spec import RuleBook, rule, rules

    @rule("HPG-Q999", "warning", "a rule with a defect")
    def broken(spec, today):
        return [spec.teams[99]]

    monkeypatch.setattr(rules, "RULES", RuleBook("with a broken rule", rules.RULES.rules + (broken,)))
    assert main(["validate", str(EXAMPLES / "enterprise.yaml")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "1 problem in the spec:\n  - HPG-Q999 (rule HPG-Q999): rule HPG-Q999 (broken) threw IndexError: " \
        "tuple index out of range; this is a defect in hyperpod-gov" in err


def test_a_plan_invariant_warning_can_be_acknowledged_like_a_rule(tmp_path, capsys):
    import yaml

    from hyperpod_gov.spec import read_yaml

    data = read_yaml(EXAMPLES / "startup.yaml")
    data["sharedPool"] = {"name": "shared"}  # the startup teams take all capacity: HPG-P005 warns
    path = tmp_path / "pool.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["validate", str(path), "--strict"]) == 1
    assert "HPG-P005 sharedPool: would hold nothing" in capsys.readouterr().err
    data["acknowledgements"] = [{"id": "HPG-P005", "reason": "the pool is planned for next quarter's capacity"},
                                {"id": "HPG-D001", "reason": "the dependencies chart is installed by the node team"}]
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    code = main(["validate", str(path), "--strict"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "2 warnings acknowledged" in out.out


def test_the_command_exits_with_mains_code_and_its_objects_frozen(monkeypatch):
    """``hyperpod-gov`` is ``run``: main's exit code, the process's objects frozen first so that the exit does not
    walk them (``gc.freeze`` recorded here, not done: this is the test's own process)."""
    from importlib.metadata import entry_points

    import hyperpod_gov.cli as cli
    import hyperpod_gov.process as process

    frozen: list[bool] = []
    monkeypatch.setattr(cli, "main", lambda: 3)
    monkeypatch.setattr(process.gc, "freeze", lambda: frozen.append(True))
    with pytest.raises(SystemExit) as exited:
        cli.run()
    assert exited.value.code == 3 and frozen == [True]
    assert [e.value for e in entry_points(group="console_scripts", name="hyperpod-gov")] == ["hyperpod_gov.cli:run"]


# --- every problem at once: structural errors with the rules' errors over the rest -----------------------------


def _written(tmp_path, data):
    import yaml

    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def test_a_rule_error_after_a_broken_team_keeps_the_files_index(tmp_path, capsys):
    from hyperpod_gov.spec import read_yaml

    data = read_yaml(EXAMPLES / "startup.yaml")
    data["teams"][0]["fairShareWeight"] = "lots"  # teams[0] is left out for the rules
    data["teams"][2]["workloadIdentities"].append({"serviceAccount": "chatbot-server"})
    assert main(["validate", _written(tmp_path, data)]) == 1
    err = capsys.readouterr().err
    assert "2 problems in the spec:" in err
    assert "  - teams[0].fairShareWeight: is not a whole number ('lots')" in err
    assert "  - HPG-N001 teams[2].workloadIdentities[1].serviceAccount: appears twice in the team" in err


def test_no_rule_blames_what_is_only_missing_because_it_is_broken(tmp_path, capsys):
    from hyperpod_gov.spec import read_yaml

    data = read_yaml(EXAMPLES / "startup.yaml")
    data["teams"][2]["fairShareWeight"] = -1  # chatbot is left out for the rules...
    data["cluster"]["instanceGroups"][0]["dedicatedTo"] = "chatbot"  # ...so HPG-Q008 would say it is no team
    assert main(["validate", _written(tmp_path, data)]) == 1
    err = capsys.readouterr().err
    assert "teams[2].fairShareWeight: is out of range" in err
    assert "HPG-Q008" not in err


def test_a_broken_required_key_outside_a_list_is_reported_alone(tmp_path, capsys):
    from hyperpod_gov.spec import read_yaml

    data = read_yaml(EXAMPLES / "startup.yaml")
    data["cluster"]["name"] = 12  # required: nothing to leave out, the rules cannot run
    data["teams"][1]["quota"][0]["count"] = 50  # HPG-Q002 once the spec is whole
    assert main(["validate", _written(tmp_path, data)]) == 1
    err = capsys.readouterr().err
    assert "1 problem in the spec:\n  - cluster.name: is a number where text is expected" in err


def test_a_broken_optional_key_takes_its_default_for_the_rules(tmp_path, capsys):
    from hyperpod_gov.spec import read_yaml

    data = read_yaml(EXAMPLES / "startup.yaml")
    data["cluster"]["nodeRecovery"] = "sometimes"  # optional: left out, its default applies
    data["teams"][1]["quota"][0]["count"] = 50
    assert main(["validate", _written(tmp_path, data)]) == 1
    err = capsys.readouterr().err
    assert "2 problems in the spec:" in err and "cluster.nodeRecovery: is not one of the allowed values" in err
    assert "HPG-Q002 teams[*].quota[ml.g5.2xlarge]: quotas on ml.g5.2xlarge add up to 60 instances" in err
    assert "counted without" not in err  # no list entry was left out
