"""The `hyperpod-gov` command as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys

from hyperpod_gov.cli import main
from tests.conftest import EXAMPLES


def test_validate_accepts_both_examples(capsys):
    assert main(["validate", str(EXAMPLES / "enterprise.yaml")]) == 0
    assert main(["validate", str(EXAMPLES / "startup.yaml")]) == 0
    assert "valid (5 teams, task-governance mode)" in capsys.readouterr().out


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
    assert main(["explain", str(EXAMPLES / "enterprise.yaml")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("TEAM") and "OWNS" in line)
    assert header.split() == ["TEAM", "OWNS", "CAN", "LEND", "MAY", "BORROW", "WEIGHT", "PREEMPTS", "OWN"]
    research = next(line for line in lines if line.startswith("applied-research "))
    assert "5 GPUs (ml.p5.48xlarge)" in research
    assert "up to 7 GPUs (ml.p5.48xlarge) (150%)" in research
    fm = next(line for line in lines if line.startswith("foundation-models "))
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


def test_synth_into_a_path_it_cannot_write_says_so_without_a_traceback(tmp_path):
    blocker = tmp_path / "build"
    blocker.write_text("a file where the output folder should go")
    run = subprocess.run([sys.executable, "-m", "hyperpod_gov.cli", "synth", str(EXAMPLES / "startup.yaml"),
                          "--out", str(blocker)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert f"--out: cannot be written (File exists) ('{blocker}'); give a folder you can write to" in run.stderr


def test_diff_names_the_spec_that_is_wrong(capsys, tmp_path):
    assert main(["diff", str(EXAMPLES / "startup.yaml"), str(tmp_path / "nope.yaml"), "--governance-only"]) == 1
    assert capsys.readouterr().err.startswith(f"{tmp_path / 'nope.yaml'}: 1 problem in the spec:")
