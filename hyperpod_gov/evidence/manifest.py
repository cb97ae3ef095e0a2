"""``MANIFEST.sha256``: one line per file of an evidence folder in ``sha256sum`` format (``<hex>  <path>``, paths
relative to the folder in POSIX form, sorted), so ``sha256sum -c MANIFEST.sha256`` checks it without hyperpod-gov."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

MANIFEST = "MANIFEST.sha256"
_LINE = re.compile(r"^([0-9a-f]{64})  (.+)$")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def files_of(folder: Path) -> list[str]:
    """Every file under ``folder`` but the manifest, relative and sorted (symbolic links count as files)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if (p.is_file() or p.is_symlink()) and p.relative_to(folder).as_posix() != MANIFEST)


def write_manifest(folder: Path) -> Path:
    """Write ``folder/MANIFEST.sha256`` over every other file of ``folder``."""
    lines = [f"{sha256_of(folder / name)}  {name}\n" for name in files_of(folder)]
    path = folder / MANIFEST
    path.write_text("".join(lines), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Verification:
    """What differs between a folder and its manifest; each list sorted."""

    changed: tuple[str, ...]
    missing: tuple[str, ...]  # in the manifest, not in the folder
    extra: tuple[str, ...]  # in the folder, not in the manifest
    malformed: tuple[str, ...]  # manifest lines that are not ``<sha256>  <path>``

    @property
    def ok(self) -> bool:
        return not (self.changed or self.missing or self.extra or self.malformed)

    def lines(self) -> list[str]:
        return ([f"changed: {p}" for p in self.changed] + [f"missing: {p}" for p in self.missing]
                + [f"extra: {p}" for p in self.extra] + [f"malformed manifest line: {m}" for m in self.malformed])


def verify_manifest(folder: Path) -> Verification:
    """Compare ``folder`` with its ``MANIFEST.sha256`` (``FileNotFoundError`` when there is none)."""
    expected: dict[str, str] = {}
    malformed = []
    for line in (folder / MANIFEST).read_text(encoding="utf-8").splitlines():
        match = _LINE.match(line)
        if match is None:
            malformed.append(repr(line))
        else:
            expected[match.group(2)] = match.group(1)
    present = set(files_of(folder))
    changed = [p for p in sorted(expected) if p in present and sha256_of(folder / p) != expected[p]]
    return Verification(tuple(changed), tuple(sorted(set(expected) - present)), tuple(sorted(present - set(expected))),
                        tuple(malformed))
