"""How a command's process ends; lines written to a child process without waiting for it."""

from __future__ import annotations

import gc
import sys
import threading
from queue import SimpleQueue
from typing import Any, NoReturn, Optional


def exit_with(code: int) -> NoReturn:
    """Exit with ``code``, the process's objects left to the exit. Python's finalization walks every object the
    process holds (the CDK's generated modules, the plan, the manifests): 0.5 to 0.6 s of a synth's wall time, with
    Node.js and the template check already done. Frozen (``gc.freeze``), they are not walked; what needs to happen at
    exit still does (``atexit``: jsii's Node.js stopped, temporary folders removed; the standard streams flushed).
    For a command's own process only (``cli.run``, ``app.py``), never in a test's."""
    gc.freeze()
    sys.exit(code)


class LineWriter:
    """Writes lines to a child process's stdin on a thread of its own, in the order given: a large line (a predicted
    template's fragments, ``TemplateChecks.predict``) would otherwise block the caller until the process, busy,
    reads it. A write to a process that stopped is dropped (reading its answer reports it)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._lines: SimpleQueue[Optional[bytes]] = SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="line-writer", daemon=True)
        self._thread.start()

    def write(self, line: bytes) -> None:
        self._lines.put(line)

    def close(self) -> None:
        self._lines.put(None)

    def _run(self) -> None:
        while (line := self._lines.get()) is not None:
            try:
                self._stream.write(line)
                self._stream.flush()
            except (OSError, ValueError):  # stopped, or its stream closed
                return
