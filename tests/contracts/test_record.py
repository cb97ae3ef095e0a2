"""The contract record: one page per team with every field a reviewer approves."""

from __future__ import annotations

from hyperpod_gov.contracts import render_records, write_records
from tests.contracts.helpers import PROJECT_ROLE, connected, plan_of


def test_one_page_per_team_and_none_for_the_shared_pool():
    data = connected()
    data["sharedPool"] = {"name": "shared"}
    assert sorted(render_records(plan_of(data))) == ["team-a.md", "team-b.md"]


def test_connected_team_page_holds_the_whole_access_path():
    page = render_records(plan_of(connected()))["team-a.md"]
    for text in (
        "| Business owner | lead@example.com |", "| Cost owner | finance@example.com |",
        "| Owner of exceptions to the scheduling policy | lead@example.com |",
        "| Data classification | internal |", "| Approved workloads | training |", "| Review by | 2027-06-30 |",
        "| Domain | dzd_4p9n6sw4qt9xgn |", "| Domain unit | 3bc7r1dkxeo8hj |", "| Project | 5b3jcjsy4ar7zr |",
        f"| Project role | {PROJECT_ROLE} |", "| Access role (AwsLocation.AccessRole) | _not set_ |",
        "`acme-team-a` (AWS::DataZone::Connection, HyperPodProperties)",
        "account 444444444444, region us-east-1, stack `acme-studio-444444444444-us-east-1`",
        "| HyperPod cluster | ml |", "| Account and region | 111111111111, us-east-1 |",
        "Kubernetes 1.33", "| Namespace | `hyperpod-ns-team-a` (Pod Security: baseline) |",
        "ComputeQuota `team-a-quota`", "| Owns | 8 GPUs (ml.p5.48xlarge) |", "(50%)",
        f"| {PROJECT_ROLE} | Unified Studio project role | `hyperpod-ns-team-a-submitters` |",
        "| arn:aws:iam::111111111111:role/AViewer | viewer | `hyperpod-ns-team-a-viewers` |",
        "arn:aws:iam::222222222222:role/reader", "HTTPS to the VPC", "169.254.170.23/32",
        "| Monitoring expectations | alarms answered within 1 business day |",
        "acme/team-a/quota-not-honoured | ops@example.com |",
        "`hyperpod-gov onboard SPEC team-a`",
    ):
        assert text in page, text


def test_page_says_what_is_missing_instead_of_leaving_it_out():
    data = connected()
    del data["teams"][1]["contract"]
    page = render_records(plan_of(data))["team-b.md"]
    assert "**No contract:**" in page
    assert "| Business owner | _not set_ |" in page
    assert "No Unified Studio project" in page
    assert "Nobody: no principal has an access entry" in page


def test_retiring_team_page_says_so_and_lists_no_access():
    data = connected()
    data["teams"][0]["retiring"] = True
    page = render_records(plan_of(data))["team-a.md"]
    assert "**Status: retiring.**" in page
    assert "| Connection | none while the team is retiring |" in page
    assert "Nobody: no principal" in page and "None: removed while the team is retiring." in page


def test_pipes_in_free_text_do_not_break_the_table():
    data = connected()
    data["teams"][0]["contract"]["support"] = "pager | email"
    assert "| Support expectations | pager \\| email |" in render_records(plan_of(data))["team-a.md"]


def test_write_records_replaces_pages_of_removed_teams(tmp_path):
    (tmp_path / "gone.md").write_text("old")
    (tmp_path / "notes.txt").write_text("kept")
    written = write_records(plan_of(connected()), tmp_path)
    assert [p.name for p in written] == ["team-a.md", "team-b.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "team-a.md", "team-b.md"]


def test_records_are_the_same_on_every_run():
    assert render_records(plan_of(connected())) == render_records(plan_of(connected()))
