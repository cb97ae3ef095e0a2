"""Every command's exit codes as docs/cli.md states them: 0 fine, 1 findings (an invalid spec among them),
2 could not check, or a usage error. In this process through ``main``; no AWS call is made (the commands that
read AWS are held on the paths that stop before they would). Bad input never prints a traceback."""

from __future__ import annotations

import re
from typing import Sequence

import pytest
import yaml

from hyperpod_gov.cli import main
from hyperpod_gov.spec import read_yaml
from tests.conftest import EXAMPLES, ROOT

STARTUP = str(EXAMPLES / "startup.yaml")
SLURM = str(EXAMPLES / "startup-slurm.yaml")
TRACE = str(EXAMPLES / "startup-trace.csv")


def code_of(argv: Sequence[str], capsys) -> tuple[int, str, str]:
    """``main``'s exit code, or argparse's (it exits itself on a usage error), with what was printed."""
    try:
        code = main(list(argv))
    except SystemExit as exited:
        code = exited.code if isinstance(exited.code, int) else 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, out + err
    return code, out, err


@pytest.fixture
def invalid(tmp_path):
    """A spec with one structural error and one rule error."""
    data = read_yaml(STARTUP)
    data["teams"][0]["fairShareWeight"] = "lots"
    data["teams"][1]["quota"][0]["count"] = 50
    path = tmp_path / "invalid.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


@pytest.fixture
def missing(tmp_path):
    return str(tmp_path / "nope.yaml")


# (command line, expected code); SPEC: the startup example, INVALID: the spec above, MISSING: a path to nothing.
CASES = {
    "validate": [(["validate", "SPEC"], 0), (["validate", "INVALID"], 1), (["validate", "MISSING"], 1),
                 (["validate", "SPEC", "--strict"], 1), (["validate"], 2),
                 (["validate", "SPEC", "--format", "xml"], 2)],
    "explain": [(["explain", "SPEC"], 0), (["explain", "INVALID"], 1), (["explain", "SPEC", "--bogus"], 2)],
    "onboard": [(["onboard", "SPEC", "chatbot"], 0), (["onboard", "SPEC", "nobody"], 1),
                (["onboard", "INVALID", "chatbot"], 1), (["onboard", "SPEC"], 2)],
    # synth's success (0) is held by tests/test_cli.py (it starts Node.js and the CDK); a missing spec file is an
    # invalid spec (1), like every command that reads a spec here
    "synth": [(["synth", "MISSING", "--out", "OUT"], 1), (["synth", "INVALID", "--out", "OUT"], 1), (["synth"], 2)],
    "diff": [(["diff", "SPEC", "SPEC", "--governance-only"], 0), (["diff", "SPEC", "SPEC", "--governance-only",
                                                                   "--fail"], 0),
             (["diff", "SPEC", "CHANGED", "--governance-only", "--fail"], 1),
             (["diff", "SPEC", "INVALID", "--governance-only"], 1), (["diff", "SPEC"], 2),
             (["diff", "SPEC", "SPEC", "--against", "prod"], 2), (["diff"], 2)],
    "schema": [(["schema"], 0), (["schema", "extra"], 2)],
    "review": [(["review", "SPEC", "--today", "2026-11-30"], 0), (["review", "SPEC", "--today", "2031-01-01"], 1),
               (["review", "INVALID"], 1), (["review", "SPEC", "--today", "soon"], 2)],
    "simulate": [(["simulate", "SPEC", "--trace", "TRACE"], 0), (["simulate", "INVALID", "--trace", "TRACE"], 1),
                 (["simulate", "SPEC", "--trace", "MISSING"], 1), (["simulate", "SPEC", "--cycles", "x"], 2)],
    # drift, import and preflight read AWS: their usage errors, and the could-not-check paths that stop before
    # any call
    "drift": [(["drift", "INVALID", "--no-kubernetes"], 2), (["drift", "SLURM", "--slurm-dump", "MISSING"], 2),
              (["drift"], 2)],
    "import": [(["import", "--cluster-name", "c", "--slurm-qos", "MISSING"], 2),
               (["import", "--cluster-name", "c", "--slurm-dump", "MISSING"], 2), (["import"], 2)],
    "preflight": [(["preflight", "INVALID"], 2), (["preflight"], 2), (["preflight", "SPEC", "--format", "yaml"], 2)],
    "report": [(["report", "INVALID"], 1), (["report", "SPEC", "--days", "0"], 1), (["report"], 2)],
    "review-pack": [(["review-pack", "SPEC", "--out", "OUT"], 0), (["review-pack", "INVALID", "--out", "OUT"], 1),
                    (["review-pack", "SPEC"], 2)],
    "evidence": [(["evidence", "SPEC", "--base", "SPEC", "--out", "OUT"], 0),
                 (["evidence", "INVALID", "--base", "SPEC", "--out", "OUT"], 1), (["evidence", "SPEC"], 2)],
}


@pytest.fixture
def changed(tmp_path):
    data = read_yaml(STARTUP)
    data["teams"][0]["fairShareWeight"] = 50
    path = tmp_path / "changed.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


@pytest.mark.parametrize(("argv", "expected"), [case for cases in CASES.values() for case in cases],
                         ids=[f"{c}-{i}" for c, cases in CASES.items() for i in range(len(cases))])
def test_each_command_exits_with_the_documented_code(argv, expected, invalid, missing, changed, tmp_path, capsys,
                                                     monkeypatch):
    # no AWS call can be made: no credentials, and an endpoint nobody listens on
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    words = {"SPEC": STARTUP, "SLURM": SLURM, "TRACE": TRACE, "INVALID": invalid, "MISSING": missing,
             "CHANGED": changed, "OUT": str(tmp_path / "out")}
    code, out, err = code_of([words.get(a, a) for a in argv], capsys)
    assert code == expected, out + err
    if code == 2 and argv[1:] and "INVALID" not in argv and "MISSING" not in argv:
        assert "usage" in err.lower() or "error" in err.lower(), err  # a usage error says what was wrong


def test_every_command_has_exit_code_cases_and_a_row_in_the_docs():
    from hyperpod_gov.cli import build_parser

    commands = set(build_parser()._subparsers._group_actions[0].choices)  # noqa: SLF001 - argparse keeps them here
    assert set(CASES) == commands
    table = (ROOT / "docs" / "cli.md").read_text()
    rows = set(re.findall(r"^\| `([a-z-]+)` \|", table, flags=re.M))
    assert rows == commands


def test_the_structural_and_the_rule_error_are_reported_in_one_run(invalid, capsys):
    code, _, err = code_of(["validate", invalid], capsys)
    assert code == 1
    assert "teams[0].fairShareWeight: is not a whole number ('lots')" in err
    assert "HPG-Q002 teams[*].quota[ml.g5.2xlarge]: quotas on ml.g5.2xlarge add up to 54 instances" in err
    assert "(counted without teams[0], left out for its error above)" in err


def test_version_prints_the_packages_version(capsys):
    from hyperpod_gov._version import __version__

    code, out, _ = code_of(["--version"], capsys)
    assert code == 0
    assert out == f"hyperpod-gov {__version__}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
