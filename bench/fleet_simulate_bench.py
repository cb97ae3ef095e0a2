"""Time the fleet simulation: 50,000 workloads dispatched over 8 worker clusters of 50 teams (MultiKueue AllAtOnce).

Run from the repository root: `python bench/fleet_simulate_bench.py [--profile] [--workloads N]`. Not part of the
test suite. Prints the CPU seconds of the process (user + sys, the issue's budget: under 60 s for 50,000 workloads
over 8 clusters), how much happened, admissions per cluster, and a digest of the whole result so two versions can be
shown to agree. The workers are tests/scale.py's many-team spec in kueue mode, varied per cluster (each team absent
from one worker in four, quotas of 1 to 3 instances, the instance counts their sum); the trace is generated from a
fixed seed.
"""

from __future__ import annotations

import cProfile
import copy
import datetime as dt
import hashlib
import io
import itertools
import os
import pstats
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORKERS = 8
TEAMS = 50
WORKLOADS = 50_000
INSTANCE_TYPE = "ml.g5.2xlarge"  # tests/scale.py's type: 1 GPU a node
MEAN_GAP_MIN = 0.25  # mean minutes between submissions: about half of the fleet's 600 GPUs asked for on average
BUDGET_CPU_S = 60.0


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def worker_spec(k: int) -> dict:
    """tests/scale.py's spec, member k of the fleet: a team absent from one worker in four, 1 to 3 nodes each."""
    from tests.scale import many_teams_spec

    data = copy.deepcopy(many_teams_spec(TEAMS, mode="kueue"))
    rng = random.Random(100 + k)
    data["name"] = f"fleet-w{k}"
    teams = []
    for i, team in enumerate(data["teams"]):
        if (i + k) % 4 == 0:
            continue
        team["quota"] = [{"instanceType": INSTANCE_TYPE, "count": rng.randint(1, 3)}]
        teams.append(team)
    data["teams"] = teams
    data["cluster"]["instanceGroups"][0]["count"] = sum(t["quota"][0]["count"] for t in teams)
    return data


def trace(weights: dict[str, int], n: int = WORKLOADS, mean_gap: float = MEAN_GAP_MIN) -> str:
    """Poisson arrivals from teams in proportion to ``weights`` (their GPUs over the fleet: a team asks for about
    its share); 1 GPU or 1 to 2 whole nodes; training or none, a few inference; 10 to 120 minutes."""
    rng = random.Random(13)
    teams = sorted(weights)
    cum = list(itertools.accumulate(weights[t] for t in teams))
    lines = ["name,team,priorityClass,instanceType,accelerators,instances,submitMinute,durationMinutes"]
    minute = 0.0
    for k in range(n):
        minute += rng.expovariate(1 / mean_gap)
        acc, inst = ("1", "") if rng.random() < 0.7 else ("", str(rng.choice([1, 2])))
        pc = rng.choice(["", "training", "training", "inference"])
        team = rng.choices(teams, cum_weights=cum)[0]
        lines.append(f"w{k:05d},{team},{pc},{INSTANCE_TYPE},{acc},{inst},{minute:.1f},{rng.randint(10, 120)}")
    return "\n".join(lines) + "\n"


def main() -> None:
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.simulate.fleet import simulate_fleet
    from hyperpod_gov.simulate.fleet_report import fleet_json
    from hyperpod_gov.simulate.spec_level import plan_queues
    from hyperpod_gov.simulate.trace import parse_trace
    from hyperpod_gov.spec.loader import parse_spec

    n = int(sys.argv[sys.argv.index("--workloads") + 1]) if "--workloads" in sys.argv else WORKLOADS
    c0 = cpu_seconds()
    workers = {f"w{k}": build_plan(parse_spec(worker_spec(k), today=dt.date(2026, 11, 30))) for k in range(WORKERS)}
    gpus: dict[str, int] = {}
    for plan in workers.values():
        for team, q in plan_queues(plan).items():
            gpus[team] = gpus.get(team, 0) + sum(f.quota("nvidia.com/gpu").nominal for f in q.flavors)
    teams = sorted(gpus)
    gap = float(sys.argv[sys.argv.index("--gap") + 1]) if "--gap" in sys.argv else MEAN_GAP_MIN
    rows = parse_trace(trace(gpus, n, gap), "fleet-bench.csv")
    c1 = cpu_seconds()
    if "--profile" in sys.argv:
        prof = cProfile.Profile()
        prof.enable()
    result = simulate_fleet(workers, rows)
    c2 = cpu_seconds()
    if "--profile" in sys.argv:
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
        print(s.getvalue())
    doc = fleet_json(result)
    print(f"workers={len(workers)} teams={len(teams)} workloads={len(rows)} mean gap={gap:g} min")
    print(f"plans and trace: {c1 - c0:.2f} CPU s")
    print(f"simulation:      {c2 - c1:.2f} CPU s  (ends at minute {result.end / 60:.0f})")
    states: dict[str, int] = {}
    for w in result.workloads:
        states[w.state] = states.get(w.state, 0) + 1
    print("states at the end: " + ", ".join(f"{k} {v}" for k, v in sorted(states.items())))
    print("admissions per cluster: " + ", ".join(f"{c} {v['admissions']}" for c, v in doc["clusters"].items()))
    hits = sum(t["inFlightBoundHits"] for t in doc["teams"].values())
    evicted = sum(t["evictedOnWorkers"] for t in doc["teams"].values())
    worst = max(doc["teams"].items(), key=lambda kv: kv[1]["waitP95Minutes"] or 0)
    print(f"in-flight bound hits: {hits}; evictions on workers: {evicted}; "
          f"worst p95 wait: {worst[0]} {worst[1]['waitP95Minutes']} min")
    total = cpu_seconds() - c0
    print(f"total:           {total:.2f} CPU s  (budget {BUDGET_CPU_S:.0f} CPU s for {WORKLOADS} workloads: "
          f"{'OK' if total < BUDGET_CPU_S else 'OVER'})")
    print(f"result digest:   {hashlib.sha256(repr(result).encode()).hexdigest()[:16]}")


if __name__ == "__main__":
    main()
