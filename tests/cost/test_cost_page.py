"""The support tier of a Kubernetes version on a day, `explain`'s cost lines dated by it, and docs/cost.md's and the
README's figures, computed from the plan (``HYPERPOD_GOV_UPDATE_DOCS=1`` rewrites them; otherwise stale ones fail)."""

from __future__ import annotations

import datetime as dt
import os
import re

import pytest

from hyperpod_gov.cost import CALENDAR, cost_lines, cost_summary, cost_table, monthly_total, support
from hyperpod_gov.cost.page import calendar_table
from hyperpod_gov.explain import explain
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec.types import KUBERNETES_VERSIONS
from tests.conftest import ROOT

UPDATE_DOCS = "HYPERPOD_GOV_UPDATE_DOCS"
DOC, README = ROOT / "docs" / "cost.md", ROOT / "README.md"
DOC_MARKERS = ("<!-- cost figures: written by tests/cost/test_cost_page.py (HYPERPOD_GOV_UPDATE_DOCS=1), not by hand "
               "-->", "<!-- end of the cost figures -->")
README_MARKERS = ("<!-- cost sentence: written by tests/cost/test_cost_page.py (HYPERPOD_GOV_UPDATE_DOCS=1), not by "
                  "hand -->", "<!-- end of the cost sentence -->")
STATED = re.compile(r"Computed on (\d{4}-\d{2}-\d{2})")


@pytest.mark.parametrize("version, day, tier, until", [
    ("1.33", dt.date(2026, 7, 28), "standard", dt.date(2026, 7, 29)),
    ("1.33", dt.date(2026, 7, 29), "extended", dt.date(2027, 7, 29)),  # billed from the start of that day (UTC)
    ("1.34", dt.date(2026, 12, 1), "standard", dt.date(2026, 12, 2)),
    ("1.34", dt.date(2026, 12, 7), "extended", dt.date(2027, 12, 2)),
    ("1.31", dt.date(2026, 11, 26), "ended", dt.date(2026, 11, 26)),
])
def test_support_tier_follows_the_eks_calendar(version, day, tier, until):
    s = support(version, day)
    assert (s.tier, s.until, s.hourly_usd) == (tier, until, 0.10 if tier == "standard" else 0.60)


def test_no_accepted_version_is_in_standard_support_on_2026_12_07():
    assert set(KUBERNETES_VERSIONS) <= set(CALENDAR)
    assert {v: support(v, dt.date(2026, 12, 7)).tier for v in KUBERNETES_VERSIONS} == {
        "1.30": "ended", "1.31": "ended", "1.32": "extended", "1.33": "extended", "1.34": "extended"}


def test_explain_prices_the_control_plane_in_the_tier_of_the_day_it_is_given(enterprise_spec):
    plan = build_plan(enterprise_spec)
    before, after = (explain(plan, today=dt.date(2026, 7, 1)), explain(plan, today=dt.date(2026, 12, 7)))
    assert "Kubernetes 1.33 is in EKS standard support on 2026-07-01 (until 2026-07-29" in before
    assert "Kubernetes 1.33 is in EKS extended support on 2026-12-07" in after.replace("\n    ", " ")
    # 13 interface endpoints x 2 AZs, one NAT gateway and its address, 6 dashboards, 30 alarm metrics, 152 Kueue
    # metrics, 4 keys: 189.80 + 32.85 + 3.65 + 18 + 3 + 45.60 + 4 = 296.90, plus 73 (standard) or 438 (extended)
    assert "fixed cost: about USD 369.90 a month" in before
    assert "fixed cost: about USD 734.90 a month" in after


def test_the_cost_lines_add_up_by_hand(enterprise_spec):
    lines = {line.item: line for line in cost_lines(build_plan(enterprise_spec), dt.date(2026, 12, 7))}
    assert lines["EKS control plane"].monthly == pytest.approx(438.0)
    assert lines["interface endpoints"].count == "13 (AWS::EC2::VPCEndpoint) x 2 AZs"
    assert lines["interface endpoints"].monthly == pytest.approx(189.8)
    assert lines["KMS keys, rotating yearly"].monthly == pytest.approx(4.0)
    assert monthly_total(list(lines.values())) == pytest.approx(734.9)


def doc_figures(plan, day: dt.date) -> str:
    table = cost_table(cost_lines(plan, day))
    return "\n".join([DOC_MARKERS[0], f"Computed on {day} for `examples/enterprise.yaml`. "
                      f"{cost_summary(plan, day)}.", "", table, "",
                      "The Kubernetes versions the spec accepts, and their tier on that day:", "",
                      calendar_table(day), DOC_MARKERS[1]])


def readme_figures(plan, day: dt.date) -> str:
    return "\n".join([README_MARKERS[0], f"{cost_summary(plan, day)},", README_MARKERS[1]])


def _written(path, markers, figures) -> None:
    """Check (or with UPDATE_DOCS=1 write) the text between ``markers`` in ``path``: ``figures(day)`` for the day
    the text states (the day the test runs when it is written)."""
    text = path.read_text()
    found = re.search(re.escape(markers[0]) + r".*?" + re.escape(markers[1]), text, re.S)
    assert found, f"{path} lacks the cost figures' markers ({markers[0]} ... {markers[1]})"
    if os.environ.get(UPDATE_DOCS) == "1":
        path.write_text(text[:found.start()] + figures(dt.date.today()) + text[found.end():])
        return
    stated = STATED.search(found.group(0)) or re.search(r"on (\d{4}-\d{2}-\d{2})", found.group(0))
    assert stated, f"{path}: the cost figures state no day; rerun tests/cost/test_cost_page.py with {UPDATE_DOCS}=1"
    assert found.group(0) == figures(dt.date.fromisoformat(stated.group(1))), (
        f"{path}: the cost figures are stale; rerun tests/cost/test_cost_page.py with {UPDATE_DOCS}=1")


def test_docs_cost_md_is_computed_from_the_plan(enterprise_spec):
    plan = build_plan(enterprise_spec)
    _written(DOC, DOC_MARKERS, lambda day: doc_figures(plan, day))


def test_the_readme_cost_sentence_is_computed_from_the_plan(enterprise_spec):
    plan = build_plan(enterprise_spec)
    _written(README, README_MARKERS, lambda day: readme_figures(plan, day))


def test_a_stale_figure_fails(enterprise_spec, tmp_path, monkeypatch):
    monkeypatch.delenv(UPDATE_DOCS, raising=False)
    plan = build_plan(enterprise_spec)
    page = tmp_path / "cost.md"
    page.write_text("x\n" + doc_figures(plan, dt.date(2026, 12, 7)).replace("USD 734.90", "USD 340.00") + "\n")
    with pytest.raises(AssertionError, match="stale"):
        _written(page, DOC_MARKERS, lambda day: doc_figures(plan, day))
    page.write_text("x\n" + doc_figures(plan, dt.date(2026, 12, 7)) + "\n")
    _written(page, DOC_MARKERS, lambda day: doc_figures(plan, day))
