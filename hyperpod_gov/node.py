"""Which Node.js runs jsii (the CDK's runtime) for the ``hyperpod-gov`` command.

jsii starts ``$JSII_NODE`` (default ``node`` on the PATH). On a Node.js release jsii does not support it still runs,
after an 11-line banner (end of life, untested). The command looks, in order, at ``JSII_NODE`` when it is set, the
project's ``node_modules/.bin/node`` (``./dev.sh`` installs Node.js 22 there: the working directory's, then the one
beside the package in a source checkout), then ``node`` on the PATH, and takes the first whose major release jsii
supports; it sets ``JSII_NODE`` to it before jsii starts. Where none is found, ``synth`` (and ``diff`` with its
resource diff) exits 2 saying how to get one.

Which releases jsii supports is read from the jsii runtime this Python environment ships (its ``NodeRelease``
table), so that a jsii upgrade that supports another release needs no change here.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Optional

# What jsii 1.142 supports, used only where its runtime cannot be read: its NodeRelease table lists 22 and 24 as
# supported, with end-of-life dates 2027-04-30 and 2028-04-30.
FALLBACK_SUPPORTED = {22: dt.date(2027, 4, 30), 24: dt.date(2028, 4, 30)}
HOW_TO_GET = ("install Node.js 22 or 24 (the project's ./dev.sh installs Node.js 22 into node_modules/ from the npm "
              "package `node`; elsewhere `npm install node@22` in the working directory, or your system's package), "
              "or point JSII_NODE at one")
_RELEASE = re.compile(r'new NodeRelease\((\d+),\{endOfLife:new Date\("(\d{4}-\d{2}-\d{2})"\)(,[^}]*)?\}\)')


class NodeNotFound(Exception):
    """No Node.js jsii supports: the message says which were tried and how to get one."""


@dataclass(frozen=True)
class Node:
    path: str
    version: str  # e.g. "22.23.3"

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])


def supported_releases(today: Optional[dt.date] = None) -> dict[int, dt.date]:
    """Major release -> end of life, for the releases on which jsii runs without its warning banner: those its
    NodeRelease table marks neither untested nor past their end of life on ``today``."""
    today = today or dt.date.today()
    table = _jsii_release_table()
    return {major: eol for major, eol in (table or FALLBACK_SUPPORTED).items() if eol > today}


@lru_cache(maxsize=1)
def _jsii_release_table() -> Optional[dict[int, dt.date]]:
    """The NodeRelease table of the installed jsii runtime (bin/jsii-runtime.js), untested releases left out; None
    where it cannot be read."""
    try:
        import jsii._embedded.jsii as embedded  # the bundled runtime jsii's Python package starts
    except ImportError:
        return None
    runtime = Path(embedded.__file__).with_name("bin__jsii-runtime.js")
    try:
        text = runtime.read_text(errors="replace")
    except OSError:
        return None
    table = {}
    for major, eol, options in _RELEASE.findall(text):
        if "untested:!0" in (options or "") or "endOfJsiiSupport" in (options or ""):
            continue  # untested, or already given an earlier end of jsii support: banner either way
        table[int(major)] = dt.date.fromisoformat(eol)
    return table or None


def candidates(cwd: Optional[Path] = None) -> list[str]:
    """The Node.js executables to try, in order (duplicates removed)."""
    found: list[str] = []
    explicit = os.environ.get("JSII_NODE")
    if explicit:
        found.append(shutil.which(explicit) or explicit)
    checkout = Path(__file__).resolve().parents[1]
    for folder in (cwd or Path.cwd(), checkout):
        local = folder / "node_modules" / ".bin" / "node"
        if local.exists():
            found.append(str(local))
    on_path = shutil.which("node")
    if on_path:
        found.append(on_path)
    return list(dict.fromkeys(found))


def version_of(path: str) -> Optional[str]:
    """``node --version`` without the v, or None where it does not run."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip()
    return text[1:] if out.returncode == 0 and re.fullmatch(r"v\d+\.\d+\.\d+", text) else None


def find_node(paths: Optional[Iterable[str]] = None, *, today: Optional[dt.date] = None) -> Node:
    """The first of ``paths`` (default ``candidates()``) whose release jsii supports. Raises ``NodeNotFound``."""
    supported = supported_releases(today)
    tried = []
    for path in (candidates() if paths is None else paths):
        version = version_of(path)
        if version is None:
            tried.append(f"{path} (does not run)")
            continue
        node = Node(path, version)
        if node.major in supported:
            return node
        tried.append(f"{path} (v{version})")
    wanted = " or ".join(str(m) for m in sorted(supported)) or "a release jsii supports"
    raise NodeNotFound(f"no Node.js that jsii supports (major {wanted}) was found; tried: "
                       f"{', '.join(tried) or 'none (no node on the PATH, no node_modules/.bin/node)'}; {HOW_TO_GET}")


def use_supported_node() -> Node:
    """Find a supported Node.js and make jsii start it (``JSII_NODE``); call before the first ``import aws_cdk``.
    Raises ``NodeNotFound``."""
    node = find_node()
    os.environ["JSII_NODE"] = node.path
    return node
