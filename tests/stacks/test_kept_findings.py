"""The template check keeps each template's findings in a file (assets/template_checks/stored.js): a later process
answers a template it has seen, with the same bytes, account and region, from that file without checking it; a
file of another engine or check, or one damaged, is not used but checked again and written over; the folder keeps
at most ``MAX_FILES``, the least recently used removed first."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from hyperpod_gov.template_checks import IMAGES, RESULTS, SCRIPT, TemplateChecks, prepare
from hyperpod_gov.template_engine import engine_files

STORED = SCRIPT.with_name("stored.js")
# A template with findings of two rules (a property against its schema, a reference to nothing): its diagnostics
# are not empty, so a kept answer that was used cannot pass for a fresh check that found nothing.
FINDINGS = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {
    "VisibilityTimeout": "soon", "QueueName": {"Ref": "Gone"}}}}}


def _process(results: Path) -> subprocess.Popen:
    """A check process that restores the kept image (no build) and keeps its findings in ``results``. It runs V8's
    baseline WebAssembly compiler alone, as a small app's check does (``TemplateChecks.start(tier_up=False)``): the
    findings kept do not depend on the compiler, and the restore takes less than half the CPU."""
    assert prepare()
    engine, rules = engine_files()
    return subprocess.Popen([shutil.which("node"), "--liftoff-only", str(SCRIPT), str(engine), str(rules),
                             str(engine.parent / IMAGES), str(results)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ask(process: subprocess.Popen, *stacks: tuple[Path, str]) -> list[dict]:
    request = [{"templatePath": str(p), "accountId": "111111111111", "region": r} for p, r in stacks]
    process.stdin.write(json.dumps(request) + "\n")
    process.stdin.flush()
    return json.loads(process.stdout.readline())["results"]


def _end(process: subprocess.Popen) -> None:
    process.stdin.close()
    process.wait(timeout=60)
    process.stdout.close()
    process.stderr.close()


@pytest.fixture
def templates(tmp_path) -> dict[str, Path]:
    """Five templates with the same findings, each of its own bytes (unique to this run: a kept file of an earlier
    test run is never one of these)."""
    run = uuid.uuid4().hex
    out = {}
    for name in ("kept", "other-identity", "damaged", "no-list", "planted"):
        path = tmp_path / f"{name}.template.json"
        path.write_text(json.dumps({**FINDINGS, "Description": f"{name} {run}"}, indent=1))
        out[name] = path
    return out


def test_a_later_process_answers_from_the_kept_file_and_checks_what_it_cannot_trust(templates, tmp_path):
    results = tmp_path / "results"
    first = _process(results)
    files: dict[str, Path] = {}
    try:
        fresh = {}
        for name, path in templates.items():  # one at a time: the file each check writes is that template's
            before = set(results.glob("*.json")) if results.exists() else set()
            (answer,) = _ask(first, (path, "us-east-1"))
            assert "reused" not in answer and answer["diagnostics"]
            (files[name],) = set(results.glob("*.json")) - before
            fresh[name] = answer["diagnostics"]
    finally:
        _end(first)
    assert re.fullmatch(r"[0-9a-f]{64}\.json", files["kept"].name)
    assert fresh["kept"] == fresh["planted"]  # the same findings: only the description differs

    kept = json.loads(files["kept"].read_text())
    assert kept["diagnostics"] == fresh["kept"] and kept["identity"]
    files["other-identity"].write_text(json.dumps({**kept, "identity": "another engine"}))
    files["damaged"].write_text(files["damaged"].read_text()[:40])
    files["no-list"].write_text(json.dumps({**kept, "diagnostics": None}))
    planted = [{**fresh["planted"][0], "message": "what the kept file says"}]
    files["planted"].write_text(json.dumps({**kept, "diagnostics": planted}))

    second = _process(results)
    try:
        answers = _ask(second, *((p, "us-east-1") for p in templates.values()), (templates["kept"], "eu-west-1"))
    finally:
        _end(second)
    by_name = {Path(a["templatePath"]).name.split(".")[0]: a for a in answers[:-1]}
    assert by_name["kept"] == {"templatePath": str(templates["kept"]), "diagnostics": fresh["kept"],
                               "reused": True}
    # the planted file is what the second process answered: nothing was checked for it
    assert by_name["planted"]["diagnostics"] == planted and by_name["planted"]["reused"] is True
    for name in ("other-identity", "damaged", "no-list"):  # checked again, and the file written over
        assert "reused" not in by_name[name] and by_name[name]["diagnostics"] == fresh[name], name
        assert json.loads(files[name].read_text()) == {**kept, "diagnostics": fresh[name]}, name
    assert "reused" not in answers[-1]  # another region: another template to the check
    assert len(list(results.glob("*.json"))) == len(templates) + 1
    assert not list(results.glob("*.tmp"))


def test_the_folder_keeps_the_most_recently_used_files_up_to_its_limit(templates, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    limit = int(re.search(r"const MAX_FILES = (\d+);", STORED.read_text()).group(1))
    old = [results / f"{i:064x}.json" for i in range(limit + 10)]
    for i, path in enumerate(old):  # used the longer ago the lower their number; the last 10 later than any
        path.write_text("{}")
        used = 1_000_000 + i if i < limit else 2_000_000_000 + i
        os.utime(path, (used, used))
    (results / "left-by-a-stopped-process.json.123.tmp").write_text("{")
    os.utime(results / "left-by-a-stopped-process.json.123.tmp", (1_000_000, 1_000_000))
    process = _process(results)
    try:
        _ask(process, (templates["kept"], "us-east-1"))  # one file written: the folder is pruned once
    finally:
        _end(process)
    left = set(results.iterdir())
    assert len(left) == limit
    assert set(old[:11]).isdisjoint(left)  # the 11 least recently used went
    assert set(old[11:]) <= left and not any(p.suffix == ".tmp" for p in left)


def test_the_synths_check_keeps_its_findings_beside_the_engine():
    """``TemplateChecks.start`` gives its process the folder beside the engine's files and image."""
    checks = TemplateChecks.start(tier_up=False)
    assert checks is not None
    try:
        engine, _ = engine_files()
        assert checks._command[-2:] == [str(engine.parent / IMAGES), str(engine.parent / RESULTS)]
    finally:
        checks.close()
