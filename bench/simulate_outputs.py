"""Write every output of the simulator benches (and of more scenarios) in full, to show two engines agree.

Run from the repository root:

    python bench/simulate_outputs.py record DIR [CASE ...]   # one file per case: DIR/<case>.txt
    python bench/simulate_outputs.py compare DIR_A DIR_B     # byte for byte; exit 1 at the first difference

A case's file holds the whole result: every workload, preemption and queue (their reprs print every field),
the timeline, the JSON and text outputs of ``hyperpod-gov simulate``, and for the spec-level runs the
per-team figures and their table. Cases: the two ``simulate_bench.py`` loads (fair sharing, 10,000
workloads), Kueue's large-scale configuration (``kueue_large_scale_bench.py``, classic preemption), the
startup example with its trace, and generated mixed scenarios (several cohorts and flavors, lending and
borrowing limits, every preemption policy, fair sharing on and off, both strategies). Not part of the
test suite: recording every case takes several minutes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _result_lines(result) -> list[str]:
    from hyperpod_gov.simulate.report import result_json, result_text

    lines = [f"cycles={result.cycles} end={result.end!r} fixed_point={result.fixed_point}"]
    lines += [repr(w) for w in result.workloads]
    lines += [repr(p) for p in result.preemptions]
    lines += [repr(q) for q in result.queues]
    lines += ["timeline:"] + list(result.timeline)
    lines += ["json:", json.dumps(result_json(result), indent=1)]
    lines += ["text:", result_text(result)]
    return lines


def _spec_level(plan, rows) -> list[str]:
    from hyperpod_gov.simulate.spec_level import figures_table, run_plan

    figures, result, notes = run_plan(plan, rows)
    lines = [repr(f) for _t, f in sorted(figures.items())] + figures_table(figures) + notes
    return lines + _result_lines(result)


def _simbench(gap: float) -> Callable[[], list[str]]:
    def run() -> list[str]:
        import simulate_bench as sb

        from hyperpod_gov.plan import build_plan
        from hyperpod_gov.simulate.spec_level import trace_checks
        from hyperpod_gov.simulate.trace import parse_trace
        from hyperpod_gov.spec.loader import parse_spec

        plan = build_plan(parse_spec(sb.spec(), today=dt.date(2026, 11, 30)))
        text = sb.trace([t.name for t in plan.teams], mean_gap=gap)
        return _spec_level(plan, parse_trace(text, "bench.csv", **trace_checks(plan)))
    return run


def _kueue_large_scale() -> list[str]:
    import kueue_large_scale_bench as kb

    from hyperpod_gov.simulate import load_scenario, simulate

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kueue-large-scale.yaml"
        path.write_text(kb.scenario_yaml(), encoding="utf-8")
        scenario = load_scenario(path)
    return _result_lines(simulate(scenario))


def _startup() -> list[str]:
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.simulate.spec_level import trace_checks
    from hyperpod_gov.simulate.trace import load_trace
    from hyperpod_gov.spec import load_spec

    plan = build_plan(load_spec(ROOT / "examples" / "startup.yaml", today=dt.date(2026, 11, 30)))
    return _spec_level(plan, load_trace(ROOT / "examples" / "startup-trace.csv", **trace_checks(plan)))


def mixed_scenario(seed: int) -> dict:
    """Several cohorts of queues on up to three flavors of cpu and gpu, with every policy drawn at random."""
    rng = random.Random(seed)
    flavors = ["f1", "f2", "f3"][: rng.randint(1, 3)]
    cohorts = [f"co{c}" for c in range(rng.randint(1, 3))]
    queues = []
    for i in range(rng.randint(3, 14)):
        cohort = rng.choice(cohorts) if rng.random() < 0.9 else None
        fl = []
        for f in flavors:
            res = {}
            for r in ("cpu", "gpu"):
                q = {"nominal": rng.randint(0, 16)}
                if cohort and rng.random() < 0.4:
                    q["borrowingLimit"] = rng.randint(0, 12)
                if cohort and rng.random() < 0.4:
                    q["lendingLimit"] = rng.randint(0, q["nominal"])
                res[r] = q
            fl.append({"name": f, "resources": res})
        q = {"name": f"q{i:02d}", "flavors": fl,
             "queueingStrategy": rng.choice(["BestEffortFIFO", "BestEffortFIFO", "StrictFIFO"]),
             "fairSharingWeight": rng.choice([0, 1, 1, 2, 3]),
             "preemption": {
                 "withinClusterQueue": rng.choice(["Never", "LowerPriority", "LowerOrNewerEqualPriority"]),
                 "reclaimWithinCohort": rng.choice(["Never", "LowerPriority", "Any"]),
                 "borrowWithinCohort": {"policy": rng.choice(["Never", "LowerPriority"]),
                                        "maxPriorityThreshold": rng.choice([None, 0, 1, 2])}},
             "flavorFungibility": {"whenCanBorrow": rng.choice(["MayStopSearch", "TryNextFlavor"]),
                                   "whenCanPreempt": rng.choice(["MayStopSearch", "TryNextFlavor"])}}
        if cohort:
            q["cohort"] = cohort
        queues.append(q)
    workloads, events = [], []
    t = 0
    for j in range(rng.randint(20, 400)):
        w = {"name": f"w{j:03d}", "queue": rng.choice(queues)["name"], "priority": rng.randint(-1, 3),
             "requests": {"cpu": rng.randint(1, 10), **({"gpu": rng.randint(1, 6)} if rng.random() < 0.6 else {})}}
        if rng.random() < 0.85:
            w["duration"] = rng.randint(5, 300)
        if rng.random() < 0.2:
            w["created"] = rng.randint(0, 30)
            workloads.append(w)
        else:
            t += rng.randint(0, 8)
            events.append({"at": t, "submit": w})
    return {"fairSharing": rng.random() < 0.6, "queues": queues, "workloads": workloads, "events": events,
            "preemptionStrategies": rng.choice([["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
                                                ["LessThanInitialShare"], ["LessThanOrEqualToFinalShare"]])}


MIXED_CYCLES = 1500


def _mixed() -> list[str]:
    from hyperpod_gov.simulate import parse_scenario, simulate

    lines = []
    for seed in range(200):
        lines.append(f"== mixed scenario {seed}")
        # Random policies can make queues preempt each other forever (no fixed point): a cycle budget each.
        lines += _result_lines(simulate(parse_scenario(mixed_scenario(seed)), cycles=MIXED_CYCLES))
    return lines


CASES: dict[str, Callable[[], list[str]]] = {
    "startup": _startup,
    "mixed": _mixed,
    "simbench": _simbench(1.0),
    "simbench-gap-0.75": _simbench(0.75),
    "kueue-large-scale": _kueue_large_scale,
}


def record(out: Path, names: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in names or list(CASES):
        t0 = time.perf_counter()
        data = ("\n".join(CASES[name]()) + "\n").encode()
        (out / f"{name}.txt").write_bytes(data)
        print(f"{name}: {len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]} "
              f"({time.perf_counter() - t0:.1f} s)")


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.glob("*.txt")} | {p.name for p in b.glob("*.txt")})
    bad = 0
    for name in names:
        pa, pb = a / name, b / name
        if not pa.exists() or not pb.exists():
            print(f"{name}: only in {a if pa.exists() else b}")
            bad += 1
            continue
        da, db = pa.read_bytes(), pb.read_bytes()
        if da == db:
            print(f"{name}: identical ({len(da):,} bytes, sha256 {hashlib.sha256(da).hexdigest()[:16]})")
            continue
        bad += 1
        la, lb = da.split(b"\n"), db.split(b"\n")
        i = next((k for k, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        print(f"{name}: DIFFERENT from line {i + 1}:\n  {la[i][:300] if i < len(la) else b'(end)'!r}\n"
              f"  {lb[i][:300] if i < len(lb) else b'(end)'!r}")
    return 1 if bad else 0


def main() -> int:
    if len(sys.argv) >= 3 and sys.argv[1] == "record":
        record(Path(sys.argv[2]), sys.argv[3:])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(Path(sys.argv[2]), Path(sys.argv[3]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
