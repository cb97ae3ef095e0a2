"""The three capacity numbers (issue 57): guaranteed, elastic and interruptible per instance type, a flexible group on
a line of its own; and how explain (text and JSON), the contract record and the review page's capacity chart show
them for examples/elastic.yaml. Numbers are checked by hand against the example:

- gpu-base: 6 On-Demand ml.g5.2xlarge, minCount 4 -> 4 guaranteed, 2 elastic;
- gpu-elastic: up to 9 ml.g5.2xlarge, autoscaled -> 9 elastic;
- burst: 8 Spot instances of ml.g5.12xlarge or ml.g6e.12xlarge (4 GPUs each), autoscaled -> 8 interruptible, 32 GPUs.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from hyperpod_gov.contracts import render_records
from hyperpod_gov.explain import explain, explain_json
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.elastic import capacity_lines, guaranteed_by_type, lines_of_type, type_kinds
from hyperpod_gov.review_pack import charts
from hyperpod_gov.review_pack.data import capacities
from hyperpod_gov.spec import load_spec
from hyperpod_gov.spec.elastic import group_capacities
from tests.conftest import EXAMPLES, TODAY
from tests.test_cli_json import check

BURST = "burst (ml.g5.12xlarge|ml.g6e.12xlarge)"


@pytest.fixture(scope="module")
def plan():
    return build_plan(load_spec(EXAMPLES / "elastic.yaml", today=TODAY))


@pytest.fixture(scope="module")
def startup():
    return build_plan(load_spec(EXAMPLES / "startup.yaml", today=TODAY))


def test_each_type_and_each_flexible_group_is_one_line_with_its_three_numbers(plan):
    lines = capacity_lines(plan.instance_groups, plan.catalog)
    got = [(line.label, line.groups, line.guaranteed, line.elastic, line.interruptible, line.accelerators_per_instance)
           for line in lines]
    assert got == [("ml.g5.2xlarge", ("gpu-base", "gpu-elastic"), 4, 11, 0, 1),
                   (BURST, ("burst",), 0, 0, 8, 4)]
    assert [line.in_accelerators for line in lines] == [
        {"guaranteed": 4, "elastic": 11, "interruptible": 0}, {"guaranteed": 0, "elastic": 0, "interruptible": 32}]
    # The flexible group's 8 instances are counted once, not under each of its two types (Cluster.capacity does).
    assert sum(line.most for line in lines) == 15 + 8
    assert sum(plan.capacity().values()) == 15 + 8 + 8


def test_a_type_shows_its_own_line_and_the_flexible_groups_that_can_run_it(plan):
    lines = capacity_lines(plan.instance_groups, plan.catalog)
    assert [line.label for line in lines_of_type(lines, "ml.g6e.12xlarge")] == [BURST]
    assert type_kinds(lines, "ml.g5.2xlarge") == {"guaranteed": 4, "elastic": 11, "interruptible": 0, "flexible": 0}
    assert type_kinds(lines, "ml.g5.12xlarge") == {"guaranteed": 0, "elastic": 0, "interruptible": 8, "flexible": 0}
    for itype, most in plan.capacity().items():  # the kinds add up to the most instances of the type
        assert sum(type_kinds(lines, itype).values()) == most, itype


def test_an_on_demand_flexible_group_is_flexible_capacity_not_a_types_guarantee(plan):
    from dataclasses import replace

    groups = [replace(g, capacity_type="on-demand", autoscaled=False) if g.name == "burst" else g
              for g in plan.instance_groups]
    lines = capacity_lines(groups, plan.catalog)
    assert [(line.label, line.guaranteed) for line in lines if line.flexible] == [(BURST, 8)]
    assert type_kinds(lines, "ml.g5.12xlarge") == {"guaranteed": 0, "elastic": 0, "interruptible": 0, "flexible": 8}
    assert guaranteed_by_type(groups) == {"ml.g5.12xlarge": 0, "ml.g5.2xlarge": 4, "ml.g6e.12xlarge": 0}


def test_the_spec_rules_see_the_plans_groups(plan):
    spec = load_spec(EXAMPLES / "elastic.yaml", today=TODAY)
    seen = group_capacities(spec.cluster)
    assert guaranteed_by_type(seen) == guaranteed_by_type(plan.instance_groups)
    assert [(g.name, g.guaranteed, g.elastic, g.interruptible) for g in seen] == sorted(
        ((g.name, g.guaranteed, g.elastic, g.interruptible) for g in plan.instance_groups),
        key=lambda row: [g.name for g in spec.cluster.instance_groups].index(row[0]))


def test_fixed_groups_are_all_guaranteed(startup):
    lines = capacity_lines(startup.instance_groups, startup.catalog)
    assert [(line.label, line.guaranteed, line.elastic, line.interruptible) for line in lines] == [
        ("ml.g5.2xlarge", 15, 0, 0)]


# --- explain ------------------------------------------------------------------------------------------------------

def test_explain_prints_the_lines(plan):
    text = explain(plan, today=TODAY)
    assert "  ml.g5.2xlarge: 4 guaranteed, 11 elastic, 0 interruptible instances (4, 11, 0 accelerators)" in text
    assert f"  {BURST}: 0 guaranteed, 0 elastic, 8 interruptible instances (0, 0," in text
    assert "32 accelerators)" in text


def test_explain_json_carries_the_lines_and_matches_its_schema(plan, startup):
    doc = check("explain", explain_json(plan))
    assert doc["capacityKinds"] == [
        {"line": "ml.g5.2xlarge", "instanceTypes": ["ml.g5.2xlarge"], "groups": ["gpu-base", "gpu-elastic"],
         "flexible": False, "acceleratorsPerInstance": 1,
         "instances": {"guaranteed": 4, "elastic": 11, "interruptible": 0},
         "accelerators": {"guaranteed": 4, "elastic": 11, "interruptible": 0}},
        {"line": BURST, "instanceTypes": ["ml.g5.12xlarge", "ml.g6e.12xlarge"], "groups": ["burst"],
         "flexible": True, "acceleratorsPerInstance": 4,
         "instances": {"guaranteed": 0, "elastic": 0, "interruptible": 8},
         "accelerators": {"guaranteed": 0, "elastic": 0, "interruptible": 32}}]
    assert check("explain", explain_json(startup))["capacityKinds"][0]["instances"] == {
        "guaranteed": 15, "elastic": 0, "interruptible": 0}


def test_the_schema_refuses_a_document_without_the_lines(plan):
    doc = explain_json(plan)
    del doc["capacityKinds"]
    with pytest.raises(AssertionError, match="capacityKinds"):
        check("explain", doc)


# --- the contract record ------------------------------------------------------------------------------------------

def test_the_contract_record_says_what_stands_behind_each_quota(plan):
    pages = render_records(plan)
    assert ("| ml.g5.2xlarge | 4 accelerators | 4 | 11 | 0 | 0 | within the guaranteed capacity |"
            in pages["chatbot.md"])
    assert ("| ml.g5.2xlarge | 6 accelerators | 4 | 11 | 0 | 0 | 2 beyond the guaranteed capacity, which waits for "
            "a scale-up |" in pages["ml-engineering.md"])
    researchers = pages["researchers.md"]
    assert ("| ml.g5.12xlarge | 16 accelerators | 0 | 0 | 32 | 0 | 16 beyond the guaranteed capacity, which runs "
            "on Spot |" in researchers)
    assert researchers.count("The flexible group burst may run its 8 instances as any of ml.g5.12xlarge, "
                             "ml.g6e.12xlarge") == 1


def test_a_reserved_quota_beyond_the_guarantee_is_named_in_the_record(plan):
    import copy

    import yaml

    from hyperpod_gov.spec import parse_spec

    data = yaml.safe_load((EXAMPLES / "elastic.yaml").read_text())
    chatbot = next(t for t in data["teams"] if t["name"] == "chatbot")
    chatbot["quota"][0]["count"] = 5
    next(t for t in data["teams"] if t["name"] == "ml-engineering")["quota"][0]["count"] = 5
    page = render_records(build_plan(parse_spec(copy.deepcopy(data), today=TODAY)))["chatbot.md"]
    assert ("| ml.g5.2xlarge | 5 accelerators | 4 | 11 | 0 | 0 | 1 beyond the guaranteed capacity, which waits for "
            "a scale-up (a reserved quota: HPG-K009) |" in page)


# --- the review page's capacity chart -----------------------------------------------------------------------------

def _drawn(chart) -> dict[tuple[str, str], float]:
    root = ET.fromstring(chart.svg)
    return {(el.attrib["data-series"], el.attrib["data-key"]): float(el.attrib["data-value"])
            for el in root.iter("{http://www.w3.org/2000/svg}g") if "data-series" in el.attrib}


def test_the_capacity_chart_marks_guaranteed_elastic_and_interruptible(plan):
    by_type = {tc.instance_type: tc for tc in capacities(plan)}
    g5 = by_type["ml.g5.2xlarge"]
    assert g5.kinds == (("guaranteed", 4), ("elastic", 11), ("interruptible", 0), ("flexible", 0))
    chart = charts.capacity_chart(g5, charts.colours([s.team for s in g5.shares]))
    drawn = {k: v for (series, k), v in _drawn(chart).items() if series == "capacity"}
    assert drawn == {"guaranteed": 4, "elastic": 11}
    assert "Of the capacity: 4 guaranteed, 11 elastic, 0 interruptible." in chart.caption
    burst = by_type["ml.g6e.12xlarge"]
    chart = charts.capacity_chart(burst, charts.colours([s.team for s in burst.shares]))
    assert {k: v for (series, k), v in _drawn(chart).items() if series == "capacity"} == {
        "guaranteed": 0, "interruptible": 32}
    assert f"The flexible group {BURST} may run as any of its types, and is counted under each." in chart.caption
    assert sum(n for _, n in burst.kinds) == burst.capacity


def test_the_startup_chart_states_its_capacity_as_guaranteed(startup):
    (tc,) = capacities(startup)
    chart = charts.capacity_chart(tc, charts.colours([s.team for s in tc.shares]))
    assert {k: v for (series, k), v in _drawn(chart).items() if series == "capacity"} == {"guaranteed": 15}
    assert json.dumps(tc.kinds) == json.dumps([["guaranteed", 15], ["elastic", 0], ["interruptible", 0],
                                               ["flexible", 0]])


def test_the_elastic_review_page_shows_each_types_kinds_and_says_what_they_are(tmp_path):
    from hyperpod_gov.review_pack.cli import run
    from tests.review_pack.conftest import pack_args
    from tests.review_pack.pagedoc import numbers, structure

    assert run(pack_args(EXAMPLES / "elastic.yaml", tmp_path)) == 0
    page = structure((tmp_path / "index.html").read_text())
    capacity = next(s for s in page.sections if s["id"] == "capacity")
    assert [c["chart"] for c in capacity["charts"]] == [
        "capacity-ml.g5.12xlarge", "capacity-ml.g5.2xlarge", "capacity-ml.g6e.12xlarge"]
    drawn = numbers(tmp_path / "capacity-ml.g5.2xlarge.svg")
    assert {k: v for (series, k), v in drawn.items() if series == "capacity"} == {"guaranteed": 4, "elastic": 11}
    (kinds,) = capacity["lists"]
    assert kinds["heading"].startswith("What each kind of capacity is")
    assert kinds["items"][0] == "guaranteed: On-Demand instances that stay"
