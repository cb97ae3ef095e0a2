"""A Lambda handler's asset with the AWS SDK it was tested with, bundled from the installed packages.

The Lambda runtime's own boto3 lags botocore releases, and botocore validates every request against its service
model before sending it: a runtime whose model predates a member the project sends (``AcceleratorPartition``,
``IdleResourceSharing``) refuses the request client-side. So the handler's asset carries boto3 and botocore as
installed here (the versions ``constraints.txt`` pins and the tests ran), with their pure-Python dependencies,
copied from the installed packages at synth (no network, no Docker). botocore's service models are trimmed to
the services the handler calls; the asset directory is built once per content and reused.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import shutil
import tempfile
from pathlib import Path

# The handler's SDK and what it imports (botocore: jmespath, python-dateutil (six), urllib3).
PACKAGES = ("boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3")
MODULES = ("six",)  # single-file modules
DISTRIBUTIONS = ("boto3", "botocore", "s3transfer", "jmespath", "python-dateutil", "urllib3", "six")
# botocore/data files every client needs, besides the services' own models.
BOTOCORE_DATA = ("endpoints.json", "partitions.json", "sdk-default-configuration.json", "_retry.json")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc")


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"the handler bundle needs the installed package {name}")
    return Path(next(iter(spec.submodule_search_locations)))


def _module_file(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise RuntimeError(f"the handler bundle needs the installed module {name}")
    return Path(spec.origin)


def versions() -> dict[str, str]:
    """Distribution -> installed version, of everything the bundle copies."""
    return {d: importlib.metadata.version(d) for d in DISTRIBUTIONS}


def _key(handler_dir: Path, services: tuple[str, ...]) -> str:
    h = hashlib.sha256(repr((sorted(versions().items()), services)).encode())
    for f in sorted(p for p in handler_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(f.relative_to(handler_dir).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def bundled_asset(handler_dir: Path, *, services: tuple[str, ...], cache: Path | None = None) -> Path:
    """A directory holding ``handler_dir``'s files and the installed SDK (models of ``services`` only)."""
    root = (cache or Path(tempfile.gettempdir()) / "hyperpod-gov-handler-assets") / _key(handler_dir, services)
    if root.is_dir():
        return root
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root.parent if root.parent.exists() else None))
    shutil.copytree(handler_dir, staging, ignore=SKIP, dirs_exist_ok=True)
    for name in PACKAGES:
        ignore = SKIP
        if name == "botocore":
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "data")
        elif name == "boto3":
            ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "data", "examples")
        shutil.copytree(_package_dir(name), staging / name, ignore=ignore)
    for name in MODULES:
        shutil.copy2(_module_file(name), staging / _module_file(name).name)
    data, target = _package_dir("botocore") / "data", staging / "botocore" / "data"
    target.mkdir()
    for f in BOTOCORE_DATA:
        if (data / f).exists():
            shutil.copy2(data / f, target / f)
    for service in services:
        shutil.copytree(data / service, target / service, ignore=SKIP)
    root.parent.mkdir(parents=True, exist_ok=True)
    try:
        staging.rename(root)
    except OSError:  # built meanwhile by another process: keep theirs
        shutil.rmtree(staging, ignore_errors=True)
    return root
