"""aws-cdk-lib's template-check engine (``@aws/cloudformation-validate``) and rules, unpacked from the aws-cdk-lib
package Python imports into a cache folder once per version (``HYPERPOD_GOV_CACHE``, default
``~/.cache/hyperpod-gov``), for ``template_checks`` to run beside the synth.

Each version's folder (its engine and rules, and what ``template_checks`` keeps beside them: the engine's image and
the findings, about 30 MB in all) stays while that version is among the ``KEEP_VERSIONS`` most recently used: a
process that uses one touches its ``complete`` marker once, and unpacking a new version removes the folders beyond
those (``prune``), so upgrading aws-cdk-lib every week does not fill the disk. Removing one is safe: the next
process that needs that version unpacks it again."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Optional

ENGINE_PREFIX = "package/node_modules/@aws/cloudformation-validate/"
RULES_PREFIX = "package/core/lib/validation/rules/"
KEEP_VERSIONS = 3  # aws-cdk-lib versions whose folders are kept: a few virtualenvs of one machine share the cache
COMPLETE = "complete"  # a version's folder is whole once this file is in it; its time is the folder's last use
UNPACKING, REMOVING = ".unpacking-", ".removing-"  # folders being unpacked, and being removed
STALE_SECONDS = 3600  # an unpacking folder this old belongs to no running process
_used: set[Path] = set()  # the folders this process has touched


def cdk_tarball() -> Optional[Path]:
    """aws-cdk-lib's jsii package, as the ``aws_cdk`` module Python imports ships it (found without importing)."""
    spec = importlib.util.find_spec("aws_cdk")
    if spec is None or spec.origin is None:
        return None
    found = sorted((Path(spec.origin).parent / "_jsii").glob("aws-cdk-lib@*.jsii.tgz"))
    return found[-1] if found else None


def _cache_root() -> Path:
    if os.environ.get("HYPERPOD_GOV_CACHE"):
        return Path(os.environ["HYPERPOD_GOV_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hyperpod-gov"


def engine_files(tarball: Optional[Path] = None) -> Optional[tuple[Path, Path]]:
    """The folders of aws-cdk-lib's bundled engine and of its rules, unpacked from its package once per version
    (about a second); ``None`` if that package has no engine."""
    tarball = tarball or cdk_tarball()
    if tarball is None:
        return None
    target = _cache_root() / "cloudformation-validate" / f"{tarball.name}-{tarball.stat().st_size}"
    engine, rules = target / "engine", target / "rules"
    if (target / COMPLETE).exists():
        _use(target)
        return engine, rules
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=UNPACKING))
    try:
        found = False
        with tarfile.open(tarball, "r|gz") as archive:
            for member in archive:
                for prefix, folder in ((ENGINE_PREFIX, "engine"), (RULES_PREFIX, "rules")):
                    name = member.name[len(prefix):]
                    if member.isfile() and member.name.startswith(prefix) and ".." not in Path(name).parts:
                        path = staging / folder / name
                        path.parent.mkdir(parents=True, exist_ok=True)
                        source = archive.extractfile(member)
                        if source is not None:
                            path.write_bytes(source.read())
                            found = found or folder == "engine"
        if not found:
            return None
        (staging / "rules").mkdir(exist_ok=True)
        (staging / COMPLETE).touch()
        try:
            staging.rename(target)
        except OSError:  # another process unpacked it first: use that one
            if not (target / COMPLETE).exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _use(target)
    prune(target.parent)
    return engine, rules


def _use(folder: Path) -> None:
    """Mark a version's folder used now (once per process)."""
    if folder not in _used:
        _used.add(folder)
        try:
            os.utime(folder / COMPLETE)
        except OSError:  # a folder this process cannot write: it is used as it is
            pass


def prune(root: Path) -> list[Path]:
    """Remove from ``root`` the folders of all but the ``KEEP_VERSIONS`` most recently used versions, folders that a
    process stopped while removing, and unpacking folders older than ``STALE_SECONDS``; returns the folders
    removed. A version's folder is first renamed (a process that looks for it then unpacks it again rather than
    use a folder being emptied), then removed; what cannot be removed stays, and nothing fails."""
    now = time.time()
    versions: list[tuple[float, str, Path]] = []
    gone: list[Path] = []
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return gone
    for entry in entries:
        try:
            if entry.name.startswith(REMOVING) or (
                    entry.name.startswith(UNPACKING) and now - entry.stat().st_mtime > STALE_SECONDS):
                shutil.rmtree(entry, ignore_errors=True)
                gone.append(entry)
            elif not entry.name.startswith(".") and (entry / COMPLETE).is_file():
                versions.append(((entry / COMPLETE).stat().st_mtime, entry.name, entry))
        except OSError:  # removed by another process meanwhile
            continue
    versions.sort(reverse=True)  # the most recently used first
    for _, _, entry in versions[KEEP_VERSIONS:]:
        removing = root / f"{REMOVING}{entry.name}-{os.getpid()}"
        try:
            entry.rename(removing)
        except OSError:  # removed or renamed by another process meanwhile
            continue
        shutil.rmtree(removing, ignore_errors=True)
        gone.append(entry)
    return gone
