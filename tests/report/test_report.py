"""`hyperpod-gov report` without AWS: botocore's Stubber answers GetMetricData with recorded-shape responses."""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
from pathlib import Path
from typing import Callable, Optional

import pytest
import yaml

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.monitoring import monitoring_plan
from hyperpod_gov.report import apply_patch
from hyperpod_gov.report.cli import configure_parser, run
from hyperpod_gov.report.metrics import Query, queries
from hyperpod_gov.report.proposals import PatchOp, Proposal, check
from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, EXAMPLES, TODAY
from tests.report import recorded
from tests.report.recorded import END, HOURS, NOW, result
from tests.synth_helpers import minimal_app

Values = Callable[[Query], list[tuple[str, Callable[[dt.datetime], Optional[float]]]]]


def _day(h: dt.datetime) -> int:
    return (h - HOURS[0]).days


def _args(spec: Path, *extra: str) -> argparse.Namespace:
    return configure_parser(argparse.ArgumentParser()).parse_args([str(spec), *extra])


def _results(spec_path: Path, values: Values) -> list[list[dict]]:
    """Results for the two calls the report makes: metric queries first, then the SEARCH queries."""
    spec = parse_spec(yaml.safe_load(spec_path.read_text()), today=TODAY)
    plain, searches = [], []
    for q in queries(monitoring_plan(build_plan(spec))):
        for series_label, hourly in values(q):
            ("Expression" in q.body and searches or plain).append(result(q.id, series_label or q.id, hourly))
    return [plain, searches]


def _plan(spec_path: Path):
    return build_plan(parse_spec(yaml.safe_load(spec_path.read_text()), today=TODAY))


def _run(capsys, spec_path: Path, calls: list[list[list[dict]]], *extra: str) -> tuple[int, str, str]:
    """``calls``: per GetMetricData call, its pages of results; each request must ask for the expected queries."""
    client, stubber = recorded.client()
    for queries_of_call, pages in zip(recorded.expected_calls(_plan(spec_path)), calls):
        recorded.stub_pages(stubber, queries_of_call, pages)
    with stubber:
        code = run(_args(spec_path, *extra), client=client, now=NOW, today=TODAY)
        stubber.assert_no_pending_responses()
    out = capsys.readouterr()
    return code, out.out, out.err


# --- the startup example: a hoarding DontLend team, a team waiting at its quota, a team with gaps ---------------


def _busy(h: dt.datetime) -> bool:
    return _day(h) % 3 != 0 and 10 <= h.hour < 15


def startup_values(q: Query):
    if q.team == "chatbot":
        return {"usage-avg": [("", lambda h: 0.5)], "usage-max": [("", lambda h: 1)],
                "pending": [("", lambda h: 0)], "evictions": [], "utilisation": [("", lambda h: 60)]}[q.what]
    if q.team == "ml-engineering":  # borrows all it may (3) and still waits 10:00-15:00 on 20 of 30 days
        return {"usage-avg": [("", lambda h: 9 if _busy(h) else 4)],
                "usage-max": [("", lambda h: 9 if _busy(h) else 5)],
                "pending": [("", lambda h: 2 if _busy(h) else 0)], "evictions": [],
                "utilisation": [("", lambda h: 80)]}[q.what]
    # researchers: no data in the last day (agent down), two hours waiting below quota, some evictions,
    # no utilisation data at all
    def up(h):
        return h < END - dt.timedelta(days=1)
    first = HOURS[0]
    return {"usage-avg": [("", lambda h: 2 if up(h) else None)], "usage-max": [("", lambda h: 3 if up(h) else None)],
            "pending": [("", lambda h: (1 if _day(h) == 5 and h.hour in (3, 4) else 0) if up(h) else None)],
            "evictions": [("Preempted", lambda h: 2 if h in (first, first + dt.timedelta(hours=30)) else None),
                          ("PodsReadyTimeout", lambda h: 1 if h == first + dt.timedelta(hours=2) else None)],
            "utilisation": []}[q.what]


@pytest.fixture(scope="module")
def startup_pages() -> list[list[list[dict]]]:
    """Two calls; the first has two pages, and ml-engineering's pending series continues on the second."""
    results, searches = _results(EXAMPLES / "startup.yaml", startup_values)
    split = next(i for i, r in enumerate(results) if r["Id"] == "t1_pending")
    pending = results[split]
    half = len(pending["Timestamps"]) // 2
    first = {**pending, "Timestamps": pending["Timestamps"][:half], "Values": pending["Values"][:half],
             "StatusCode": "PartialData"}
    rest = {**pending, "Timestamps": pending["Timestamps"][half:], "Values": pending["Values"][half:]}
    return [[results[:split] + [first], [rest] + results[split + 1:]], [searches]]


def test_report_reads_every_page_and_prints_usage_per_team(capsys, startup_pages):
    code, out, err = _run(capsys, EXAMPLES / "startup.yaml", startup_pages)
    assert code == 0, err
    assert "chatbot: DontLend, fair-share weight 100" in out
    assert "ml.g5.2xlarge: average 0.5 / peak 1 of 4 GPUs (12%); 360 GPU-hours used, 0 borrowed" in out
    # 100 busy hours at 9 (3 borrowed) and 620 at 4: average 4.7
    assert "ml.g5.2xlarge: average 4.7 / peak 9 of 6 GPUs (78%); 3380 GPU-hours used, 300 borrowed" in out
    # both pages of the pending series counted: 5 hours on each of 20 days
    assert "pending while below quota: 0 h; pending at quota: 100 h on 20 of 30 days" in out


def test_missing_data_points_are_reported_not_invented(capsys, startup_pages):
    _, out, _ = _run(capsys, EXAMPLES / "startup.yaml", startup_pages)
    researchers = out.split("researchers:")[1].split("\n\n")[0]
    assert "data for 696 of 720 hours" in researchers
    assert "accelerator utilisation: no data" in researchers
    assert "pending while below quota: 2 h" in researchers
    assert "evictions: PodsReadyTimeout 1, Preempted 4" in researchers


def test_a_dont_lend_team_that_used_a_fraction_of_its_quota_should_lend(capsys, startup_pages):
    _, out, _ = _run(capsys, EXAMPLES / "startup.yaml", startup_pages)
    assert "teams[2] (chatbot).sharing: {strategy: DontLend} -> {strategy: Lend}" in out
    assert "used 12% of it on average over 30 days" in out
    assert "cost to other teams: none: the other teams may borrow its idle capacity" in out


def test_a_team_waiting_at_its_cap_most_days_gets_quota_its_owner_never_used(capsys, startup_pages):
    # Nothing is unallocated and the lenders' idle GPUs were already borrowed: quota moves from chatbot.
    _, out, _ = _run(capsys, EXAMPLES / "startup.yaml", startup_pages)
    assert "teams[0] (ml-engineering).quota[0].count: 6 -> 8" in out
    assert "teams[2] (chatbot).quota[0].count: 4 -> 2" in out
    assert "ml-engineering had work waiting while using all of its 6 GPUs on ml.g5.2xlarge on 20 of 30 days" in out
    assert "cost to other teams: chatbot owns 2 GPUs fewer on ml.g5.2xlarge (4 -> 2)" in out
    assert "its peak so far (1) still fits, beyond it its work waits." in out  # DontLend: it cannot borrow


def test_a_team_waiting_at_its_borrow_limit_while_lenders_idle_may_borrow_more(capsys):
    def values(q: Query):
        if q.team == "researchers" and q.what in ("usage-avg", "usage-max"):
            return [("", lambda h: 0 if _busy(h) else 2)]  # idle while ml-engineering waits
        return startup_values(q)
    code, out, err = _run(capsys, EXAMPLES / "startup.yaml",
                          [[r] for r in _results(EXAMPLES / "startup.yaml", values)])
    assert code == 0, err
    assert "teams[0] (ml-engineering).sharing.borrowLimitPercent: 50 -> 100" in out
    # researchers' 5 idle GPUs minus the 3 ml-engineering already borrowed
    assert "while lenders had 2 GPUs of ml.g5.2xlarge idle on average" in out
    assert "lenders keep their guarantee: when they need their capacity back, borrowed work is preempted" in out


def test_the_json_patch_applies_to_the_spec_and_the_rules_accept_it(capsys, startup_pages):
    code, out, _ = _run(capsys, EXAMPLES / "startup.yaml", startup_pages, "--format", "json")
    assert code == 0
    body = json.loads(out)
    assert [(p["op"], p["path"], p["value"]) for p in body["patch"]] == [
        ("replace", "/teams/2/sharing", {"strategy": "Lend"}),
        ("replace", "/teams/0/quota/0/count", 8),
        ("replace", "/teams/2/quota/0/count", 2),
    ]
    assert all(p["reason"] and p["cost"] for p in body["patch"])
    data = yaml.safe_load((EXAMPLES / "startup.yaml").read_text())
    ops = [PatchOp(p["op"], p["path"], p.get("value")) for p in body["patch"]]
    patched = parse_spec(apply_patch(data, ops), today=TODAY)
    assert patched.teams[2].sharing.strategy == "Lend"
    assert (patched.teams[0].quota[0].count, patched.teams[2].quota[0].count) == (8, 2)
    chatbot = next(t for t in body["teams"] if t["team"] == "chatbot")
    assert chatbot["flavors"][0]["usedHours"] == 360.0


# --- failures --------------------------------------------------------------------------------------------------


def test_access_denied_exits_2_naming_the_call_and_the_permission(capsys):
    client, stubber = recorded.client()
    stubber.add_client_error(
        "get_metric_data", service_error_code="AccessDenied", http_status_code=403,
        service_message="User: arn:aws:sts::444444444444:assumed-role/ReadOnly/me is not authorized to perform: "
                        "cloudwatch:GetMetricData")
    with stubber:
        code = run(_args(EXAMPLES / "startup.yaml"), client=client, now=NOW, today=TODAY)
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("could not read the metrics: cloudwatch:GetMetricData: access denied (AccessDenied:")
    assert "allowed cloudwatch:GetMetricData" in err
    assert "Traceback" not in err


def test_a_forbidden_query_result_exits_2(capsys):
    page = [{"Id": "t0_u0_avg", "Label": "", "Timestamps": [], "Values": [], "StatusCode": "Forbidden",
             "Messages": [{"Code": "Forbidden", "Value": "no access to account 444444444444"}]}]
    code, _, err = _run(capsys, EXAMPLES / "startup.yaml", [[page]])
    assert code == 2 and "query t0_u0_avg returned Forbidden (no access to account 444444444444)" in err


def test_days_out_of_range_is_a_usage_error(capsys):
    assert run(_args(EXAMPLES / "startup.yaml", "--days", "0"), client=object(), now=NOW, today=TODAY) == 1
    assert "--days: is out of range (0); use 1..455" in capsys.readouterr().err


def test_a_team_without_any_data_gets_no_proposal(capsys):
    code, out, _ = _run(capsys, EXAMPLES / "startup.yaml", [[[]], [[]]])
    assert code == 0
    assert out.count("no data: no Kueue usage metric for its queue") == 3
    assert "No change to propose." in out


# --- other proposals, on small specs ---------------------------------------------------------------------------


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _waiting_team_a(q: Query):
    if q.team == "team-a":  # waits at its quota all day on 20 of 30 days
        return {"usage-avg": [("", lambda h: 8)], "usage-max": [("", lambda h: 8)],
                "pending": [("", lambda h: 1 if _day(h) % 3 else 0)], "evictions": [],
                "utilisation": [("", lambda h: 90)]}[q.what]
    if q.team == "team-c":
        return {"usage-avg": [("", lambda h: 2)], "usage-max": [("", lambda h: 3)], "pending": [("", lambda h: 0)],
                "evictions": [], "utilisation": [("", lambda h: 50)]}[q.what]
    return {"usage-avg": [("", lambda h: 1)], "usage-max": [("", lambda h: 2)], "pending": [("", lambda h: 0)],
            "evictions": [], "utilisation": [("", lambda h: 50)]}.get(q.what, [])


def test_quota_moves_from_a_team_that_never_used_it_when_nothing_is_unallocated(capsys, tmp_path):
    data = copy.deepcopy(BASE)
    data["teams"].append({"name": "team-c", "quota": [{"instanceType": "ml.p5.48xlarge", "accelerators": 8}],
                          "sharing": {"strategy": "DontLend"}})
    path = _write(tmp_path, data)
    code, out, err = _run(capsys, path, [[r] for r in _results(path, _waiting_team_a)])
    assert code == 0, err
    assert "teams[0] (team-a).quota[0].accelerators: 8 -> 10" in out
    assert "teams[2] (team-c).quota[0].accelerators: 8 -> 6" in out
    assert "team-c never used more than 3 of its 8 GPUs" in out
    assert "cost to other teams: team-c owns 2 GPUs fewer on ml.p5.48xlarge (8 -> 6)" in out


def test_unallocated_capacity_goes_to_the_waiting_team_first(capsys, tmp_path):
    data = copy.deepcopy(BASE)
    data["sharedPool"] = {"name": "shared"}
    path = _write(tmp_path, data)
    code, out, err = _run(capsys, path, [[r] for r in _results(path, _waiting_team_a)])
    assert code == 0, err
    assert "teams[0] (team-a).quota[0].accelerators: 8 -> 10" in out
    assert "the shared pool 'shared' holds 2 fewer accelerators to lend" in out


def test_weights_that_never_decided_anything_are_proposed_for_removal(capsys):
    def flat(q: Query):
        return {"usage-avg": [("", lambda h: 10)], "usage-max": [("", lambda h: 10)],
                "pending": [("", lambda h: 0)], "evictions": [], "utilisation": [("", lambda h: 70)]}[q.what]
    spec_path = EXAMPLES / "enterprise.yaml"
    code, out, err = _run(capsys, spec_path, [[r] for r in _results(spec_path, flat)])
    assert code == 0, err
    assert "Hours in which fair sharing had something to decide: 0" in out
    assert "teams[3] (recommendations).fairShareWeight: 75 -> (removed)" in out
    assert "teams[4] (speech).fairShareWeight: 50 -> (removed)" in out
    assert "fair-share weights (recommendations 75, speech 50) decided nothing in 30 days" in out


def test_a_patch_the_capacity_cannot_hold_is_refused_by_the_spec_rules():
    data = copy.deepcopy(BASE)
    too_much = Proposal("team-a", "more-quota", (PatchOp("replace", "/teams/0/quota/0/accelerators", 24, 8),),
                        "test", "test")
    kept, rejected = check(data, [too_much], TODAY)
    assert kept == ()
    assert "quotas on ml.p5.48xlarge add up to 24 accelerators" in rejected[0].problem


def test_queries_are_batched_500_per_call_and_searches_50(capsys, tmp_path):
    data = copy.deepcopy(BASE)
    data["cluster"]["instanceGroups"] = [{"name": "gpu", "instanceType": "ml.g5.2xlarge", "count": 130}]
    data["teams"] = [{"name": f"t{i:03d}", "quota": [{"instanceType": "ml.g5.2xlarge", "count": 1}]}
                     for i in range(130)]
    path = _write(tmp_path, data)
    client, stubber = recorded.client()
    sizes: list[int] = []
    client.meta.events.register("provide-client-params.cloudwatch.GetMetricData",
                                lambda params, **_: sizes.append(len(params["MetricDataQueries"])))
    calls = recorded.expected_calls(_plan(path))
    assert len(calls) == 5
    for queries_of_call in calls:
        recorded.stub_pages(stubber, queries_of_call, [[]])
    with stubber:
        assert run(_args(path), client=client, now=NOW, today=TODAY) == 0
        stubber.assert_no_pending_responses()
    # 130 teams x (2 usage + pending + utilisation) = 520 metric queries, then 130 SEARCHes
    assert sizes == [500, 20, 50, 50, 30]


# --- capacity in the unit each quota is counted in: vCPU on a CPU type, MIG partitions on a partitioned type ----


def _vcpu_and_mig_spec() -> dict:
    """2 x p5 partitioned into mig-1g.10gb (2 x 8 GPUs x 7 = 112 partitions) and 4 x m5.8xlarge (4 x 32 = 128
    vCPU, 4 x 128 = 512 GiB). cpu owns 64 vCPU + 256 GiB, mig 56 partitions, other 1 m5 (32 vCPU) and 28
    partitions: 32 vCPU and 28 partitions belong to no team."""
    data = copy.deepcopy(BASE)
    data["cluster"]["instanceGroups"] = [
        {"name": "gpu", "instanceType": "ml.p5.48xlarge", "count": 2, "mig": {"profile": "mig-1g.10gb"}},
        {"name": "cpu", "instanceType": "ml.m5.8xlarge", "count": 4},
    ]
    data["teams"] = [
        {"name": "cpu", "quota": [{"instanceType": "ml.m5.8xlarge", "vcpu": 64, "memoryGib": 256}]},
        {"name": "mig", "quota": [{"instanceType": "ml.p5.48xlarge",
                                   "partitions": {"profile": "mig-1g.10gb", "count": 56}}]},
        {"name": "other", "quota": [{"instanceType": "ml.m5.8xlarge", "count": 1},
                                    {"instanceType": "ml.p5.48xlarge",
                                     "partitions": {"profile": "mig-1g.10gb", "count": 28}}]},
    ]
    return data


def _waiting_cpu_and_mig(q: Query):
    at_quota = {"cpu": 64, "mig": 56}.get(q.team)
    if at_quota is not None:  # uses all its quota and waits for more on 20 of 30 days
        return {"usage-avg": [("", lambda h: at_quota)], "usage-max": [("", lambda h: at_quota)],
                "pending": [("", lambda h: 1 if _day(h) % 3 else 0)], "evictions": [],
                "utilisation": [("", lambda h: 90)]}[q.what]
    return {"usage-avg": [("", lambda h: 10)], "usage-max": [("", lambda h: 12)], "pending": [("", lambda h: 0)],
            "evictions": [], "utilisation": [("", lambda h: 50)]}[q.what]


def test_unallocated_capacity_is_counted_in_vcpu_and_in_mig_partitions_from_the_plan(tmp_path):
    from hyperpod_gov.report.proposals import unallocated

    plan = _plan(_write(tmp_path, _vcpu_and_mig_spec()))
    assert unallocated(plan, "ml.m5.8xlarge") == 128 - 64 - 32
    assert unallocated(plan, "ml.p5.48xlarge") == 112 - 56 - 28


def test_a_team_waiting_at_a_vcpu_or_mig_quota_gets_what_no_team_owns(capsys, tmp_path):
    path = _write(tmp_path, _vcpu_and_mig_spec())
    code, out, err = _run(capsys, path, [[r] for r in _results(path, _waiting_cpu_and_mig)], "--format", "json")
    assert code == 0, err
    patch = {p["path"]: p["value"] for p in json.loads(out)["patch"]}
    # a quarter more: 64 + 16 vCPU, with memory pro rata (16 vCPU x 128 GiB / 32 vCPU = 64 GiB); 56 + 14 partitions
    assert patch == {"/teams/0/quota/0/vcpu": 80, "/teams/0/quota/0/memoryGib": 320,
                     "/teams/1/quota/0/partitions/count": 70}
    _, text, _ = _run(capsys, path, [[r] for r in _results(path, _waiting_cpu_and_mig)])
    assert "32 vCPUs of ml.m5.8xlarge belong to no team." in text
    assert "the 16 vCPU were unallocated." in text
    assert "28 mig-1g.10gb partitions of ml.p5.48xlarge belong to no team." in text
    assert "the 14 mig-1g.10gb partitions were unallocated." in text


def test_the_usage_metric_of_the_dashboards_is_the_one_the_report_reads(startup_spec):
    """Both sides against the agent's metric name: the test fails if the dashboards or the report change alone."""
    import aws_cdk as cdk

    from hyperpod_gov.constructs.monitoring import TeamDashboard

    plan = build_plan(startup_spec)
    watch = plan.monitoring.teams[0]
    stack = cdk.Stack(minimal_app(analytics_reporting=False), "dashboards",
                      env=cdk.Environment(account="444444444444", region="us-east-1"))
    TeamDashboard(stack, "Team", watch=watch, region=plan.region)
    (dashboard,) = cdk.assertions.Template.from_stack(stack).find_resources("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    usage = [q.body["MetricStat"]["Metric"] for q in queries(plan.monitoring) if q.what == "usage-avg"
             and q.team == watch.team]
    assert usage and {m["MetricName"] for m in usage} == {recorded.USAGE_METRIC}
    assert all([d["Name"] for d in m["Dimensions"]] == ["ClusterName", "ClusterQueue", "Flavor", "Resource"]
               for m in usage)
    assert f'\\"{recorded.USAGE_METRIC}\\"' in body
    for m in usage:  # the dashboard graphs each stream the report reads, dimension values in the agent's order
        values = [d["Value"] for d in m["Dimensions"]]
        assert '\\",\\"'.join([m["MetricName"], *[x for d in m["Dimensions"] for x in (d["Name"], d["Value"])]]) \
            in body, values
