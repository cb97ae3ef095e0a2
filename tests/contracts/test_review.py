"""`hyperpod-gov review`: due and overdue contracts, and an exit code a scheduled pipeline can fail on."""

from __future__ import annotations

import argparse
import datetime as dt

import pytest
import yaml

from hyperpod_gov.contracts.review import configure_parser, reviews
from tests.conftest import EXAMPLES
from tests.contracts.helpers import connected, plan_of


def _run(argv, capsys):
    parser = configure_parser(argparse.ArgumentParser(prog="hyperpod-gov review"))
    args = parser.parse_args(argv)
    code = args.func(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def _spec_file(tmp_path, data):
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_states_on_a_given_day():
    found = {r.team: r for r in reviews(plan_of(connected()), today=dt.date(2026, 11, 30), within=30)}
    assert (found["team-b"].status, found["team-b"].days) == ("due", 10)
    assert (found["team-a"].status, found["team-a"].days) == ("current", 212)
    found = {r.team: r for r in reviews(plan_of(connected()), today=dt.date(2026, 12, 11), within=30)}
    assert (found["team-b"].status, found["team-b"].days) == ("overdue", -1)


def test_nothing_overdue_exits_0_and_lists_what_is_due(tmp_path, capsys):
    code, out, _ = _run([_spec_file(tmp_path, connected()), "--today", "2026-11-30"], capsys)
    assert code == 0
    assert "  DUE      team-b: reviewBy 2026-12-10 (in 10 days); business lead@example.com" in out
    assert "team-a" not in out
    assert out.endswith("0 overdue, 1 due within 30 days, 1 current.\n")


def test_an_overdue_contract_exits_1_and_says_what_to_do(tmp_path, capsys):
    code, out, _ = _run([_spec_file(tmp_path, connected()), "--today", "2026-12-12"], capsys)
    assert code == 1
    assert "  OVERDUE  team-b: reviewBy 2026-12-10 (2 days ago)" in out
    assert "renew it (new reviewBy) or mark the team retiring" in out


def test_within_widens_the_window_and_names_the_connection(tmp_path, capsys):
    code, out, _ = _run([_spec_file(tmp_path, connected()), "--today", "2026-11-30", "--within", "365"], capsys)
    assert code == 0
    assert "connects Unified Studio project 5b3jcjsy4ar7zr in domain dzd_4p9n6sw4qt9xgn" in out
    assert out.index("team-b") < out.index("team-a")  # soonest first


def test_a_retiring_team_is_not_due_but_listed(tmp_path, capsys):
    data = connected()
    data["teams"][1]["retiring"] = True
    code, out, _ = _run([_spec_file(tmp_path, data), "--today", "2026-12-12"], capsys)
    assert code == 0
    assert "  RETIRING team-b: access and identities removed; remove the team to revoke the connection" in out


def test_a_team_without_contract_fails_only_in_strict_mode(tmp_path, capsys):
    data = connected()
    del data["teams"][1]["contract"]
    path = _spec_file(tmp_path, data)
    code, out, _ = _run([path, "--today", "2026-11-30"], capsys)
    assert code == 0 and "  NONE     team-b: no contract" in out
    code, _, _ = _run([path, "--today", "2026-11-30", "--strict"], capsys)
    assert code == 1


def test_an_invalid_spec_exits_1_with_every_problem(tmp_path, capsys):
    data = connected()
    data["teams"][0]["contract"]["unifiedStudio"]["domainId"] = "nope"
    code, out, err = _run([_spec_file(tmp_path, data)], capsys)
    assert code == 1 and out == ""
    assert "teams[0].contract.unifiedStudio.domainId: is not a Unified Studio domain id" in err


@pytest.mark.parametrize("argv", [["--within", "-1"], ["--within", "soon"], ["--today", "30/11/2026"]])
def test_bad_options_are_usage_errors(argv, capsys):
    parser = configure_parser(argparse.ArgumentParser(prog="hyperpod-gov review"))
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["spec.yaml", *argv])
    assert exc.value.code == 2


def test_enterprise_example_on_a_date_with_reviews_due(capsys):
    code, out, _ = _run([str(EXAMPLES / "enterprise.yaml"), "--today", "2027-06-15"], capsys)
    assert code == 0
    assert "0 overdue, 3 due within 30 days, 2 current." in out
    code, out, _ = _run([str(EXAMPLES / "enterprise.yaml"), "--today", "2027-07-01"], capsys)
    assert code == 1 and "3 overdue" in out
