"""aws-cdk-lib's template-check engine (``@aws/cloudformation-validate``) and rules, unpacked from the aws-cdk-lib
package Python imports into a cache folder once per version (``HYPERPOD_GOV_CACHE``, default
``~/.cache/hyperpod-gov``), for ``template_checks`` to run beside the synth."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Optional

ENGINE_PREFIX = "package/node_modules/@aws/cloudformation-validate/"
RULES_PREFIX = "package/core/lib/validation/rules/"


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
    if (target / "complete").exists():
        return engine, rules
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".unpacking-"))
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
        (staging / "complete").touch()
        try:
            staging.rename(target)
        except OSError:  # another process unpacked it first: use that one
            if not (target / "complete").exists():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return engine, rules
