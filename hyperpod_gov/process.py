"""How a command's process ends."""

from __future__ import annotations

import gc
import sys
from typing import NoReturn


def exit_with(code: int) -> NoReturn:
    """Exit with ``code``, the process's objects left to the exit. Python's finalization walks every object the
    process holds (the CDK's generated modules, the plan, the manifests): 0.5 to 0.6 s of a synth's wall time, with
    Node.js and the template check already done. Frozen (``gc.freeze``), they are not walked; what needs to happen at
    exit still does (``atexit``: jsii's Node.js stopped, temporary folders removed; the standard streams flushed).
    For a command's own process only (``cli.run``, ``app.py``), never in a test's."""
    gc.freeze()
    sys.exit(code)
