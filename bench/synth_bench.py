"""Time the synth of each example and of an empty CDK app: whole processes first, then in one process.

Run with `./dev.sh bench`. Not part of the test suite. Whole process: `hyperpod-gov synth` of each example
against a Python process that synthesizes an empty CDK app (both start Python and jsii's Node.js), alternating.
`bench/synth_scale.py` times generated specs of 5 to 300 teams. In one
process: best and median wall time over REPEATS runs, after the jsii start-up (timed apart). Every synth
includes what `hyperpod-gov synth` does: the plan, cdk8s rendering, the k8s/ files, cdk-nag and CDK's checks.
"""

from __future__ import annotations

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


def _timed_once(argv: list[str]) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        subprocess.run([*argv, tmp], check=True, capture_output=True, cwd=ROOT)
        return time.perf_counter() - t


def whole_processes() -> None:
    """Each case once per round, rounds in turn: on a loaded machine the cases are slowed alike."""
    print(f"{'whole process':28} {'best s':>8} {'median s':>9} {'x empty':>8}  ({REPEATS} rounds, alternating)")
    cases = {"empty CDK app": [sys.executable, "-c", EMPTY_APP]}
    for name in ("enterprise", "startup"):
        cases[f"hyperpod-gov synth {name}"] = [sys.executable, "-m", "hyperpod_gov.cli", "synth",
                                               f"examples/{name}.yaml", "--out"]
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(REPEATS):
        for name, argv in cases.items():
            times[name].append(_timed_once(argv))
    empty = statistics.median(times["empty CDK app"])
    for name, ts in times.items():
        print(f"{name:28} {min(ts):8.2f} {statistics.median(ts):9.2f} {statistics.median(ts) / empty:8.2f}")


def main() -> None:
    whole_processes()
    t0 = time.perf_counter()
    import aws_cdk as cdk  # jsii starts its Node.js process here

    cdk.App()
    startup = time.perf_counter() - t0

    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.spec import load_spec
    from stacks.app import synth

    def empty(out: Path) -> None:
        cdk.App(outdir=str(out)).synth()

    from hyperpod_gov.spec import parse_spec
    from tests.scale import many_teams_spec

    cases = {"empty CDK app": empty}
    for name in ("enterprise", "startup"):
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
