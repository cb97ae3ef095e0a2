"""Time the what-if simulator on a generated trace: 10,000 workloads, 50 teams, 3 instance types.

Run from the repository root: `python bench/simulate_bench.py [--profile [--sort KEY]] [--gap MINUTES]`. Not part
of the test suite. Prints the spec-level run's wall time (budget: 10 s on the 2-core CI machine, 25 s with
``--gap 0.75``), how much
happened in it, a digest of the whole result (every workload, preemption, queue integral and timeline line)
and of the per-team figures, so two versions of the engine can be shown to agree byte for byte, and with
--profile the top of a cProfile report.
"""

from __future__ import annotations

import cProfile
import datetime as dt
import hashlib
import io
import pstats
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TEAMS = 50
WORKLOADS = 10_000
TYPES = {"ml.g5.2xlarge": 100, "ml.g5.12xlarge": 50, "ml.p4d.24xlarge": 50}  # instances per type
SIZES = {"ml.g5.2xlarge": [1], "ml.g5.12xlarge": [1, 2, 4], "ml.p4d.24xlarge": [1, 2, 4, 8]}  # accelerators
# Mean minutes between submissions. 1.0 asks, on average, for about half of each type's GPUs: queues form at
# peaks and drain. `--gap 0.75` (about 70%) keeps some teams waiting for hours and takes about 3x longer.
MEAN_GAP_MIN = 1.0
BUDGETS_S = {1.0: 10.0, 0.75: 25.0}  # per mean gap; others are measured against the heavier budget


def spec(teams: int = TEAMS) -> dict:
    """A kueue-mode spec: every team owns an equal share of each type; most lend and borrow, a few do not."""
    rng = random.Random(7)
    team_list = []
    for i in range(teams):
        team_list.append({
            "name": f"team-{i:02d}",
            "fairShareWeight": rng.choice([25, 50, 100]),
            "quota": [{"instanceType": t, "count": n // teams} for t, n in TYPES.items()],
            "sharing": rng.choice([{"strategy": "LendAndBorrow", "borrowLimitPercent": 100},
                                   {"strategy": "LendAndBorrow", "borrowLimitPercent": 200},
                                   {"strategy": "LendAndBorrow", "borrowLimitPercent": 50},
                                   {"strategy": "Lend"}, {"strategy": "DontLend"}]),
            "access": {"viewers": [f"arn:aws:iam::111111111111:role/t{i}-viewer"],
                       "submitters": [f"arn:aws:iam::111111111111:role/t{i}-scientist"]},
        })
    return {
        "name": "simbench",
        "accounts": {"capacity": {"id": "111111111111", "region": "us-east-1"}},
        "cluster": {
            "name": "big",
            "admins": ["arn:aws:iam::111111111111:role/PlatformAdmin"],
            "instanceGroups": [{"name": f"g{j}", "instanceType": t, "count": n} for j, (t, n) in enumerate(TYPES.items())],
        },
        "scheduler": {"mode": "kueue", "idleCompute": "fair-share",
                      "priorityClasses": [{"name": "inference", "weight": 100}, {"name": "training", "weight": 50}]},
        "teams": team_list,
    }


def trace(teams: list[str], n: int = WORKLOADS, mean_gap: float = MEAN_GAP_MIN) -> str:
    """Poisson arrivals; mostly fractional-instance jobs, a fifth whole instances; 10 to 230 minutes each."""
    rng = random.Random(11)
    lines = ["name,team,priorityClass,instanceType,accelerators,instances,submitMinute,durationMinutes"]
    minute = 0.0
    for k in range(n):
        minute += rng.expovariate(1 / mean_gap)
        t = rng.choice(list(TYPES))
        acc, inst = (str(rng.choice(SIZES[t])), "") if rng.random() < 0.8 else ("", "1")
        pc = rng.choice(["", "training", "training", "inference"])
        lines.append(f"w{k:05d},{rng.choice(teams)},{pc},{t},{acc},{inst},{minute:.0f},{rng.randint(10, 230)}")
    return "\n".join(lines) + "\n"


def main() -> None:
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.simulate.spec_level import run_plan, trace_checks
    from hyperpod_gov.simulate.trace import parse_trace
    from hyperpod_gov.spec.loader import parse_spec

    gap = float(sys.argv[sys.argv.index("--gap") + 1]) if "--gap" in sys.argv else MEAN_GAP_MIN
    plan = build_plan(parse_spec(spec(), today=dt.date(2026, 11, 30)))
    text = trace([t.name for t in plan.teams], mean_gap=gap)
    t0 = time.perf_counter()
    rows = parse_trace(text, "bench.csv", **trace_checks(plan))
    t1 = time.perf_counter()
    if "--profile" in sys.argv:
        prof = cProfile.Profile()
        prof.enable()
    figures, result, notes = run_plan(plan, rows)
    t2 = time.perf_counter()
    if "--profile" in sys.argv:
        prof.disable()
        s = io.StringIO()
        sort = sys.argv[sys.argv.index("--sort") + 1] if "--sort" in sys.argv else "cumulative"
        pstats.Stats(prof, stream=s).sort_stats(sort).print_stats(int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 25)
        print(s.getvalue())
    waiting = sum(f.waiting for f in figures.values())
    worst = max(figures.values(), key=lambda f: f.wait_p95_min or 0)
    print(f"teams={len(plan.teams)} flavors={len(plan.flavors)} workloads={len(rows)} mean gap={gap:g} min")
    print(f"trace parse: {t1 - t0:.2f} s")
    print(f"simulation:  {t2 - t1:.2f} s  ({result.cycles} scheduling cycles, {len(result.preemptions)} preemptions, "
          f"{waiting} still waiting at minute {result.end / 60:.0f}, fixed points reached: {result.fixed_point})")
    print(f"worst p95 wait: {worst.team} {worst.wait_p95_min:g} min; "
          f"borrowed accelerator-hours in all: {sum(f.borrowed_accelerator_hours for f in figures.values()):.0f}")
    total = t2 - t0
    budget = BUDGETS_S.get(gap, max(BUDGETS_S.values()))
    print(f"total:       {total:.2f} s  (budget {budget:.0f} s: {'OK' if total < budget else 'OVER'})")
    if notes:
        print("notes:", *notes, sep="\n  ")
    print(f"result digest:  {digest(result)}")
    print(f"figures digest: {digest(sorted(figures.items()))}")


def digest(value: object) -> str:
    """sha256 of the repr: frozen dataclasses of ints, floats and strings print every field, deterministically."""
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


if __name__ == "__main__":
    main()
