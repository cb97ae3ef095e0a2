"""The evidence record of a change: the startup example against a base where chatbot owns one GPU less."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from hyperpod_gov.cli import main
from hyperpod_gov.evidence import MANIFEST, verify_manifest
from hyperpod_gov.evidence.git import git_state
from hyperpod_gov.spec import read_yaml
from tests.conftest import EXAMPLES

STARTUP = EXAMPLES / "startup.yaml"
TRACE = EXAMPLES / "startup-trace.csv"
EXPECTED = [
    "MANIFEST.sha256", "acknowledgements.json", "alarms.json", "alarms.md", "base.yaml", "contracts/chatbot.md",
    "contracts/ml-engineering.md", "contracts/researchers.md", "contracts/reviews.md", "diff.json", "diff.txt",
    "drift.json", "evidence.json", "git.json", "review/index.html", "review/summary.md", "spec.yaml",
]


def _run(argv, capsys):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exited:
        code = exited.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    data = read_yaml(str(STARTUP))
    chatbot = next(t for t in data["teams"] if t["name"] == "chatbot")
    chatbot["quota"][0]["count"] = 3
    path = tmp_path_factory.mktemp("base") / "startup-before.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def record(base, tmp_path_factory):
    folder = tmp_path_factory.mktemp("evidence") / "record"
    drift = tmp_path_factory.mktemp("drift") / "drift.json"
    drift.write_text(json.dumps({"drift": False, "findings": []}))
    assert main(["evidence", str(STARTUP), "--base", str(base), "--trace", str(TRACE), "--drift", str(drift),
                 "--out", str(folder), "--today", "2026-12-01"]) == 0
    return folder


def _files(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_the_record_holds_spec_base_diff_review_page_contracts_alarms_acknowledgements_and_drift(record, base):
    files = _files(record)
    assert set(EXPECTED) <= set(files)
    assert any(f.startswith("review/") and f.endswith(".svg") for f in files)
    assert (record / "spec.yaml").read_bytes() == STARTUP.read_bytes()
    assert (record / "base.yaml").read_bytes() == base.read_bytes()


def test_the_diff_is_what_diff_prints_in_words_and_json(record, base, capsys):
    assert main(["diff", str(base), str(STARTUP), "--governance-only", "--trace", str(TRACE)]) == 0
    words = capsys.readouterr().out
    assert (record / "diff.txt").read_text() == words
    assert "team chatbot owns: 3 GPUs (ml.g5.2xlarge) -> 4 GPUs (ml.g5.2xlarge)" in words
    document = json.loads((record / "diff.json").read_text())
    assert document["changed"] is True and document["resources"] is None


def test_the_reviews_the_change_triggers_and_the_alarms_with_their_owners(record):
    assert "team chatbot: review (cluster capacity)" in (record / "contracts" / "reviews.md").read_text()
    alarms = json.loads((record / "alarms.json").read_text())
    assert {a["team"] for a in alarms} == {"chatbot", "ml-engineering", "researchers"}
    assert all(a["owner"] and a["topic"] for a in alarms)
    assert "| startup/chatbot/quota-not-honoured | oncall@example.com |" in (record / "alarms.md").read_text()


def test_the_index_names_the_commit_and_the_parts(record):
    index = json.loads((record / "evidence.json").read_text())
    assert index["spec"]["name"] == "startup" and index["trace"] == "startup-trace.csv"
    assert index["drift"] == "drift.json"
    assert index["git"]["repository"] is True and len(index["git"]["commit"]) == 40
    assert isinstance(index["git"]["clean"], bool)
    git = json.loads((record / "git.json").read_text())
    assert git["base"]["repository"] is False  # the base is in a temporary folder: said so
    assert "not in a git repository" in git["base"]["note"]


def test_the_manifest_lists_every_file_sorted_in_sha256sum_format(record):
    lines = (record / MANIFEST).read_text().splitlines()
    names = [line.split("  ", 1)[1] for line in lines]
    assert names == sorted(names) == [f for f in _files(record) if f != MANIFEST]
    check = subprocess.run(["sha256sum", "--check", "--quiet", MANIFEST], cwd=record, capture_output=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_verify_passes_on_the_record_as_written(record, capsys):
    assert _run(["evidence", "--verify", record], capsys)[0] == 0


def _copy(record, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(record, copy)
    return copy


def test_verify_fails_on_a_tampered_file_and_names_it(record, tmp_path, capsys):
    copy = _copy(record, tmp_path)
    with (copy / "contracts" / "chatbot.md").open("a") as f:
        f.write("approved by nobody\n")
    code, _, err = _run(["evidence", "--verify", copy], capsys)
    assert code == 1
    assert "changed: contracts/chatbot.md" in err


def test_verify_fails_on_an_extra_and_a_missing_file(record, tmp_path, capsys):
    copy = _copy(record, tmp_path)
    (copy / "review" / "extra.svg").write_text("<svg/>")
    (copy / "alarms.md").unlink()
    code, _, err = _run(["evidence", "--verify", copy], capsys)
    assert code == 1
    assert "extra: review/extra.svg" in err and "missing: alarms.md" in err
    assert verify_manifest(copy).extra == ("review/extra.svg",)


def test_without_a_trace_the_review_page_is_written_and_the_index_says_so(base, tmp_path, capsys):
    assert _run(["evidence", STARTUP, "--base", base, "--out", tmp_path / "r"], capsys)[0] == 0
    index = json.loads((tmp_path / "r" / "evidence.json").read_text())
    assert index["trace"] is None and "no trace given" in index["reviewPage"]
    assert "not given" in index["drift"] and not (tmp_path / "r" / "drift.json").exists()
    assert _run(["evidence", "--verify", tmp_path / "r"], capsys)[0] == 0


@pytest.mark.parametrize(("argv", "expected"), [
    (["evidence", "SPEC", "--base", "SPEC"], 2),  # no --out
    (["evidence", "SPEC", "--out", "OUT"], 2),  # no --base
    (["evidence", "--verify", "OUT", "SPEC"], 2),
    (["evidence", "SPEC", "--base", "MISSING", "--out", "OUT"], 1),
    (["evidence", "SPEC", "--base", "SPEC", "--drift", "MISSING", "--out", "OUT"], 1),
    (["evidence", "--verify", "MISSING"], 1),
])
def test_exit_codes(argv, expected, tmp_path, capsys):
    words = {"SPEC": STARTUP, "MISSING": tmp_path / "nope", "OUT": tmp_path / "out"}
    code, _, err = _run([words.get(a, a) for a in argv], capsys)
    assert code == expected, err


def test_a_folder_that_is_not_empty_is_refused(base, tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.txt").write_text("x")
    code, _, err = _run(["evidence", STARTUP, "--base", base, "--out", tmp_path / "out"], capsys)
    assert code == 1 and "not an empty folder" in err


def test_outside_a_repository_git_says_so(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("name: x\n")
    state = git_state(spec)
    assert state["repository"] is False and "not in a git repository" in state["note"]


def test_a_spec_with_environments_is_recorded_as_one_of_them(tmp_path, capsys):
    data = read_yaml(str(STARTUP))
    staging = {"capacity": {"id": "555555555555"}, "trusted": ["444444444444"]}
    data["environments"] = [{"name": "staging", "accounts": staging},
                            {"name": "prod"}]
    spec = tmp_path / "envs.yaml"
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    code, _, err = _run(["evidence", spec, "--base", spec, "--out", tmp_path / "none"], capsys)
    assert code == 1 and "--environment" in err
    assert _run(["evidence", spec, "--base", spec, "--environment", "staging", "--out", tmp_path / "r"], capsys)[0] == 0
    index = json.loads((tmp_path / "r" / "evidence.json").read_text())
    assert index["environment"] == "staging"
    assert "555555555555" in (tmp_path / "r" / "contracts" / "chatbot.md").read_text()
