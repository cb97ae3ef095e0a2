"""Byte-for-byte comparison of `hyperpod-gov synth` output between this checkout and a baseline.

    python bench/synth_compare.py                       # baseline: where this branch left main; + 300 teams
    python bench/synth_compare.py --ref HEAD~3 --teams 5 300
    python bench/synth_compare.py --baseline ../other   # another checkout as it is on disk

Each spec (every ``examples/*.yaml`` and the generated specs of ``tests/scale.py``) is synthesized by both
checkouts with the same interpreter, as whole processes, into separate directories; then every file of the two
output trees (``cdk.out``, ``k8s``, ``contracts``, ``iam``) is compared byte for byte, and the files only one
side has are listed. One thing differs from run to run whatever the code: the jsii kernel's temporary directories,
which CDK's construct stack traces name (``*.metadata.json``, ``validation-report.json``); it is masked in both
trees. A performance change must leave every file identical; exit status 1 shows the first difference of each
file otherwise. ``--except-tree`` leaves out the files that name construct paths (``tree.json``,
``*.metadata.json``), for a change that moves constructs and keeps every template, manifest and report (the
plain-data resources of ``hyperpod_gov/constructs/plain.py``). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.scale import many_teams_spec  # noqa: E402


# /tmp/jsii-kernel-AbC123/node_modules/... and /tmp/tmpab_12cd3/lib/program.js: fresh directories per process
KERNEL_DIR = re.compile(rb"jsii-kernel-[A-Za-z0-9]+|tmp[A-Za-z0-9_]+(?=/lib/program\.js)")


def export(ref: str, into: Path) -> Path:
    """The tree of ``ref`` (this repository), written to ``into`` (``git archive``)."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def synth(checkout: Path, spec: Path, out: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "hyperpod_gov.cli", "synth", str(spec), "--out", str(out)],
                          cwd=checkout, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"synth of {spec} in {checkout} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def files(tree: Path) -> set[str]:
    return {p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()}


def _first_difference(a: bytes, b: bytes, context: int = 160) -> str:
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    line = a.count(b"\n", 0, at) + 1
    show = (lambda t: t[max(0, at - context):at + context].decode(errors="replace"))
    return f"line {line}, byte {at}:\n      baseline: ...{show(a)}...\n      this:     ...{show(b)}..."


def _construct_tree(f: str) -> bool:
    return f.endswith("/tree.json") or f == "tree.json" or f.endswith(".metadata.json")


def compare(old: Path, new: Path, *, except_tree: bool = False) -> list[str]:
    """Differences between two output trees: files one side lacks, and each differing file's first difference
    (``except_tree``: not the files that name construct paths)."""
    problems = []
    a, b = files(old), files(new)
    if except_tree:
        a, b = {f for f in a if not _construct_tree(str(f))}, {f for f in b if not _construct_tree(str(f))}
    problems += [f"only in the baseline: {f}" for f in sorted(a - b)]
    problems += [f"only in this checkout: {f}" for f in sorted(b - a)]
    for f in sorted(a & b):
        x, y = (KERNEL_DIR.sub(b"*", (tree / f).read_bytes()) for tree in (old, new))
        if x != y:
            problems.append(f"differs: {f}: {_first_difference(x, y)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--ref", help="git revision to export as the baseline (default: git merge-base HEAD main)")
    where.add_argument("--baseline", type=Path, help="a checkout on disk to use as the baseline instead")
    parser.add_argument("--teams", type=int, nargs="*", default=[300], help="generated specs (default: 300)")
    parser.add_argument("--no-examples", action="store_true", help="only the generated specs")
    parser.add_argument("--except-tree", action="store_true",
                        help="leave out tree.json and *.metadata.json (construct paths)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="synth-compare-") as tmp:
        work = Path(tmp)
        ref = args.ref or subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, check=True,
                                         capture_output=True, text=True).stdout.strip()
        baseline = args.baseline.resolve() if args.baseline else export(ref, work / "baseline")
        print(f"baseline: {args.baseline or ref}")
        specs = [] if args.no_examples else sorted((ROOT / "examples").glob("*.yaml"))
        for n in args.teams:
            path = work / f"teams-{n}.yaml"
            path.write_text(yaml.safe_dump(many_teams_spec(n), sort_keys=False))
            specs.append(path)
        failed = 0
        for spec in specs:
            old, new = work / "out" / spec.stem / "baseline", work / "out" / spec.stem / "this"
            synth(baseline, spec, old)
            synth(ROOT, spec, new)
            problems = compare(old, new, except_tree=args.except_tree)
            print(f"{spec.name}: {len(files(new))} files, "
                  + ("identical" if not problems else f"{len(problems)} differences"))
            for p in problems:
                print(f"  {p}")
            failed += bool(problems)
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
