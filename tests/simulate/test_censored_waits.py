"""`simulate --compare` and the team table say when a wait is cut at the end of the trace (issue 58): a workload never
admitted counts its wait only up to the trace's end, so the p50/p95 are lower bounds, and the sentence says "at least"
and how many were never admitted. The figures are the contract's own (never admitted = submitted - admitted)."""

from __future__ import annotations

from hyperpod_gov.simulate.spec_level import TeamFigures, compare_lines, figures_table


def figures(admitted: int, p95: float, submitted: int = 10) -> dict[str, TeamFigures]:
    return {"research": TeamFigures("research", submitted, admitted, submitted - admitted, 5.0, float(p95), 10.0, 0.0, 0, 0)}


def test_a_wait_that_counts_never_admitted_work_is_a_lower_bound():
    (line,) = compare_lines(figures(10, 40), figures(7, 95))
    assert "p95 wait goes from 40 to at least 95 minutes" in line
    assert "admitted goes from 10 to 7" in line
    assert "waits there count to the end of the trace only: 3 never admitted by the end of the trace in the second " \
           "spec" in line


def test_an_unchanged_wait_figure_is_named_when_only_its_censoring_changed():
    """Same p95 in both runs, but in the second three workloads were never admitted: the p95 is not "no change"."""
    (line,) = compare_lines(figures(10, 40), figures(7, 40))
    assert "p95 wait goes from 40 to at least 40 minutes" in line


def test_fully_admitted_runs_read_as_before():
    (line,) = compare_lines(figures(10, 40), figures(10, 95))
    assert line == "research: p95 wait goes from 40 to 95 minutes"
    assert "at least" not in line and "never admitted" not in line


def test_the_table_marks_cut_waits():
    header, row = figures_table(figures(7, 95))
    cells = row.split()
    assert cells[4:6] == [">=5", ">=95"] and header.split()[0] == "team"
    assert ">=" not in figures_table(figures(10, 95))[1]
