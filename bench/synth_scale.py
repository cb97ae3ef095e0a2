"""Synth cost per team: `hyperpod-gov synth` of generated specs with 5, 50, 150 and 300 teams, whole processes.

    python bench/synth_scale.py                      # 5, 50, 150, 300 teams, 3 rounds
    python bench/synth_scale.py --teams 5 300 --rounds 5
    python bench/synth_scale.py --baseline ../old    # the same specs with another checkout, alternating

The specs come from ``tests/scale.py`` (600 principals at 300 teams, ``accessStacks: 2``). Runs alternate between
the cases (and the checkouts) round by round, so a loaded machine slows all of them alike; medians are printed,
with the cost per team above the 5-team spec and the peak resident memory of the synth process (``ru_maxrss``
of the Python process or of its Node.js child, whichever is larger). CPU seconds (user + system, Python and
Node.js) are printed too: on a shared machine they move far less than wall time. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.scale import many_teams_spec  # noqa: E402


def run(checkout: Path, spec: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one `hyperpod-gov synth` process run from ``checkout``."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        # stderr to a file, not a pipe: a large spec's warnings would fill a pipe nobody reads until the end
        proc = subprocess.Popen([sys.executable, "-m", "hyperpod_gov.cli", "synth", str(spec), "--out", out],
                                cwd=checkout, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        err.seek(0)
        stderr = err.read().decode()
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"synth of {spec} in {checkout} failed:\n{stderr[-2000:]}")
        return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--teams", type=int, nargs="+", default=[5, 50, 150, 300])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout to time alternately (e.g. main)")
    args = parser.parse_args(argv)
    checkouts = {"this": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as tmp:
        specs = {}
        for n in args.teams:
            specs[n] = Path(tmp) / f"teams-{n}.yaml"
            specs[n].write_text(yaml.safe_dump(many_teams_spec(n), sort_keys=False))
        times: dict[tuple[str, int], list[float]] = {(c, n): [] for c in checkouts for n in args.teams}
        cpu: dict[tuple[str, int], list[float]] = {key: [] for key in times}
        peak: dict[tuple[str, int], int] = {key: 0 for key in times}
        for r in range(args.rounds):
            for n in args.teams:
                for c, checkout in checkouts.items():
                    seconds, cpu_s, rss = run(checkout, specs[n])
                    times[c, n].append(seconds)
                    cpu[c, n].append(cpu_s)
                    peak[c, n] = max(peak[c, n], rss)
                    print(f"round {r + 1}: {c:8} {n:4} teams {seconds:7.1f} s wall {cpu_s:7.1f} s CPU {rss:6} MiB",
                          file=sys.stderr)
    print(f"{'checkout':8} {'teams':>5} {'wall s':>7} {'x 5':>5} {'CPU s':>7} {'x 5':>5} {'CPU s/team':>10}"
          f" {'peak MiB':>9}  (medians of {args.rounds} rounds, alternating)")
    for c in checkouts:
        small, small_cpu = (statistics.median(d[c, min(args.teams)]) for d in (times, cpu))
        for n in args.teams:
            med, med_cpu = statistics.median(times[c, n]), statistics.median(cpu[c, n])
            per_team = (med_cpu - small_cpu) / (n - min(args.teams)) if n > min(args.teams) else 0.0
            print(f"{c:8} {n:5} {med:7.1f} {med / small:5.2f} {med_cpu:7.1f} {med_cpu / small_cpu:5.2f}"
                  f" {per_team:10.3f} {peak[c, n]:9}")


if __name__ == "__main__":
    main()
