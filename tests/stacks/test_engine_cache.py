"""aws-cdk-lib's engine folders in the cache (hyperpod_gov.template_engine): each version is unpacked once and
touched by every process that uses it, and unpacking a new version removes the folders of all but the
``KEEP_VERSIONS`` most recently used, with what stopped processes left behind."""

from __future__ import annotations

import io
import os
import tarfile
import time
from pathlib import Path

import pytest

from hyperpod_gov import template_engine
from hyperpod_gov.template_engine import (COMPLETE, ENGINE_PREFIX, KEEP_VERSIONS, REMOVING, RULES_PREFIX,
                                          STALE_SECONDS, UNPACKING, engine_files)


def _package(folder: Path, version: str) -> Path:
    """A stand-in for aws-cdk-lib's jsii package of ``version``: an engine file, a rule and one file of neither."""
    path = folder / f"aws-cdk-lib@{version}.jsii.tgz"
    with tarfile.open(path, "w:gz") as archive:
        for name, text in ((f"{ENGINE_PREFIX}index.js", f"// engine {version}\n"),
                           (f"{RULES_PREFIX}rule.rego", "package rules\n"), ("package/index.js", "")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HYPERPOD_GOV_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(template_engine, "_used", set())  # this test's process has used no folder yet
    return tmp_path / "cache" / "cloudformation-validate"


def test_a_new_version_keeps_the_most_recently_used_folders_and_removes_the_rest(cache, tmp_path, monkeypatch):
    assert KEEP_VERSIONS == 3
    packages = [_package(tmp_path, f"2.{i}.0") for i in range(6)]
    monkeypatch.setattr(template_engine, "KEEP_VERSIONS", 100)  # the cache as earlier installs left it
    folders = []
    for i, package in enumerate(packages[:5]):
        engine, rules = engine_files(package)
        assert (engine / "index.js").read_text() == f"// engine 2.{i}.0\n"
        assert (rules / "rule.rego").is_file() and not (engine.parent / "engine" / "package").exists()
        folders.append(engine.parent)
    for folder, used in zip(folders, (1000, 5000, 2000, 4000, 3000)):  # last used long ago, in this order
        os.utime(folder / COMPLETE, (used, used))
    monkeypatch.setattr(template_engine, "KEEP_VERSIONS", KEEP_VERSIONS)

    monkeypatch.setattr(template_engine, "_used", set())  # another process, which uses 2.2.0 (unpacked already)
    assert engine_files(packages[2])[0].parent == folders[2]
    assert (folders[2] / COMPLETE).stat().st_mtime > time.time() - 60
    assert all(f.is_dir() for f in folders)  # using a version removes nothing

    stale, running, stopped = cache / f"{UNPACKING}old", cache / f"{UNPACKING}new", cache / f"{REMOVING}x-1"
    for folder in (stale, running, stopped):
        (folder / "engine").mkdir(parents=True)
    long_ago = time.time() - STALE_SECONDS - 60
    os.utime(stale, (long_ago, long_ago))

    newest = engine_files(packages[5])[0].parent  # unpacked: the folders beyond the three most recently used go
    assert sorted(p.name for p in cache.iterdir()) == sorted([newest.name, folders[2].name, folders[1].name,
                                                              running.name])
    assert (newest / "engine" / "index.js").read_text() == "// engine 2.5.0\n"


def test_pruning_a_folder_it_cannot_read_fails_nothing(tmp_path):
    assert template_engine.prune(tmp_path / "missing") == []
