"""`simulate ... --format html` and `report ... --format html`: the review pack's part alone, one page on stdout."""

from __future__ import annotations

import argparse
import io

from hyperpod_gov.simulate.cli import configure_parser as configure_simulate
from hyperpod_gov.simulate.cli import run as run_simulate
from tests.conftest import EXAMPLES, TODAY
from tests.review_pack.conftest import TRACE
from tests.review_pack.pagedoc import structure


def _simulate(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    configure_simulate(parser)
    out, err = io.StringIO(), io.StringIO()
    from hyperpod_gov.review_pack.page import simulation_html

    code = run_simulate(parser.parse_args(list(argv)), out=out, err=err, html=simulation_html)
    return code, out.getvalue(), err.getvalue()


def test_simulate_html_is_the_simulation_section_alone():
    code, out, err = _simulate(str(EXAMPLES / "startup.yaml"), "--trace", str(TRACE), "--format", "html")
    assert code == 0, err
    page = structure(out)
    assert [s["id"] for s in page.sections] == ["simulation"]
    assert [c["chart"] for c in page.sections[0]["charts"]] == ["trace-wait", "trace-borrowed", "trace-timeline"]
    assert page.scripts == 0 and "startup-trace.csv (5 workloads)" in out


def test_simulate_html_with_compare_puts_the_first_spec_as_old(packs):
    code, out, err = _simulate(str(EXAMPLES / "startup.yaml"), "--trace", str(TRACE), "--compare",
                               str(packs["change-spec"]), "--format", "html")
    assert code == 0, err
    sections = structure(out).sections
    assert [s["id"] for s in sections] == ["alarm", "simulation"]  # researchers' r1 (5 GPUs) never fits the change
    charts = {c["chart"]: c for c in sections[1]["charts"]}
    assert sorted(charts) == ["old-trace-timeline", "trace-borrowed", "trace-timeline", "trace-wait"]
    assert "researchers, old p95: 85 minutes" in charts["trace-wait"]["desc"]
    # Over admitted work only (r2 at once); r1 is never admitted and said so, not folded into a p95 of 590.
    assert "researchers, new p95: 0 minutes" in charts["trace-wait"]["desc"]
    assert "researchers, new p95 never admitted: 1 workloads" in charts["trace-wait"]["desc"]


def test_simulate_html_of_a_scenario_is_a_usage_error():
    code, out, err = _simulate("--scenario", "whatever.yaml", "--format", "html")
    assert code == 1 and not out and "--format html charts a spec's run" in err


def test_report_html_is_the_usage_section_alone(capsys):
    from hyperpod_gov.report.cli import configure_parser, run
    from tests.report import recorded
    from tests.report.recorded import NOW
    from tests.report.test_report import _results, startup_values

    results, searches = _results(EXAMPLES / "startup.yaml", startup_values)
    client, stubber = recorded.client()
    from tests.report.test_report import _plan

    for queries, pages in zip(recorded.expected_calls(_plan(EXAMPLES / "startup.yaml")), ([results], [searches])):
        recorded.stub_pages(stubber, queries, pages)
    args = configure_parser(argparse.ArgumentParser()).parse_args(
        [str(EXAMPLES / "startup.yaml"), "--format", "html"])
    with stubber:
        assert run(args, client=client, now=NOW, today=TODAY) == 0
    out = capsys.readouterr().out
    page = structure(out)
    assert [s["id"] for s in page.sections] == ["usage"]
    chart = page.sections[0]["charts"][0]
    assert chart["chart"] == "report-usage"
    assert "chatbot on ml.g5.2xlarge, quota: 4 GPUs" in chart["desc"]
    assert "chatbot on ml.g5.2xlarge, peak use: 1 GPUs" in chart["desc"]
    patch = next(lst for lst in page.sections[0]["lists"] if lst["heading"] == "Proposed spec patch")["items"]
    assert any(p.startswith('replace /teams/2/sharing -> {"strategy": "Lend"}') for p in patch)


