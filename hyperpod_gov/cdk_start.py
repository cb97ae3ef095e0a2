"""How ``hyperpod-gov synth`` starts jsii: the CDK's packages imported on a thread of their own, first thing, while
the main thread builds the command line and reads and plans the spec (``cli.cmd_synth``)."""

from __future__ import annotations

import importlib
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Iterable

# What synth imports that waits on jsii's Node.js (it starts, then loads each package's assembly: a digest of the
# tarball and the classes): imported on a second thread while this one reads and plans the spec, which makes no
# jsii call.
JSII_PACKAGES = ("aws_cdk", "cdk_nag", "cdk8s")


def import_all(modules: Iterable[str]) -> None:
    for module in modules:
        importlib.import_module(module)


def start_cdk_imports() -> tuple[ThreadPoolExecutor, Future[None]]:
    """The thread that imports JSII_PACKAGES, started (``main`` starts it for ``synth`` before it builds the parser,
    whose commands' modules take about 0.3 s to import)."""
    loading = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jsii-start")
    return loading, loading.submit(import_all, JSII_PACKAGES)
