"""Kueue's own large-scale scheduler performance configuration, written as a scenario and simulated.

Source of the numbers: kubernetes-sigs/kueue, tag v0.19.2,
``test/performance/scheduler/configs/large-scale/generator.yaml`` (10 cohorts of 100 ClusterQueues,
50 workloads per queue: 35 small, 11 medium, 4 large), read the way that tag's
``test/performance/scheduler/runner/generator/generator.go`` creates the objects: each ClusterQueue
``cq-0-<i>-cohort-<c>`` has one flavor with ``cpu`` nominal 20 and borrowingLimit 100, reclaimWithinCohort
Any and withinClusterQueue LowerPriority; each workload set creates its workloads one after the other,
``creationIntervalMs`` apart (the first one interval after the start), each requesting ``request`` cpus for
``runtimeMs`` once admitted. Kueue runs it with its default configuration (no fair sharing). The runner's
calibrated wall time for Kueue itself is ``maxWallMs`` in ``configs/large-scale/rangespec.yaml`` (mean
1,179,411 ms).

The scenario's time unit is one millisecond of the config (times stay whole numbers). The bench writes the
scenario as YAML, then times loading it (``load_scenario``, as ``hyperpod-gov simulate --scenario`` does)
and simulating it. Run from the repository root: ``python bench/kueue_large_scale_bench.py [--profile]
[--keep FILE]``. Not part of the test suite; target: under 45 s in all on the 2-core CI machine.
"""

from __future__ import annotations

import cProfile
import hashlib
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# configs/large-scale/generator.yaml at v0.19.2
COHORTS = 10
QUEUES_PER_COHORT = 100
NOMINAL_QUOTA = 20
BORROWING_LIMIT = 100
RECLAIM_WITHIN_COHORT = "Any"
WITHIN_CLUSTER_QUEUE = "LowerPriority"
# (count, creationIntervalMs, className, runtimeMs, priority, request)
WORKLOAD_SETS = (
    (35, 60, "small", 150, 50, 1),
    (11, 300, "medium", 350, 100, 5),
    (4, 700, "large", 700, 200, 20),
)
FLAVOR = "rf"  # generator.go's defaultResourceFlavorName
BUDGET_S = 45.0


def queue_name(cohort: int, index: int) -> str:
    return f"cq-0-{index}-cohort-{cohort}"


def scenario_yaml() -> str:
    """The scenario as YAML text, written line by line (one flow mapping per workload, like a person would)."""
    lines = ["fairSharing: false", "queues:"]
    for c in range(COHORTS):
        for i in range(QUEUES_PER_COHORT):
            lines += [
                f"  - name: {queue_name(c, i)}",
                f"    cohort: cohort-{c}",
                f"    preemption: {{withinClusterQueue: {WITHIN_CLUSTER_QUEUE}, reclaimWithinCohort: {RECLAIM_WITHIN_COHORT}}}",
                f"    flavors: [{{name: {FLAVOR}, resources: {{cpu: {{nominal: {NOMINAL_QUOTA}, "
                f"borrowingLimit: {BORROWING_LIMIT}}}}}}}]",
            ]
    lines.append("events:")
    for c in range(COHORTS):
        for i in range(QUEUES_PER_COHORT):
            q = queue_name(c, i)
            for set_idx, (count, interval, cls, runtime, priority, request) in enumerate(WORKLOAD_SETS):
                for si in range(count):
                    # generator.go: "<class>-<set>-<si>-<i>" in the queue's own namespace (named as the queue).
                    name = f"{q}/{cls}-{set_idx}-{si}-0"
                    lines.append(f"  - {{at: {(si + 1) * interval}, submit: {{name: {name}, queue: {q}, "
                                 f"priority: {priority}, requests: {{cpu: {request}}}, duration: {runtime}}}}}")
    return "\n".join(lines) + "\n"


def summary(result) -> list[str]:
    """Per workload class: how many, how many admitted, the mean simulated time to first admission."""
    out = []
    for _n, _i, cls, *_ in WORKLOAD_SETS:
        wls = [w for w in result.workloads if w.name.split("/")[1].startswith(cls + "-")]
        waits = [w.first_admitted_at - w.submitted_at for w in wls if w.first_admitted_at is not None]
        mean = sum(waits) / len(waits) if waits else float("nan")
        out.append(f"  {cls:<6} {len(wls)} workloads, {len(waits)} admitted, mean time to admission "
                   f"{mean:.1f} ms, preempted {sum(w.preempted_count for w in wls)} time(s)")
    return out


def digest(value: object) -> str:
    """sha256 of the repr: frozen dataclasses of ints, floats and strings print every field, deterministically."""
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def main() -> None:
    from hyperpod_gov.simulate import load_scenario, simulate

    t0 = time.perf_counter()
    text = scenario_yaml()
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(keep) if keep else Path(tmp) / "kueue-large-scale.yaml"
        path.write_text(text, encoding="utf-8")
        t1 = time.perf_counter()
        scenario = load_scenario(path)
    t2 = time.perf_counter()
    if "--profile" in sys.argv:
        prof = cProfile.Profile()
        prof.enable()
    result = simulate(scenario)
    t3 = time.perf_counter()
    if "--profile" in sys.argv:
        prof.disable()
        s = io.StringIO()
        sort = sys.argv[sys.argv.index("--sort") + 1] if "--sort" in sys.argv else "tottime"
        pstats.Stats(prof, stream=s).sort_stats(sort).print_stats(int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 25)
        print(s.getvalue())
    admitted = sum(1 for w in result.workloads if w.first_admitted_at is not None)
    print(f"cohorts={COHORTS} queues={len(scenario.queues)} workloads={len(scenario.events)} "
          f"scenario={len(text) / 1e6:.1f} MB")
    print(f"write yaml:  {t1 - t0:.2f} s")
    print(f"load yaml:   {t2 - t1:.2f} s")
    print(f"simulation:  {t3 - t2:.2f} s  ({result.cycles} scheduling cycles, {len(result.preemptions)} preemptions, "
          f"{admitted} admitted, ends at {result.end:g} ms, fixed points reached: {result.fixed_point})")
    print(*summary(result), sep="\n")
    total = t3 - t1
    print(f"load + simulation: {total:.2f} s  (budget {BUDGET_S:.0f} s: {'OK' if total < BUDGET_S else 'OVER'})")
    print(f"result digest: {digest(result)}")


if __name__ == "__main__":
    main()
