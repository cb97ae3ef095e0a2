"""Bad scenario and trace files: every problem reported at once, with path or line, value and fix; no traceback."""

from __future__ import annotations

import argparse
import io

import pytest

from hyperpod_gov.simulate import parse_scenario
from hyperpod_gov.simulate.cli import configure_parser, run
from hyperpod_gov.simulate.trace import parse_trace
from hyperpod_gov.spec.errors import SpecError

HEADER = "name,team,priorityClass,instanceType,accelerators,instances,submitMinute,durationMinutes\n"


def _issues(data) -> list[str]:
    with pytest.raises(SpecError) as exc:
        parse_scenario(data)
    return [str(i) for i in exc.value.issues]


def test_every_scenario_problem_is_reported_at_once_with_path_value_and_fix():
    issues = _issues({
        "queues": [
            {"name": "alpha", "cohort": "all", "queueingStrategy": "Fifo",
             "preemption": {"withinClusterQueue": "Sometimes"},
             "flavors": [{"name": "od", "resources": {"cpu": {"nominal": "lots", "lendingLimit": 2}}}]},
            {"name": "beta", "flavors": [{"name": "od", "resources": {"cpu": {"nominal": 4, "borrowingLimit": 2}}}]},
        ],
        "workloads": [{"name": "w", "queue": "gamma", "requests": {"cpu": -1}},
                      {"name": "w", "queue": "alpha", "requests": {"memory": "1Gi"}, "colour": "red"}],
        "events": [{"at": 5, "finish": "nobody"}],
    })
    assert any(i.startswith("queues[0].queueingStrategy: is not one of the allowed values ('Fifo'); use one of")
               for i in issues)
    assert any(i.startswith("queues[0].preemption.withinClusterQueue:") for i in issues)
    assert any(i.startswith("queues[0].flavors[0].resources.cpu.nominal: is not a quantity ('lots')") for i in issues)
    assert any(i.startswith("queues[1].flavors[0].resources.cpu.borrowingLimit: is set on a queue without a cohort")
               for i in issues)
    assert any(i.startswith("workloads[0].queue: names no queue of the scenario ('gamma'); use one of alpha, beta")
               for i in issues)
    assert any(i.startswith("workloads[0].requests.cpu: is not a quantity (-1)") for i in issues)
    assert any(i.startswith("workloads[1].name: repeats workloads[0]") for i in issues)
    assert any(i.startswith("workloads[1].colour: is not a known key") for i in issues)
    assert any(i.startswith("workloads[1].requests.memory: is not a resource of queue alpha") for i in issues)
    assert any(i.startswith("events[0].finish: names no workload defined before it ('nobody')") for i in issues)
    assert len(issues) >= 10


def test_lending_limit_above_nominal_is_refused():
    issues = _issues({"queues": [{"name": "a", "cohort": "c", "flavors": [
        {"name": "f", "resources": {"cpu": {"nominal": 2, "lendingLimit": 3}}}]}]})
    assert issues == ["queues[0].flavors[0].resources.cpu.lendingLimit: is above the nominal quota (3); "
                      "lend at most the nominal quota (2)"]


def test_scenario_file_that_is_not_yaml_is_one_problem_with_its_line(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("queues:\n  - name: a\n   flavors: [\n")
    p = argparse.ArgumentParser()
    configure_parser(p)
    err = io.StringIO()
    assert run(p.parse_args(["--scenario", str(bad)]), out=io.StringIO(), err=err) == 1
    text = err.getvalue()
    assert "1 problem in the scenario" in text and "line " in text and "Traceback" not in text


def test_missing_scenario_file_is_reported_not_raised(tmp_path):
    p = argparse.ArgumentParser()
    configure_parser(p)
    err = io.StringIO()
    assert run(p.parse_args(["--scenario", str(tmp_path / "nope.yaml")]), out=io.StringIO(), err=err) == 1
    assert "cannot be read" in err.getvalue()


def test_every_bad_trace_row_is_reported_with_its_line_number():
    text = HEADER + (
        "a,ml,,ml.g5.2xlarge,,2,0,60\n"
        "b,nobody,,ml.g5.2xlarge,,2,0,60\n"
        "c,ml,urgent,ml.g5.2xlarge,1,2,0,60\n"
        "a,ml,,ml.p9.huge,,x,-5,\n"
        "d,ml,,ml.g5.2xlarge\n"
    )
    with pytest.raises(SpecError) as exc:
        parse_trace(text, "t.csv", teams=["ml"], priority_classes=["training"], instance_types=["ml.g5.2xlarge"])
    issues = [str(i) for i in exc.value.issues]
    assert "line 3 team: is not a team of the spec ('nobody'); use one of ml" in issues
    assert any(i.startswith("line 4 priorityClass: is not a priority class of the spec ('urgent')") for i in issues)
    assert any(i.startswith("line 4 accelerators/instances: must have exactly one of the two") for i in issues)
    assert any(i.startswith("line 5 name: repeats the workload of line 2 ('a')") for i in issues)
    assert any(i.startswith("line 5 instanceType: is not an instance type of the cluster ('ml.p9.huge')") for i in issues)
    assert any(i.startswith("line 5 instances: is not a whole number above 0 ('x')") for i in issues)
    assert any(i.startswith("line 5 submitMinute: is not a number of minutes (0 or more) ('-5')") for i in issues)
    assert any(i.startswith("line 5 durationMinutes:") for i in issues)
    assert any(i.startswith("line 6: has 4 fields, the header has 8") for i in issues)


def test_trace_with_a_wrong_header_names_the_columns():
    with pytest.raises(SpecError) as exc:
        parse_trace("name,team,gpus\n", "t.csv")
    assert str(exc.value.issues[0]).startswith("line 1: lacks the column(s) priorityClass, instanceType")


def test_cli_needs_scenario_or_spec_with_trace():
    p = argparse.ArgumentParser()
    configure_parser(p)
    err = io.StringIO()
    assert run(p.parse_args(["examples/startup.yaml"]), out=io.StringIO(), err=err) == 1
    assert "give either --scenario FILE, or SPEC --trace TRACE.csv" in err.getvalue()


@pytest.mark.parametrize("bad", [None, [], ["a1"], {}, {"x": 1}, 3])
@pytest.mark.parametrize("where", ["events.finish", "capacity.nodeGroup", "capacity.flavor"])
def test_a_name_that_is_no_name_is_a_problem_with_its_path_not_a_traceback(where, bad):
    """A finish event's workload and a capacity event's node group or flavor given as a list, a mapping, a number or
    null is reported with its path (it raised TypeError or KeyError: a name must be hashable to be looked up)."""
    data = {
        "queues": [{"name": "alpha", "flavors": [{"name": "od", "resources": {"cpu": {"nominal": 8}}}]}],
        "workloads": [{"name": "a1", "queue": "alpha", "requests": {"cpu": 4}}],
        "events": [{"at": 5, "finish": "a1"}],
        "nodeGroups": [{"name": "g1", "flavor": "od", "perNode": {"cpu": 8}, "count": 2}],
        "capacity": [{"at": 10, "nodeGroup": "g1", "lose": 1}],
    }
    section, key = where.split(".")
    event = data[section][0]
    if key == "flavor":
        del event["nodeGroup"]  # a capacity event names a node group or a flavor
    event[key] = bad
    with pytest.raises(SpecError) as exc:
        parse_scenario(data, "s.yaml")
    assert [i.path for i in exc.value.issues] == [f"{section}[0].{key}"]
