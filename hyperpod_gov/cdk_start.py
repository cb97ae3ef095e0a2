"""How ``hyperpod-gov synth`` starts jsii: the CDK's packages imported on a thread of their own, first thing, while
the main thread builds the command line and reads and plans the spec (``cli.cmd_synth``)."""

from __future__ import annotations

import importlib
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Iterable

# What synth imports that waits on jsii's Node.js (it starts, then loads each package's assembly: a digest of the
# tarball and the classes): imported on a second thread while this one reads and plans the spec, which makes no
# jsii call.
JSII_PACKAGES = ("aws_cdk", "cdk_nag", "cdk8s")
# Preloaded into jsii's Node.js: each module specifier resolved once per requiring file (the file says why).
RESOLVE_ONCE = Path(__file__).with_name("assets") / "jsii" / "resolve_once.js"


def resolve_modules_once() -> None:
    """Add ``RESOLVE_ONCE`` to ``NODE_OPTIONS`` (kept as it was otherwise), for the jsii Node.js process this Python
    process starts: call it before the first import of a jsii package (``aws_cdk``), which starts that process with
    this environment. Node.js processes started later from here (the template check, a CDK CLI) preload it too; it
    changes only how often Node.js resolves a specifier, never what to. The 300-team spec's 5,546 resources: 0.09 s
    of CPU resolving instead of 0.56 s (``bench/module_resolution.py``, docs/synth-performance.md)."""
    if not RESOLVE_ONCE.is_file():  # a copy without its assets: Node.js would not start with a preload it cannot find
        return
    option = preload_option()
    current = os.environ.get("NODE_OPTIONS", "")
    if option not in current:
        os.environ["NODE_OPTIONS"] = f"{current} {option}".strip()


def preload_option() -> str:
    """The NODE_OPTIONS word that preloads ``RESOLVE_ONCE``."""
    return "--require=" + _quoted(str(RESOLVE_ONCE))


def _quoted(path: str) -> str:
    """``path`` as one NODE_OPTIONS word: where it has white space, a quote or a backslash, double-quoted, with ``\\``
    and ``"`` escaped."""
    if not any(c.isspace() or c in '"\\' for c in path):
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def import_all(modules: Iterable[str]) -> None:
    for module in modules:
        importlib.import_module(module)


def start_cdk_imports() -> tuple[ThreadPoolExecutor, Future[None]]:
    """The thread that imports JSII_PACKAGES, started (``main`` starts it for ``synth`` before it builds the parser,
    whose commands' modules take about 0.3 s to import)."""
    resolve_modules_once()
    loading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jsii-start")
    return loading, loading.submit(import_all, JSII_PACKAGES)
