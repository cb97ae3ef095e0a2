"""The git commit a spec file was taken from and whether the work tree was clean (``git`` through subprocess)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=False)


def git_state(spec: Path) -> dict[str, Any]:
    """``{"repository": True, "commit", "clean", "changedPaths", "specCommitted"}`` for a spec in a work tree;
    ``{"repository": False, "note"}`` outside one, or when git is not installed."""
    folder = spec.resolve().parent
    try:
        top = _git(folder, "rev-parse", "--show-toplevel")
    except FileNotFoundError:
        return {"repository": False, "note": "git is not installed: the commit could not be read"}
    if top.returncode != 0:
        return {"repository": False, "note": f"{spec} is not in a git repository: no commit ties this record "
                "to a reviewed source"}
    head = _git(folder, "rev-parse", "--verify", "HEAD")
    status = _git(folder, "status", "--porcelain", "--untracked-files=normal")
    changed = sorted(line[3:] for line in status.stdout.splitlines() if line.strip())
    tracked = _git(folder, "ls-files", "--error-unmatch", str(spec.resolve()))
    spec_diff = _git(folder, "diff", "--quiet", "HEAD", "--", str(spec.resolve())) if head.returncode == 0 else None
    return {
        "repository": True,
        "commit": head.stdout.strip() if head.returncode == 0 else None,
        "clean": not changed,
        "changedPaths": changed,
        # the spec as recorded is the spec of the commit: tracked and unchanged since it
        "specCommitted": tracked.returncode == 0 and spec_diff is not None and spec_diff.returncode == 0,
    }
