"""A type the catalog lacks, declared under instanceTypes, is simulated and reported like a catalogued one."""

from __future__ import annotations

from hyperpod_gov.plan import build_plan
from hyperpod_gov.report.proposals import unallocated
from hyperpod_gov.simulate.spec_level import run_plan
from hyperpod_gov.simulate.trace import parse_trace
from hyperpod_gov.spec import parse_spec
from tests.conftest import TODAY
from tests.plan.test_allocations import DECLARED, declared_spec

TRACE = f"""name,team,priorityClass,instanceType,accelerators,instances,submitMinute,durationMinutes
w1,team-b,,{DECLARED},4,,0,60
w2,team-b,,{DECLARED},4,,5,30
"""


def test_a_declared_type_runs_in_the_simulator_through_the_plans_catalog():
    plan = build_plan(parse_spec(declared_spec("kueue"), today=TODAY))
    figures, _, _ = run_plan(plan, parse_trace(TRACE, "t.csv"))
    team = figures["team-b"]
    # team-b owns 4 GPUs of the declared type and does not borrow (DontLend): w2 waits for w1 to finish.
    assert (team.submitted, team.admitted) == (2, 2)
    assert team.accelerator_hours == 4 * 1 + 4 * 0.5
    assert team.wait_p95_min == 55


def test_the_report_counts_a_declared_types_unallocated_accelerators():
    spec = parse_spec(declared_spec("task-governance"), today=TODAY)
    assert unallocated(build_plan(spec), DECLARED) == 2 * 8 - 4
