"""Packs built once per session: enterprise alone; startup with its trace and a usage report; a startup change
(more quota and borrowing for ml-engineering, less for researchers) against the example as the base."""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
from pathlib import Path

import pytest
import yaml

from hyperpod_gov.review_pack.cli import configure_parser, run
from tests.conftest import EXAMPLES, TODAY

TRACE = EXAMPLES / "startup-trace.csv"


def pack_args(spec: Path, out: Path, *extra: str) -> argparse.Namespace:
    return configure_parser(argparse.ArgumentParser()).parse_args(
        [str(spec), "--out", str(out), "--today", TODAY.isoformat(), *extra])


def startup_change(folder: Path) -> Path:
    """The startup example with ml-engineering at 8 GPUs borrowing up to 100%, researchers at 3."""
    data = yaml.safe_load((EXAMPLES / "startup.yaml").read_text())
    changed = copy.deepcopy(data)
    for team in changed["teams"]:
        if team["name"] == "ml-engineering":
            team["quota"][0]["count"] = 8
            team["sharing"]["borrowLimitPercent"] = 100
        if team["name"] == "researchers":
            team["quota"][0]["count"] = 3
    path = folder / "startup-change.yaml"
    path.write_text(yaml.safe_dump(changed, sort_keys=False))
    return path


def chatbot_change(folder: Path) -> Path:
    """Issue 58's case: the chatbot team (DontLend) at 3 GPUs instead of 4; the trace's c1 (4 GPUs) is its only
    serving job."""
    data = yaml.safe_load((EXAMPLES / "startup.yaml").read_text())
    for team in data["teams"]:
        if team["name"] == "chatbot":
            team["quota"][0]["count"] = 3
    path = folder / "chatbot-change.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture(scope="session")
def report_json(tmp_path_factory) -> Path:
    """What `hyperpod-gov report examples/startup.yaml --format json` writes, CloudWatch answered by a Stubber."""
    from hyperpod_gov.report.cli import configure_parser as configure_report
    from hyperpod_gov.report.cli import run as run_report
    from tests.report import recorded
    from tests.report.recorded import NOW
    from tests.report.test_report import _results, startup_values

    results, searches = _results(EXAMPLES / "startup.yaml", startup_values)
    client, stubber = recorded.client()
    from tests.report.test_report import _plan

    for queries, pages in zip(recorded.expected_calls(_plan(EXAMPLES / "startup.yaml")), ([results], [searches])):
        recorded.stub_pages(stubber, queries, pages)
    path = tmp_path_factory.mktemp("report") / "startup-report.json"
    args = configure_report(argparse.ArgumentParser()).parse_args([str(EXAMPLES / "startup.yaml"), "--format", "json"])
    buf = io.StringIO()
    with stubber, contextlib.redirect_stdout(buf):
        assert run_report(args, client=client, now=NOW, today=TODAY) == 0
    path.write_text(buf.getvalue())
    return path


@pytest.fixture(scope="session")
def packs(tmp_path_factory, report_json) -> dict[str, Path]:
    """Example name -> folder of its pack."""
    root = tmp_path_factory.mktemp("packs")
    change = startup_change(root)
    cases = {
        "enterprise": (EXAMPLES / "enterprise.yaml",),
        "startup": (EXAMPLES / "startup.yaml", "--trace", str(TRACE), "--report", str(report_json)),
        "startup-change": (change, "--base", str(EXAMPLES / "startup.yaml"), "--trace", str(TRACE),
                           "--report", str(report_json)),
    }
    out = {}
    for name, (spec, *extra) in cases.items():
        folder = root / name
        assert run(pack_args(Path(spec), folder, *extra)) == 0
        out[name] = folder
    out["change-spec"] = change
    return out
