"""Time `hyperpod-gov synth` of a fleet of 8 clusters x 50 teams against one 50-team cluster (whole processes).

    python bench/fleet_synth_bench.py               # 3 rounds
    python bench/fleet_synth_bench.py --rounds 1 --clusters 8 --teams 50
    python bench/fleet_synth_bench.py --dispatch    # kueue mode, c0 dispatching to the others (MultiKueue)

Not part of the test suite. Both specs are generated from ``tests/scale.py``'s ``many_teams_spec``: the single
cluster is ``many_teams_spec(teams)`` as it is; the fleet has ``--clusters`` members, each that same cluster in a
region of its own (one account), every team on every member with the member's quota. Each case is one whole
``python -m hyperpod_gov.cli synth SPEC --out DIR`` process, one of each per round, rounds in turn (a loaded machine
slows them alike). CPU seconds are user + system of the process and every child it waited for (Node.js), from
``os.wait4`` as in ``bench/synth_bench.py``: on a shared machine they move far less than wall time. The target is
fleet CPU <= clusters x the single cluster's CPU (the fleet is that many clusters' work in one process). With
``--dispatch`` both specs are in kueue mode and the fleet's first cluster dispatches to the others, so the fleet also
builds the MultiKueue objects and every dispatch member's worker-credential stack (``<member>-multikueue``).
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.scale import many_teams_spec  # noqa: E402

REGIONS = ("us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1", "ap-southeast-2",
           "eu-north-1", "ap-south-1", "ca-central-1", "sa-east-1", "eu-west-2")


def fleet_data(clusters: int, teams: int, *, dispatch: bool = False) -> dict[str, Any]:
    """A fleet of ``clusters`` members, each ``many_teams_spec(teams)``'s cluster in its own region, every team on
    every member with the quota the single cluster gives it; with ``dispatch``, in kueue mode, the first member the
    MultiKueue manager of the others."""
    if clusters > len(REGIONS):
        raise SystemExit(f"at most {len(REGIONS)} clusters (one region each)")
    one = single_data(teams, dispatch=dispatch)
    data = {k: copy.deepcopy(v) for k, v in one.items() if k not in ("cluster", "teams")}
    data["name"] = "bench"
    names = [f"c{i}" for i in range(clusters)]
    data["clusters"] = []
    for name, region in zip(names, REGIONS):
        cluster = copy.deepcopy(one["cluster"])
        cluster["name"] = f"bench-{name}"
        data["clusters"].append({"name": name, "accounts": {"capacity": {"region": region}}, "cluster": cluster})
    data["teams"] = []
    for team in one["teams"]:
        team = copy.deepcopy(team)
        team["quota"] = {name: copy.deepcopy(team["quota"]) for name in names}
        data["teams"].append(team)
    if dispatch:
        data["fleet"] = {"dispatch": {"manager": names[0], "workers": names[1:]}}
    return data


def single_data(teams: int, *, dispatch: bool = False) -> dict[str, Any]:
    """The one cluster compared with the fleet: kueue mode when the fleet dispatches (MultiKueue needs it)."""
    return many_teams_spec(teams, mode="kueue") if dispatch else many_teams_spec(teams)


def _timed_once(argv: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (the process and its children) and peak RSS (MiB) of one process."""
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen([*argv, tmp], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed:\n{err.read().decode()[-3000:]}")
        return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clusters", type=int, default=8)
    parser.add_argument("--teams", type=int, default=50)
    parser.add_argument("--dispatch", action="store_true", help="kueue mode, the first cluster dispatching")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as specs:
        single, fleet = Path(specs) / "single.yaml", Path(specs) / "fleet.yaml"
        single.write_text(yaml.safe_dump(single_data(args.teams, dispatch=args.dispatch), sort_keys=False))
        fleet.write_text(yaml.safe_dump(fleet_data(args.clusters, args.teams, dispatch=args.dispatch),
                                        sort_keys=False))
        cases = {f"one cluster, {args.teams} teams": single,
                 f"fleet {args.clusters} x {args.teams} teams": fleet}
        runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            for name, spec in cases.items():
                runs[name].append(_timed_once([sys.executable, "-m", "hyperpod_gov.cli", "synth", str(spec),
                                               "--out"]))
    print(f"{'whole process':28} {'wall s':>7} {'CPU s':>7} {'peak MiB':>9}  (medians of {args.rounds} rounds, "
          "alternating)")
    cpu = {}
    for name, rs in runs.items():
        cpu[name] = statistics.median(r[1] for r in rs)
        print(f"{name:28} {statistics.median(r[0] for r in rs):7.2f} {cpu[name]:7.2f} {max(r[2] for r in rs):9}")
    one, many = cpu.values()
    print(f"fleet CPU / one cluster's CPU: {many / one:.2f} (target <= {args.clusters})")


if __name__ == "__main__":
    main()
