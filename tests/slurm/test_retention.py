"""cluster.slurm.accountingRetentionDays: the Purge*After settings in slurmdbd.conf, written by the rendered apply.sh
between its markers (slurmdbd restarted only when they change); nothing of it without the key."""

from __future__ import annotations

import stat
import subprocess

import pytest

from hyperpod_gov.slurm._common import MARK_BEGIN, MARK_END
from hyperpod_gov.slurm.conf import PURGE_SETTINGS, RETENTION_CONF
from hyperpod_gov.slurm.render import files
from hyperpod_gov.spec import SpecError

from .spec_fixtures import plan_of, slurm_base

TEMPLATE = "AuthType=auth/munge\nStoragePass=secret\nPurgeJobAfter=12month\nStorageLoc=slurm_acct_db\n"


def _files(days):
    data = slurm_base()
    if days is not None:
        data["cluster"].setdefault("slurm", {})["accountingRetentionDays"] = days
    return files(plan_of(data))


def _retention_part(apply: str) -> str:
    start = apply.index("# slurmdbd's retention of the task history")
    return apply[start:apply.index("# slurmdbd answers before accounting")]


def _run(tmp_path, rendered):
    """The retention part of the rendered apply.sh, on a slurmdbd.conf in tmp_path; how often slurmdbd restarted."""
    here = tmp_path / "slurm"
    (here / "slurmdbd.conf.d").mkdir(parents=True, exist_ok=True)
    (here / RETENTION_CONF).write_text(rendered[RETENTION_CONF])
    script = tmp_path / "retention.sh"
    script.write_text("set -euo pipefail\n" + f"HERE={here}\nSLURM_CONF_FILE={tmp_path}/slurm.conf\n"
                      f"BEGIN='{MARK_BEGIN}'\nEND='{MARK_END}'\nlog() {{ printf 'hyperpod-gov: %s\\n' \"$*\"; }}\n"
                      + _retention_part(rendered["apply.sh"]))
    restarts = tmp_path / "restarts"
    restart = tmp_path / "restart-slurmdbd"  # stands in for systemctl (apply.sh splits the command into words)
    restart.write_text(f"#!/bin/sh\necho restarted >> {restarts}\n")
    restart.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "HPG_SLURMDBD_RESTART": str(restart)}
    run = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return len(restarts.read_text().splitlines()) if restarts.exists() else 0


def test_the_purge_settings_are_written_between_the_markers_and_slurmdbd_restarted_once(tmp_path):
    rendered = _files(400)
    conf = tmp_path / "slurmdbd.conf"
    conf.write_text(TEMPLATE)
    conf.chmod(0o600)
    assert _run(tmp_path, rendered) == 1
    text = conf.read_text()
    assert "StoragePass=secret" in text and "PurgeJobAfter=12month" not in text  # the template's purge gives way
    block = text[text.index(MARK_BEGIN):text.index(MARK_END)]
    assert [line for line in block.splitlines()[1:]] == [f"{k}=400days" for k in PURGE_SETTINGS]
    assert stat.S_IMODE(conf.stat().st_mode) == 0o600  # the password stays readable by its owner only
    assert _run(tmp_path, rendered) == 1  # a second run changes nothing: no restart
    assert conf.read_text() == text


def test_a_changed_retention_replaces_the_block(tmp_path):
    conf = tmp_path / "slurmdbd.conf"
    conf.write_text(TEMPLATE)
    _run(tmp_path, _files(400))
    _run(tmp_path, _files(30))
    text = conf.read_text()
    assert "PurgeJobAfter=30days" in text and "400days" not in text and text.count(MARK_BEGIN) == 1


def test_a_missing_slurmdbd_conf_stops_apply(tmp_path):
    here = tmp_path / "slurm"
    with pytest.raises(AssertionError, match="slurmdbd.conf is missing"):
        _run(tmp_path, _files(400))
    assert not here.joinpath("..", "slurmdbd.conf").exists()


def test_without_the_key_apply_sh_does_not_touch_slurmdbd():
    rendered = _files(None)
    assert RETENTION_CONF not in rendered and "slurmdbd.conf" not in rendered["apply.sh"]
    assert "Purge" not in rendered["apply.sh"]


@pytest.mark.parametrize("days", [0, 36501, "a year"])
def test_the_retention_is_a_number_of_days(days):
    data = slurm_base()
    data["cluster"].setdefault("slurm", {})["accountingRetentionDays"] = days
    with pytest.raises(SpecError, match="cluster.slurm.accountingRetentionDays"):
        plan_of(data)
