"""`hyperpod-gov synth` from the command line runs itself again under `python -O` (jsii's type checks off), and
starts jsii while it plans the spec."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

from hyperpod_gov import cli

ROOT = Path(__file__).resolve().parents[1]


class _Exec(Exception):
    pass


@pytest.fixture
def execv(monkeypatch):
    calls = []

    def fake(path, args):
        calls.append((path, args))
        raise _Exec

    monkeypatch.setattr(cli.os, "execv", fake)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return calls


def test_console_script_synth_runs_again_with_o(execv, monkeypatch, tmp_path):
    script = tmp_path / "hyperpod-gov"
    script.write_text("")
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    monkeypatch.setattr(sys, "argv", [str(script), "synth", "examples/startup.yaml", "--out", "x"])
    with pytest.raises(_Exec):
        cli.main()
    assert execv == [(sys.executable, [sys.executable, "-O", str(script), "synth", "examples/startup.yaml",
                                       "--out", "x"])]


def test_module_synth_runs_again_as_the_same_module(execv, monkeypatch):
    main = types.ModuleType("__main__")
    main.__spec__ = types.SimpleNamespace(name="hyperpod_gov.cli")
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.setattr(sys, "argv", ["/somewhere/cli.py", "synth", "s.yaml"])
    with pytest.raises(_Exec):
        cli.main()
    assert execv[0][1] == [sys.executable, "-O", "-m", "hyperpod_gov.cli", "synth", "s.yaml"]


def test_other_commands_and_in_process_calls_are_not_run_again(execv, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["hyperpod-gov", "validate", "examples/startup.yaml"])
    assert cli.main() == 0  # validate: no jsii, nothing to gain
    assert cli.main(["validate", "examples/startup.yaml"]) == 0
    assert execv == []


def test_without_cached_o_bytecode_and_without_writing_bytecode_it_stays(execv, monkeypatch, tmp_path):
    script = tmp_path / "hyperpod-gov"
    script.write_text("")
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    monkeypatch.setattr(sys, "argv", [str(script), "synth", "s.yaml"])
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(cli, "_optimized_bytecode_cached", lambda: False)
    cli._synth_without_type_checks()  # would compile aws-cdk-lib on every run: not worth it
    assert execv == []
    monkeypatch.setattr(cli, "_optimized_bytecode_cached", lambda: True)
    with pytest.raises(_Exec):
        cli._synth_without_type_checks()


@pytest.mark.parametrize("example", ["enterprise", "existing", "startup-slurm"])
def test_reading_and_planning_a_spec_loads_no_jsii_package(example):
    """`synth` imports the CDK's packages on a second thread while the main one plans the spec (cli.cmd_synth):
    jsii's channel to Node.js serves one thread at a time, so planning must not reach jsii."""
    code = ("import sys; from hyperpod_gov.cli import plan_of; "
            f"plan_of('examples/{example}.yaml', warn=False); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in {'jsii', 'aws_cdk', 'constructs', 'cdk8s', "
            "'cdk_nag'}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
