"""Time the synth of each example and of an empty CDK app: whole processes first, then in one process.

    python bench/synth_bench.py                      # 3 rounds, then the in-process timings
    python bench/synth_bench.py --rounds 7 --whole-only
    python bench/synth_bench.py --baseline ../old    # the examples with another checkout too, alternating

Run with `./dev.sh bench`. Not part of the test suite. Whole process: `hyperpod-gov synth` of each example
against a Python process that synthesizes an empty CDK app (both start Python and jsii's Node.js), one of each
per round, rounds in turn, so that a loaded machine slows them alike; medians of wall time and of CPU time (user +
system of Python and Node.js: on a shared machine it moves far less than wall time), the ratio to the empty app
measured in the same rounds, and the peak resident memory (``ru_maxrss``: the largest of the synth process and
its children). `bench/synth_scale.py` times generated specs of 5 to 300 teams; `bench/synth_compare.py` checks
that two checkouts write the same bytes. In one process: best and median wall time over REPEATS runs, after the
jsii start-up (timed apart). Every synth includes what `hyperpod-gov synth` does: the plan, cdk8s rendering, the
k8s/ files, cdk-nag and CDK's checks.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
REPEATS = 3


EMPTY_APP = "import aws_cdk as cdk, sys; cdk.App(outdir=sys.argv[1]).synth()"


def _timed_once(argv: list[str], cwd: Path = ROOT) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (the process and its children) and peak RSS (MiB) of one process."""
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen([*argv, tmp], cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed:\n{err.read().decode()[-2000:]}")
        return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def whole_processes(rounds: int = REPEATS, baseline: Path | None = None) -> None:
    """Each case once per round, rounds in turn: on a loaded machine the cases are slowed alike."""
    cases: dict[str, tuple[list[str], Path]] = {"empty CDK app": ([sys.executable, "-c", EMPTY_APP], ROOT)}
    checkouts = {"": ROOT, **({" (baseline)": baseline.resolve()} if baseline else {})}
    for name in ("enterprise", "startup", "elastic"):
        for label, checkout in checkouts.items():
            cases[f"synth {name}{label}"] = ([sys.executable, "-m", "hyperpod_gov.cli", "synth",
                                              str(ROOT / "examples" / f"{name}.yaml"), "--out"], checkout)
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (argv, cwd) in cases.items():
            runs[name].append(_timed_once(argv, cwd))
    print(f"{'whole process':28} {'wall s':>7} {'x empty':>8} {'CPU s':>7} {'x empty':>8} {'peak MiB':>9}"
          f"  (medians of {rounds} rounds, alternating)")
    empty_wall = statistics.median(r[0] for r in runs["empty CDK app"])
    empty_cpu = statistics.median(r[1] for r in runs["empty CDK app"])
    for name, rs in runs.items():
        wall, cpu = statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs)
        print(f"{name:28} {wall:7.2f} {wall / empty_wall:8.2f} {cpu:7.2f} {cpu / empty_cpu:8.2f}"
              f" {max(r[2] for r in rs):9}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=REPEATS)
    parser.add_argument("--baseline", type=Path, help="another checkout whose synth of the examples to time too")
    parser.add_argument("--whole-only", action="store_true", help="only the whole-process timings")
    args = parser.parse_args(argv)
    whole_processes(args.rounds, args.baseline)
    if args.whole_only:
        return
    t0 = time.perf_counter()
    import aws_cdk as cdk  # jsii starts its Node.js process here

    cdk.App()
    startup = time.perf_counter() - t0

    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.spec import load_spec
    from hyperpod_gov.stacks.app import synth

    def empty(out: Path) -> None:
        cdk.App(outdir=str(out)).synth()

    from hyperpod_gov.spec import parse_spec
    from tests.scale import many_teams_spec

    cases = {"empty CDK app": empty}
    for name in ("enterprise", "startup", "elastic"):
        spec = load_spec(ROOT / "examples" / f"{name}.yaml")
        cases[f"examples/{name}.yaml"] = lambda out, spec=spec: synth(build_plan(spec), out)
    many = parse_spec(many_teams_spec(300))
    cases["generated, 300 teams"] = lambda out: synth(build_plan(many), out)

    print(f"jsii start-up (import aws_cdk + first App): {startup:.2f} s")
    print(f"{'case':28} {'best s':>8} {'median s':>9}  ({REPEATS} runs)")
    for name, fn in cases.items():
        times = []
        for _ in range(REPEATS):
            with tempfile.TemporaryDirectory() as tmp:
                t = time.perf_counter()
                fn(Path(tmp))
                times.append(time.perf_counter() - t)
        print(f"{name:28} {min(times):8.2f} {statistics.median(times):9.2f}")


if __name__ == "__main__":
    main()
