"""explain fits 100 columns (issue 22): wide tables split into tables that repeat the team column, long lines
wrap, nothing is lost."""

from __future__ import annotations

import pytest

from hyperpod_gov.explain import WIDTH, _table
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import load_spec
from tests.conftest import EXAMPLES, TODAY


@pytest.mark.parametrize("example", ["enterprise", "startup", "existing"])
def test_explain_fits_100_columns_and_keeps_every_value(example):
    from hyperpod_gov.explain import explain

    plan = build_plan(load_spec(EXAMPLES / f"{example}.yaml", today=TODAY))
    text = explain(plan)
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    words = set(text.split())
    for team in plan.teams:
        assert team.name in words and team.namespace in words


def test_a_wide_table_splits_into_tables_that_repeat_the_first_column():
    headers = ["TEAM", "A" * 40, "B" * 40, "C" * 40]
    rows = [["t1", "a" * 40, "b" * 40, "c" * 40], ["t2", "x", "y", "z"]]
    text = _table(headers, rows, width=100)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert sum(1 for line in lines if line.startswith("TEAM")) == 2  # (A, B) then (C), each with TEAM
    assert all(v in text for v in ("a" * 40, "b" * 40, "c" * 40))


def test_a_cell_wider_than_the_page_wraps_within_its_column():
    text = _table(["TEAM", "CAN VIEW"], [["t1", "; ".join(f"111111111111:role/Viewer{i}" for i in range(8))]],
                  width=100)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "Viewer7" in text and text.count("\n") > 3
