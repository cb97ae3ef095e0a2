"""`hyperpod-gov simulate FLEET.yaml --trace T.csv`: the fleet example's trace dispatched over its workers."""

from __future__ import annotations

import json

import yaml

from hyperpod_gov.cli import main
from tests.conftest import EXAMPLES

FLEET = EXAMPLES / "fleet.yaml"
TRACE = EXAMPLES / "fleet-trace.csv"


def _run(capsys, *argv):
    code = main(["simulate", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_fleet_trace_is_dispatched_over_both_workers(capsys):
    code, out, err = _run(capsys, FLEET, "--trace", TRACE, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["manager"] == "use1-mgr"
    assert doc["fleet"]["workers"] == ["use1-train", "usw2-train"]
    assert {c: v["admissions"] for c, v in doc["clusters"].items()} == {"use1-train": 4, "usw2-train": 4}
    assert {t: v["admissionsPerCluster"] for t, v in doc["teams"].items()} == {
        "applied": {"use1-train": 2, "usw2-train": 2}, "research": {"use1-train": 2, "usw2-train": 2}}
    assert all(v["admitted"] == v["submitted"] == 4 for v in doc["teams"].values())
    # the manager's quota (the sum of the workers': 16 + 8 GPUs) bounds what is in flight
    assert doc["inFlight"]["research"]["ml.p5.48xlarge"]["nvidia.com/gpu"]["bound"] == 24


def test_text_output_names_the_manager_and_admissions_per_cluster(capsys):
    code, out, _err = _run(capsys, FLEET, "--trace", TRACE)
    assert code == 0
    assert "(8 workloads; manager use1-mgr)" in out
    assert "fleet of 2 worker(s) (use1-train, usw2-train; dispatcher AllAtOnce)" in out
    assert [line.split()[:3] for line in out.splitlines() if line.strip().startswith("(all)")] == [["(all)", "4", "4"]]


def test_the_manager_bound_follows_the_workers_quota(capsys, fleet_data, tmp_path):
    """Research loses its usw2-train quota: its fleet queue on the manager shrinks to 16 GPUs, its work runs on
    use1-train only (the test fails if the CLI derived the bound from anything but the fleet's plan)."""
    team = next(t for t in fleet_data["teams"] if t["name"] == "research")
    del team["quota"]["usw2-train"]
    spec = tmp_path / "fleet.yaml"
    spec.write_text(yaml.safe_dump(fleet_data, sort_keys=False))
    code, out, err = _run(capsys, spec, "--trace", TRACE, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["inFlight"]["research"]["ml.p5.48xlarge"]["nvidia.com/gpu"]["bound"] == 16
    assert doc["teams"]["research"]["admissionsPerCluster"]["usw2-train"] == 0


def test_a_fleet_without_dispatch_is_refused_with_the_reason(capsys, fleet_data, tmp_path):
    del fleet_data["fleet"]
    spec = tmp_path / "fleet.yaml"
    spec.write_text(yaml.safe_dump(fleet_data, sort_keys=False))
    code, out, err = _run(capsys, spec, "--trace", TRACE)
    assert code == 1 and out == ""
    assert "the fleet has no dispatch (fleet.dispatch)" in err


def test_a_trace_row_of_an_undispatched_team_is_reported(capsys, tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text(TRACE.read_text() + "h1,hpc,,ml.g5.2xlarge,,1,0,60\n")
    code, _out, err = _run(capsys, FLEET, "--trace", trace)
    assert code == 1
    assert "problem" in err and "hpc" in err


def test_options_a_fleet_run_does_not_take_are_refused(capsys):
    code, _out, err = _run(capsys, FLEET, "--trace", TRACE, "--capacity", TRACE)
    assert code == 1 and "--capacity is not available for a fleet spec" in err and "node groups" in err
