"""hyperpod-gov runs jsii on a Node.js jsii supports (no warning banner), or exits 2 saying how to get one."""

from __future__ import annotations

import datetime as dt
import os
import stat

import pytest

from hyperpod_gov import node as nodes


def _fake_node(folder, version: str):
    """An executable that answers ``--version`` as a Node.js of ``version`` would."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "node"
    path.write_text(f"#!/bin/sh\necho v{version}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def test_the_supported_releases_are_read_from_the_installed_jsii():
    """jsii 1.142's table: 22 and 24 supported (18 and 20 past their end of life on the suite's date)."""
    table = nodes._jsii_release_table()
    assert table is not None, "the jsii runtime's NodeRelease table could not be read: update node._RELEASE"
    assert table[22] == dt.date(2027, 4, 30) and table[24] == dt.date(2028, 4, 30)
    assert 23 not in table and 21 not in table  # untested releases: a banner
    assert set(nodes.supported_releases(dt.date(2026, 12, 7))) == {22, 24}
    assert 20 not in nodes.supported_releases(dt.date(2026, 12, 7))  # end of life 2026-04-30: a banner


def test_the_first_supported_node_is_taken(tmp_path):
    old = _fake_node(tmp_path / "a", "20.20.2")
    new = _fake_node(tmp_path / "b", "22.23.3")
    found = nodes.find_node([old, new], today=dt.date(2026, 12, 7))
    assert found.path == new and found.major == 22


def test_no_supported_node_says_which_were_tried_and_how_to_get_one(tmp_path):
    old = _fake_node(tmp_path / "a", "20.20.2")
    with pytest.raises(nodes.NodeNotFound) as raised:
        nodes.find_node([old, str(tmp_path / "missing")], today=dt.date(2026, 12, 7))
    message = str(raised.value)
    assert f"{old} (v20.20.2)" in message and "does not run" in message
    assert "npm install node@22" in message


def test_candidates_put_jsii_node_first_then_node_modules_then_the_path(tmp_path, monkeypatch):
    explicit = _fake_node(tmp_path / "explicit", "24.1.0")
    local = _fake_node(tmp_path / "work" / "node_modules" / ".bin", "22.1.0")
    on_path = _fake_node(tmp_path / "path", "20.1.0")
    monkeypatch.setenv("JSII_NODE", explicit)
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    found = nodes.candidates(cwd=tmp_path / "work")
    assert found[0] == explicit and found[1] == local and found[-1] == on_path


def test_synth_exits_2_without_a_supported_node(tmp_path, monkeypatch, capsys):
    from hyperpod_gov.cli import main

    _fake_node(tmp_path / "path", "20.20.2")
    monkeypatch.delenv("JSII_NODE", raising=False)
    monkeypatch.setenv("PATH", f"{tmp_path / 'path'}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.chdir(tmp_path)  # no node_modules here
    monkeypatch.setattr(nodes, "candidates", lambda cwd=None: [str(tmp_path / "path" / "node")])
    assert main(["synth", "spec.yaml"]) == 2
    err = capsys.readouterr().err
    assert "no Node.js that jsii supports" in err and "Traceback" not in err


def test_only_the_commands_that_synthesize_look_for_node():
    from hyperpod_gov.cli import starts_jsii

    assert starts_jsii(["synth", "s.yaml"]) and starts_jsii(["diff", "a.yaml", "b.yaml"])
    assert not starts_jsii(["diff", "a.yaml", "b.yaml", "--governance-only"])
    assert not starts_jsii(["validate", "s.yaml"]) and not starts_jsii(["synth", "--help"])
