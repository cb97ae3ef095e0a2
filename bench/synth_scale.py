"""Synth cost per team: `hyperpod-gov synth` of generated specs with 5, 50, 150 and 300 teams, whole processes.

    python bench/synth_scale.py                      # 5, 50, 150, 300 teams, 3 rounds
    python bench/synth_scale.py --teams 5 300 --rounds 5
    python bench/synth_scale.py --baseline ../old    # the same specs with another checkout, alternating
    python bench/synth_scale.py --teams 5 300 --keep-findings   # the check's kept findings left in place
    python bench/synth_scale.py --teams 5 300 --parts   # CPU by process: Python, jsii's Node.js, the check

Every run starts with the template check's kept findings removed (``hyperpod_gov/assets/template_checks/stored.js``):
each synth checks every template, as a first synth does. With ``--keep-findings`` they are removed once a round,
and the largest size is synthesized a second time in each round, right after it, with one team's borrowing limit
changed ("N+1" in the table): what a synth costs when a spec changed in one team, whose templates are the only
ones checked again.

The specs come from ``tests/scale.py`` (600 principals at 300 teams, ``accessStacks: 2``). Runs alternate between
the cases (and the checkouts) round by round, so a loaded machine slows all of them alike; medians are printed,
with the cost per team above the 5-team spec and the peak resident memory of the synth process (``ru_maxrss``
of the Python process or of its Node.js child, whichever is larger). CPU seconds (user + system, Python and
Node.js) are printed too: on a shared machine they move far less than wall time. Not part of the test suite.

After the medians, each size's wall time over the smallest spec's in the same round, as the median and range of those
ratios (``print_paired``): the goal's ratio measured pair by pair, which a machine whose speed drifts moves less.

With ``--parts`` the CPU is also split by process (``PARTS``: the synth run by a few lines of Python that read its
own CPU, then end the template check's process and read that one's): Python, jsii's Node.js (the rest) and the
check, each as a median and per team above the smallest spec. The ratio of two sizes' wall times can only be as
low as the ratio of their CPU where both keep the cores equally busy, so this is where a per-team cost shows.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hyperpod_gov.template_checks import RESULTS  # noqa: E402
from hyperpod_gov.template_engine import engine_files  # noqa: E402
from tests.scale import many_teams_spec  # noqa: E402


def forget_findings() -> None:
    """Remove the template check's kept findings (the folder beside its engine): the next synth checks everything."""
    files = engine_files()
    if files is not None:
        shutil.rmtree(files[0].parent / RESULTS, ignore_errors=True)


def one_team_changed(teams: int) -> dict:
    """The ``teams``-team spec with one team (the middle one) allowed to borrow half as much."""
    spec = many_teams_spec(teams)
    spec["teams"][teams // 2]["sharing"]["borrowLimitPercent"] = 50
    return spec


# `hyperpod-gov synth SPEC --out OUT` (hyperpod_gov.cli.main), then this process's own CPU and, once the template
# check's process is ended (killed and reaped, as at exit), that process's CPU, as one JSON line to the file named by
# the last argument. What is left of the whole process tree's CPU is jsii's Node.js.
PARTS = """
import json, resource, sys
import hyperpod_gov.cli as cli, hyperpod_gov.template_checks as checks
try:
    code = cli.main(["synth", sys.argv[1], "--out", sys.argv[2]])
finally:
    own = resource.getrusage(resource.RUSAGE_SELF)
    if checks._shared is not None:
        checks._shared.close()
    ended = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(sys.argv[3], "w") as f:
        json.dump({"python": own.ru_utime + own.ru_stime, "check": ended.ru_utime + ended.ru_stime}, f)
sys.exit(code)
"""


def run(checkout: Path, spec: Path, parts: Optional[dict[str, float]] = None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one `hyperpod-gov synth` process run from ``checkout``; with
    ``parts`` (a dict, filled in) the synth is run by ``PARTS`` and its CPU split by process."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryFile() as err:
        split = Path(out) / "parts.json"
        command = [sys.executable, "-m", "hyperpod_gov.cli", "synth", str(spec), "--out", out]
        if parts is not None:
            command = [sys.executable, "-c", PARTS, str(spec), str(Path(out) / "synth"), str(split)]
        start = time.perf_counter()
        # stderr to a file, not a pipe: a large spec's warnings would fill a pipe nobody reads until the end
        proc = subprocess.Popen(command, cwd=checkout, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        err.seek(0)
        stderr = err.read().decode()
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"synth of {spec} in {checkout} failed:\n{stderr[-2000:]}")
        total = usage.ru_utime + usage.ru_stime
        if parts is not None:
            split_cpu = json.loads(split.read_text())
            parts.update(split_cpu, node=total - split_cpu["python"] - split_cpu["check"])
        return seconds, total, usage.ru_maxrss // 1024


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, nargs="+", default=[5, 50, 150, 300])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout to time alternately (e.g. main)")
    parser.add_argument("--keep-findings", action="store_true",
                        help="leave the check's kept findings in place, and time a one-team change of the largest spec")
    parser.add_argument("--parts", action="store_true",
                        help="split the CPU by process: Python, jsii's Node.js, the template check (PARTS)")
    args = parser.parse_args(argv)
    checkouts = {"this": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as tmp:
        specs = {}
        for n in args.teams:
            specs[n] = Path(tmp) / f"teams-{n}.yaml"
            specs[n].write_text(yaml.safe_dump(many_teams_spec(n), sort_keys=False))
        sizes: list = list(args.teams)
        if args.keep_findings:  # after the largest spec, the same with one team changed
            changed = f"{max(args.teams)}+1"
            specs[changed] = Path(tmp) / f"teams-{changed}.yaml"
            specs[changed].write_text(yaml.safe_dump(one_team_changed(max(args.teams)), sort_keys=False))
            sizes.insert(sizes.index(max(args.teams)) + 1, changed)
        times: dict[tuple[str, object], list[float]] = {(c, n): [] for c in checkouts for n in sizes}
        cpu: dict[tuple[str, int], list[float]] = {key: [] for key in times}
        peak: dict[tuple[str, int], int] = {key: 0 for key in times}
        split: dict[tuple[str, object], list[dict[str, float]]] = {key: [] for key in times}
        for r in range(args.rounds):
            forget_findings()  # with --keep-findings, once a round: "N+1" follows a synth of N that checked all
            for n in sizes:
                for c, checkout in checkouts.items():
                    if not args.keep_findings:
                        forget_findings()
                    parts: Optional[dict[str, float]] = {} if args.parts else None
                    seconds, cpu_s, rss = run(checkout, specs[n], parts)
                    if parts is not None:
                        split[c, n].append(parts)
                    times[c, n].append(seconds)
                    cpu[c, n].append(cpu_s)
                    peak[c, n] = max(peak[c, n], rss)
                    print(f"round {r + 1}: {c:8} {n!s:>5} teams {seconds:7.1f} s wall {cpu_s:7.1f} s CPU {rss:6} MiB",
                          file=sys.stderr)
    print(f"{'checkout':8} {'teams':>5} {'wall s':>7} {'x 5':>5} {'CPU s':>7} {'x 5':>5} {'CPU s/team':>10}"
          f" {'peak MiB':>9}  (medians of {args.rounds} rounds, alternating)")
    for c in checkouts:
        small, small_cpu = (statistics.median(d[c, min(args.teams)]) for d in (times, cpu))
        for n in sizes:
            med, med_cpu = statistics.median(times[c, n]), statistics.median(cpu[c, n])
            per_team = (med_cpu - small_cpu) / (n - min(args.teams)) if type(n) is int and n > min(args.teams) else 0.0
            print(f"{c:8} {n!s:>5} {med:7.1f} {med / small:5.2f} {med_cpu:7.1f} {med_cpu / small_cpu:5.2f}"
                  f" {per_team:10.3f} {peak[c, n]:9}")

    print_paired(checkouts, sizes, min(args.teams), times)
    if args.parts:
        print_parts(checkouts, sizes, min(args.teams), split)


def print_paired(checkouts: dict[str, Path], sizes: list, smallest: int,
                 times: dict[tuple[str, object], list[float]]) -> None:
    """Each size's wall time over the smallest spec's in the same round (the two run within seconds of each other),
    as the median and range of those round by round ratios: on a machine whose speed drifts within the hour the ratio
    of two medians can pair a fast round's small spec with a slow round's large one."""
    print(f"\n{'checkout':8} {'teams':>5} {'x small':>8} {'min':>6} {'max':>6}  (wall time over the {smallest}-team "
          "spec's, round by round: median and range)")
    for c in checkouts:
        for size in sizes:
            if size == smallest:
                continue
            ratios = [big / small for big, small in zip(times[c, size], times[c, smallest])]
            print(f"{c:8} {size!s:>5} {statistics.median(ratios):8.2f} {min(ratios):6.2f} {max(ratios):6.2f}")


def print_parts(checkouts: dict[str, Path], sizes: list, smallest: int,
                split: dict[tuple[str, object], list[dict[str, float]]]) -> None:
    """The CPU of each process (medians), and per team above the ``smallest`` spec."""
    names = ("python", "node", "check")
    print(f"\n{'checkout':8} {'teams':>5} " + " ".join(f"{n + ' s':>9} {'/team':>6}" for n in names)
          + "  (CPU by process: Python, jsii's Node.js, the template check; medians)")
    for c in checkouts:
        base = {n: statistics.median(p[n] for p in split[c, smallest]) for n in names}
        for size in sizes:
            med = {n: statistics.median(p[n] for p in split[c, size]) for n in names}
            row = []
            for n in names:
                per = (med[n] - base[n]) / (size - smallest) if type(size) is int and size > smallest else 0.0
                row.append(f"{med[n]:9.2f} {per:6.3f}")
            print(f"{c:8} {size!s:>5} " + " ".join(row))


if __name__ == "__main__":
    main()
