"""accounting.sh against a stand-in sacctmgr holding a given state: the commands it runs are exactly those
``changes(old, new)`` lists, so ``diff`` tells the truth about the script, and an unchanged state runs nothing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from hyperpod_gov.slurm.model import SlurmState, desired
from hyperpod_gov.slurm.render import changes, files

from .spec_fixtures import plan_of, slurm_base

FAKE = Path(__file__).with_name("fake_sacctmgr.py")


def _run(tmp_path: Path, new_spec: dict, old: SlurmState, *extra_env: tuple[str, str]) -> tuple[list[str], str]:
    """Run accounting.sh of ``new_spec`` against ``old``; the commands it printed (sacctmgr spelled as such)."""
    (tmp_path / "accounting.sh").write_text(files(plan_of(new_spec))["accounting.sh"])
    (tmp_path / "state.json").write_text(json.dumps(asdict(old)))
    wrapper = tmp_path / "sacctmgr"
    # -I -S: the stand-in needs only the standard library, and each of its calls is a fresh interpreter
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -I -S {FAKE} \"$@\"\n")
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "FAKE_SACCTMGR_STATE": str(tmp_path / "state.json"), "HPG_SACCTMGR": str(wrapper),
           "HPG_SLURM_PREFIX": str(tmp_path / "none"), "HPG_SLURM_CONF": str(tmp_path / "none.conf"),
           **dict(extra_env)}
    p = subprocess.run(["bash", str(tmp_path / "accounting.sh"), "ml"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    commands = [line[2:].replace(str(wrapper), "sacctmgr") for line in p.stdout.splitlines() if line.startswith("+ ")]
    return commands, p.stdout


def _changed(data: dict) -> dict:
    data["teams"][0]["fairShareWeight"] = 30
    data["teams"][0]["sharing"] = {"strategy": "Lend"}
    data["teams"][0]["active"] = False
    data["teams"][1]["quota"][1] = {"instanceType": "ml.c5.4xlarge", "count": 1}
    data["teams"][1]["slurm"]["users"] = ["carol", "alice"]
    data["scheduler"]["priorityClasses"][1]["weight"] = 60
    return data


def test_an_unchanged_state_runs_no_command(tmp_path):
    commands, out = _run(tmp_path, slurm_base(), desired(plan_of(slurm_base())))
    assert commands == []
    assert "hyperpod-gov: accounting of ml: no changes" in out


def test_an_empty_cluster_gets_exactly_the_commands_changes_lists(tmp_path):
    new = desired(plan_of(slurm_base()))
    empty = SlurmState(accounts=(), qos=(), users=(), cluster="ml")
    commands, _ = _run(tmp_path, slurm_base(), empty)
    assert commands == changes(None, new)


def test_a_spec_change_runs_exactly_the_commands_changes_lists(tmp_path):
    old = desired(plan_of(slurm_base()))
    new = desired(plan_of(_changed(slurm_base())))
    commands, out = _run(tmp_path, _changed(slurm_base()), old)
    listed = changes(old, new)
    assert commands == [c for c in listed if not c.startswith("#")]
    assert "not in the spec, kept (HPG_SLURM_PRUNE=1 deletes it" in out and "QOS team-a_p5_borrow" in out


def test_pruning_runs_the_deletions_changes_lists_as_comments(tmp_path):
    old = desired(plan_of(slurm_base()))
    data = slurm_base()
    data["teams"].pop(1)
    new = desired(plan_of(data))
    commands, _ = _run(tmp_path, data, old, ("HPG_SLURM_PRUNE", "1"))
    deleted = [c.split(": ", 1)[1] for c in changes(old, new) if c.startswith("#")]
    assert [c for c in commands if " delete " in c] == deleted
    assert deleted and all(" delete " in c for c in deleted)


@pytest.mark.parametrize("dry", ["1"])
def test_a_dry_run_prints_the_commands_and_counts_them(tmp_path, dry):
    empty = SlurmState(accounts=(), qos=(), users=(), cluster="ml")
    commands, out = _run(tmp_path, slurm_base(), empty, ("HPG_SLURM_DRY_RUN", dry))
    assert f"hyperpod-gov: accounting of ml: {len(commands)} changes" in out
