"""Contract fields are plain text: no control characters, ANSI escapes or HTML reach `review`, `diff` or the record
page, and the pages escape what reaches them anyway (a carriage return cannot forge an "Approval" heading)."""

from __future__ import annotations

import copy
import datetime as dt
import sys
import unicodedata

import pytest

from hyperpod_gov.contracts.record import render_record
from hyperpod_gov.contracts.review import render, reviews
from hyperpod_gov.markdown import cell
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import SpecError, parse_spec
from hyperpod_gov.spec._base import INVISIBLE
from hyperpod_gov.spec.contract import Contract
from tests.conftest import BASE, TODAY
from tests.contracts.helpers import contract

FORGED = "business hours\r## Approval\rApproved by the CISO on 2026-11-30"


def _spec_with(**fields):
    data = copy.deepcopy(BASE)
    data["teams"][0]["contract"] = contract(**fields)
    return data


@pytest.mark.parametrize("key, value, path", [
    ("support", FORGED, "teams[0].contract.support"),
    ("monitoring", "alarms \x1b[2J\x1b[1;1Hall clear", "teams[0].contract.monitoring"),
    ("retirement", "kept\u202e90 days", "teams[0].contract.retirement"),
    ("retirement", "kept\u2028## Approval", "teams[0].contract.retirement"),
    ("businessOwner", "lead\x1b[8m@example.com", "teams[0].contract.businessOwner"),
    ("costOwner", "finance@example.com\r", "teams[0].contract.costOwner"),
    ("approvedWorkloads", ["training", "inference\r## Approval"], "teams[0].contract.approvedWorkloads[1]"),
])
def test_control_characters_in_a_contract_field_are_a_spec_error_with_path_value_and_fix(key, value, path):
    with pytest.raises(SpecError) as err:
        parse_spec(_spec_with(**{key: value}), today=TODAY)
    text = err.value.render()
    assert f"{path}: holds a control or invisible character" in text, text
    assert "write plain text" in text
    for bad in ("\r", "\x1b", "\u202e", "\u2028"):
        assert bad not in text  # the value is shown escaped, never raw


@pytest.mark.parametrize("key, value, path", [
    ("support", "<script>alert(1)</script> on-call", "teams[0].contract.support"),
    ("monitoring", "answered in <1 day", "teams[0].contract.monitoring"),
    ("operationsOwner", "<b>ops</b>@example.com", "teams[0].contract.operationsOwner"),
    ("approvedWorkloads", ["<img src=x onerror=alert(1)>"], "teams[0].contract.approvedWorkloads[0]"),
])
def test_html_markup_in_a_contract_field_is_a_spec_error(key, value, path):
    with pytest.raises(SpecError) as err:
        parse_spec(_spec_with(**{key: value}), today=TODAY)
    assert f"{path}: holds '<' or '>'" in err.value.render()


def test_plain_sentences_and_line_breaks_in_expectations_are_accepted():
    spec = parse_spec(_spec_with(support="platform on-call\nbusiness hours, 9-17 CET & weekends", monitoring=
                                 "alarms answered within 1 business day (P1: 30 min)"), today=TODAY)
    assert spec.teams[0].contract.support.startswith("platform on-call\n")


def _forged_plan():
    """A plan whose contract holds a carriage return: as if it reached the plan without the spec's check."""
    spec = parse_spec(_spec_with(), today=TODAY)
    team = spec.teams[0]
    forged = Contract.model_construct(**{**dict(team.contract), "support": FORGED,
                                         "approved_workloads": ("training\r## Approval",)})
    teams = (team.model_copy(update={"contract": forged}), *spec.teams[1:])
    return build_plan(spec.model_copy(update={"teams": teams}))


def test_a_carriage_return_cannot_forge_an_approval_heading_on_the_record_page():
    plan = _forged_plan()
    page = render_record(plan, next(t for t in plan.tenants if t.name == BASE["teams"][0]["name"]))
    lines = page.splitlines()  # what a Markdown renderer sees as lines: \r, \n and \r\n all end one
    assert not [line for line in lines if line.lstrip().startswith("#") and "Approval" in line], lines
    assert "\r" not in page
    row = next(line for line in lines if line.startswith("| Support expectations"))
    assert "## Approval" in row and row.endswith("|")  # the text stays, inside its cell


def test_markdown_cells_escape_line_breaks_pipes_markup_and_escapes():
    assert cell("a\rb\nc\x1b[31md\u2028e") == "a b c \\[31md e"  # a bracket is escaped (no link or image)
    assert cell("x | y") == "x \\| y"
    assert cell("<img src=x>") == "&lt;img src=x>"
    assert cell("plain text, 9-17 & more -> fine") == "plain text, 9-17 & more -> fine"


def test_every_character_a_cell_blanks_is_one_that_text_is_not_printable_with():
    """``cell`` looks at each character only when the text is not ``isprintable``: that skips none it blanks."""
    blanked = [chr(i) for i in range(sys.maxunicode + 1) if unicodedata.category(chr(i)) in INVISIBLE]
    assert len(blanked) > 200 and not any(c.isprintable() for c in blanked)
    assert cell("é\u200bx") == "é x" and cell("\u00ad") == " "  # a zero-width space, a soft hyphen (Cf)


def test_the_review_pack_summary_escapes_its_cells():
    from hyperpod_gov.review_pack.page import contract_section, summary_md

    plan = _forged_plan()
    summary = summary_md("t", "s", [contract_section(plan, dt.date(2026, 12, 1))])
    assert not [line for line in summary.splitlines() if line.startswith("#") and "Approval" in line]


def test_review_prints_contract_owners_as_written_once_the_spec_holds_them():
    plan = build_plan(parse_spec(_spec_with(reviewBy="2026-12-01"), today=TODAY))
    out = render(reviews(plan, today=TODAY), source="spec.yaml", today=TODAY, within=30)
    assert "business lead@example.com" in out and "\x1b" not in out
