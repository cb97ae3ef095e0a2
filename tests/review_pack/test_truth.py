"""Issue 58, "a page that tells the truth": a change that harms a team cannot look like an improvement.

Three changes of the startup example, each with a trace:
- chatbot: the chatbot team (DontLend) goes from 4 GPUs to 3 while the trace holds its only serving job, c1 of 4
  GPUs. The new run ends at minute 160 instead of 600 because c1 can never start.
- lenders: ml-engineering goes from 6 GPUs to 2 (borrowing up to 300%) and researchers stop lending: 4 GPUs are
  owned by nobody, and ml-engineering's 6- and 3-GPU jobs can never borrow what they need.
- grow: a new instance type (2 x ml.g5.12xlarge, 8 GPUs) owned by ml-engineering, and a trace row on it: the old
  spec cannot take that row (no such flavor), the new one fits everything, so there must be no alarm.

Each property is a check function returning its problems; each check is shown to find the property broken.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pytest
import yaml

from hyperpod_gov.diff import governance_diff
from hyperpod_gov.plan import build_plan
from hyperpod_gov.review_pack.cli import run
from hyperpod_gov.review_pack.data import capacities
from hyperpod_gov.simulate.spec_level import run_plan, trace_checks
from hyperpod_gov.simulate.trace import load_trace
from hyperpod_gov.spec import load_spec
from tests.conftest import EXAMPLES, TODAY
from tests.review_pack.conftest import TRACE, pack_args
from tests.review_pack.pagedoc import numbers, structure

HEADER = "name,team,priorityClass,instanceType,accelerators,instances,submitMinute,durationMinutes\n"
REASONS = ("over quota", "cannot borrow", "cannot fit any flavor", "not in this spec")


def _team(data: dict, name: str) -> dict:
    return next(t for t in data["teams"] if t["name"] == name)


def _chatbot(data: dict) -> None:
    _team(data, "chatbot")["quota"][0]["count"] = 3


def _lenders(data: dict) -> None:
    ml = _team(data, "ml-engineering")
    ml["quota"][0]["count"] = 2
    ml["sharing"]["borrowLimitPercent"] = 300
    _team(data, "researchers")["sharing"] = {"strategy": "DontLend"}


def _grow(data: dict) -> None:
    data["cluster"]["instanceGroups"].append({"name": "gpu-large", "instanceType": "ml.g5.12xlarge", "count": 2,
                                              "volumeSizeGb": 200})
    _team(data, "ml-engineering")["quota"].append({"instanceType": "ml.g5.12xlarge", "count": 2})


GROW_TRACE = TRACE.read_text() + "big,ml-engineering,training,ml.g5.12xlarge,8,,20,60\n"
CASES = {"chatbot": (_chatbot, None), "lenders": (_lenders, None), "grow": (_grow, GROW_TRACE)}


@dataclass(frozen=True)
class Case:
    name: str
    spec: Path
    trace: Path
    out: Path

    def page(self) -> str:
        return (self.out / "index.html").read_text()

    def summary(self) -> str:
        return (self.out / "summary.md").read_text()


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, Case]:
    root = tmp_path_factory.mktemp("truth")
    out = {}
    for name, (change, trace_text) in CASES.items():
        data = copy.deepcopy(yaml.safe_load((EXAMPLES / "startup.yaml").read_text()))
        change(data)
        spec = root / f"{name}.yaml"
        spec.write_text(yaml.safe_dump(data, sort_keys=False))
        trace = TRACE
        if trace_text is not None:
            trace = root / f"{name}-trace.csv"
            trace.write_text(trace_text)
        folder = root / name
        assert run(pack_args(spec, folder, "--base", str(EXAMPLES / "startup.yaml"), "--trace", str(trace))) == 0
        out[name] = Case(name, spec, trace, folder)
    return out


def _plan(path: Path):
    return build_plan(load_spec(path, today=TODAY))


def _runs(case: Case) -> dict[str, tuple[Any, Any, list]]:
    """'old'/'new' -> (plan, the simulator's raw result, the trace rows), run here, not read from the page."""
    new = _plan(case.spec)
    rows = load_trace(case.trace, **trace_checks(new))
    old = _plan(EXAMPLES / "startup.yaml")
    return {tag: (plan, run_plan(plan, rows)[1], rows) for tag, plan in (("old", old), ("new", new))}


def _section(page: Any, ident: str) -> dict:
    return next(s for s in page.sections if s["id"] == ident)


# --- 1. every workload: admitted (wait to admission) or never admitted (listed, waited to the end of the trace) ---


def check_waits(case: Case, html: Optional[str] = None) -> list[str]:
    """Every workload of the trace, for old and new: admitted ones in the p50/p95 over admitted work, the others
    counted per team and listed with a reason and a wait to the end of the trace shared by both runs."""
    problems = []
    runs = _runs(case)
    end = max(result.end for _p, result, _r in runs.values()) / 60
    page = structure(html or case.page())
    sim = _section(page, "simulation")
    table = {(r[0], r[1]): r for r in sim["tables"][0]["rows"]}
    header = sim["tables"][0]["header"]
    listed = next((lst["items"] for lst in sim["lists"] if lst["heading"].startswith("Never admitted")), None)
    if listed is None:
        return ["the page lists no work never admitted"]
    if f"minute {end:g})" not in next(lst["heading"] for lst in sim["lists"] if lst["heading"].startswith("Never")):
        problems.append(f"the never-admitted list is not measured to the end of the trace, minute {end:g}")
    wait = numbers_from(html, case)
    for tag, (plan, result, rows) in runs.items():
        admitted_at = {w.name: w.first_admitted_at for w in result.workloads}
        for team in sorted({r.team for r in rows}):
            mine = [r for r in rows if r.team == team]
            waits = sorted((admitted_at[r.name] / 60 - r.submit_minute) for r in mine
                           if admitted_at.get(r.name) is not None)
            never = [r for r in mine if admitted_at.get(r.name) is None]
            row = table.get((team, tag))
            if row is None:
                problems.append(f"{tag} {team}: no row in the table")
                continue
            cells = dict(zip(header, row))
            if cells["never admitted"].split(" ")[0] != str(len(never)):
                problems.append(f"{tag} {team}: {cells['never admitted']} never admitted, the run says {len(never)}")
            if cells["admitted"] != str(len(waits)):
                problems.append(f"{tag} {team}: {cells['admitted']} admitted, the run says {len(waits)}")
            p95 = waits[max(1, -(-95 * len(waits) // 100)) - 1] if waits else None
            drawn = wait.get((f"{tag} p95", team))
            if drawn != p95:
                problems.append(f"{tag} {team}: p95 drawn {drawn}, over admitted work it is {p95}")
            if wait.get((f"{tag} p95 never admitted", team), 0) != len(never):
                problems.append(f"{tag} {team}: the wait chart does not show its {len(never)} never admitted")
            for r in never:
                line = next((x for x in listed if x.startswith(f"{tag} spec: {team}: {r.name} (")), None)
                if line is None:
                    problems.append(f"{tag} {team}: {r.name} is never admitted but not listed")
                    continue
                if f"waited {end - r.submit_minute:g} minutes to the end of the trace" not in line:
                    problems.append(f"{tag} {team}: {r.name}'s wait is cut short: {line}")
                if not any(f": {reason}: " in line for reason in REASONS):
                    problems.append(f"{tag} {team}: {r.name} is listed without the simulator's reason: {line}")
    return problems


def numbers_from(html: Optional[str], case: Case) -> dict[tuple[str, str], float]:
    """The wait chart's numbers, from the SVG inlined in ``html`` (default: the file beside the page)."""
    if html is None:
        return numbers(case.out / "trace-wait.svg")
    m = re.search(r'<svg\b[^>]*data-chart="trace-wait".*?</svg>', html, re.S)
    assert m is not None
    path = case.out.parent / f"{case.name}-inline-wait.svg"
    path.write_text(m.group(0))
    return numbers(path)


@pytest.mark.parametrize("name", CASES)
def test_every_workload_is_admitted_or_listed_never_admitted_with_a_wait_to_the_end_of_the_trace(cases, name):
    assert check_waits(cases[name]) == []


def test_chatbot_shows_its_serving_job_never_admitted_not_a_shorter_wait(cases):
    sim = _section(structure(cases["chatbot"].page()), "simulation")
    never = next(lst["items"] for lst in sim["lists"] if lst["heading"].startswith("Never admitted"))
    assert never == ["new spec: chatbot: c1 (4 accelerators of ml.g5.2xlarge, submitted at minute 0, waited 600 "
                     "minutes to the end of the trace): cannot borrow: asks 4 nvidia.com/gpu on ml.g5.2xlarge; its "
                     "quota is 3 and it may borrow nothing (the simulator: insufficient quota for cpu in flavor "
                     "ml.g5.2xlarge, request 32 > maximum capacity 24)"]
    wait = numbers(cases["chatbot"].out / "trace-wait.svg")
    assert ("new p95", "chatbot") not in wait  # nothing admitted: no bar, and no 160-minute wait cut at the run's end
    assert wait[("new p95 never admitted", "chatbot")] == 1


def test_the_wait_check_finds_a_never_admitted_workload_dropped_or_cut_short(cases):
    case = cases["chatbot"]
    html = case.page()
    dropped = re.sub(r"<li>new spec: chatbot: c1 \(.*?</li>", "", html)
    assert "new chatbot: c1 is never admitted but not listed" in check_waits(case, dropped)
    cut = html.replace("waited 600 minutes to the end", "waited 160 minutes to the end")  # the run's own end
    assert any("c1's wait is cut short" in p for p in check_waits(case, cut))
    uncounted = re.sub(r'(<tr><td>chatbot</td><td>new</td><td>1</td><td>0</td>)<td class="never">1</td>',
                       r"\1<td>0</td>", html)
    assert "new chatbot: 0 never admitted, the run says 1" in check_waits(case, uncounted)
    folded = html.replace('data-series="new p95 never admitted"', 'data-series="new p95 hidden"')
    assert "new chatbot: the wait chart does not show its 1 never admitted" in check_waits(case, folded)


# --- 2. work the change leaves unable ever to fit: named in red, before any chart ---------------------------------


def never_fitting(plan: Any, rows: list) -> set[str]:
    """Hand arithmetic, not the simulator's: a row needs more accelerators than its team owns plus what it may
    borrow (its borrowing limit, at most what the other teams lend), or its instance type has no flavor."""
    by_type = {tc.instance_type: tc for tc in capacities(plan)}
    out = set()
    for r in rows:
        tc = by_type.get(r.instance_type)
        if tc is None:
            out.add(r.name)
            continue
        need = r.accelerators if r.accelerators is not None else r.instances * (tc.capacity // tc.instances)
        share = next((s for s in tc.shares if s.team == r.team), None)
        if share is None:
            out.add(r.name)
            continue
        lent = sum(s.lendable for s in tc.shares if s.team != r.team)
        if need > share.nominal + min(share.borrow_limit, lent):
            out.add(r.name)
    return out


def check_alarm(case: Case, html: Optional[str] = None, summary: Optional[str] = None) -> list[str]:
    """The alarm names exactly the work the new spec never fits, in red, before the first chart (page and
    summary.md); no alarm when everything fits."""
    html = html if html is not None else case.page()
    summary = summary if summary is not None else case.summary()
    _plan_new, _result, rows = _runs(case)["new"]
    stuck = never_fitting(_plan_new, rows)
    page = structure(html)
    alarm = next((s for s in page.sections if s["id"] == "alarm"), None)
    first_chart = html.find("<figure")
    if not stuck:
        return ["an alarm with nothing to say"] if alarm is not None or "[!CAUTION]" in summary else []
    problems = []
    if alarm is None:
        return [f"no alarm for {sorted(stuck)}"]
    named = {re.match(r"[^:]+: (\S+) \(", item)[1] for item in alarm["lists"][0]["items"]}
    if named != stuck:
        problems.append(f"the alarm names {sorted(named)}, the work that never fits is {sorted(stuck)}")
    if not 0 <= html.find('<section id="alarm" class="alarm"') < first_chart:
        problems.append("the alarm is not before the first chart")
    if not re.search(r"\.alarm\{[^}]*color:#b71c1c", html):
        problems.append("the alarm is not red")
    caution, image = summary.find("> [!CAUTION]"), summary.find("![")
    if caution < 0 or not caution < image:
        problems.append("summary.md has no red alert before its first chart")
    for name in stuck:
        if name not in summary[:image]:
            problems.append(f"summary.md's alert does not name {name}")
    return problems


@pytest.mark.parametrize("name", CASES)
def test_work_a_change_leaves_unable_ever_to_fit_is_named_in_red_before_any_chart(cases, name):
    assert check_alarm(cases[name]) == []


def test_the_three_cases_are_what_they_claim(cases):
    expected = {"chatbot": {"c1"}, "lenders": {"t1", "t2"}, "grow": set()}
    for name, case in cases.items():
        plan, _result, rows = _runs(case)["new"]
        assert never_fitting(plan, rows) == expected[name], name
    old_plan, _r, rows = _runs(cases["grow"])["old"]
    assert never_fitting(old_plan, rows) == {"big"}  # the old spec has no ml.g5.12xlarge: never dropped, listed
    listed = _section(structure(cases["grow"].page()), "simulation")["lists"][0]["items"]
    assert any(x.startswith("old spec: ml-engineering: big (") and ": cannot fit any flavor: instance type "
               "ml.g5.12xlarge is not in this cluster" in x for x in listed)
    alarm = _section(structure(cases["lenders"].page()), "alarm")["lists"][0]["items"]
    assert all(": cannot borrow: " in a and "the other teams lend it 0 at most" in a for a in alarm), alarm


def test_the_alarm_check_finds_an_alarm_missing_late_or_not_red(cases):
    case = cases["chatbot"]
    html, summary = case.page(), case.summary()
    m = re.search(r'<section id="alarm".*?</section>\n', html, re.S)
    assert m is not None
    without = html.replace(m.group(0), "")
    assert check_alarm(case, without) == ["no alarm for ['c1']"]
    late = without.replace("</body>", m.group(0) + "</body>")
    assert check_alarm(case, late) == ["the alarm is not before the first chart"]
    grey = html.replace(".alarm{border:2px solid #b71c1c;background:#ffebee;color:#b71c1c",
                        ".alarm{border:2px solid #b71c1c;background:#ffebee;color:#212121")
    assert check_alarm(case, grey) == ["the alarm is not red"]
    no_alert = re.sub(r"> \[!CAUTION\].*?\n\n", "", summary, flags=re.S)
    assert check_alarm(case, html, no_alert) == ["summary.md has no red alert before its first chart",
                                                 "summary.md's alert does not name c1"]
    assert check_alarm(cases["grow"], html) == ["an alarm with nothing to say"]


# --- 3. one time axis; every chart says what it measures and over which trace ------------------------------------


def check_axes(case: Case, folder: Optional[Path] = None) -> list[str]:
    """Old and new timelines end at the same minute, the end of the trace (the later run's end); every chart of
    the simulation names the trace and its minutes."""
    folder = folder or case.out
    problems = []
    end = max(result.end for _p, result, _r in _runs(case).values()) / 60
    ends = {}
    for prefix in ("old-", ""):
        drawn = numbers(folder / f"{prefix}trace-timeline.svg")
        ends[prefix] = drawn.get(("minute", "end of the trace"))
    if set(ends.values()) != {end}:
        problems.append(f"timelines end at {ends}, the trace at minute {end:g}")
    sim = _section(structure((folder / "index.html").read_text()), "simulation")
    for chart in sim["charts"]:
        if f"trace {case.trace.name} (" not in chart["caption"] or f"minutes 0 to {end:g})" not in chart["caption"]:
            problems.append(f"{chart['chart']} does not say over which trace and minutes it measures")
    return problems


@pytest.mark.parametrize("name", CASES)
def test_old_and_new_timelines_share_one_axis_and_every_chart_names_its_trace(cases, name):
    assert check_axes(cases[name]) == []


def test_the_axis_check_finds_a_timeline_on_its_own_range_or_a_chart_without_its_trace(cases, tmp_path):
    from hyperpod_gov.review_pack import charts
    from hyperpod_gov.review_pack.timeline import usage_by_team

    case = cases["chatbot"]
    for f in case.out.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    plan, result, _rows = _runs(case)["new"]
    own = charts.timeline_chart(usage_by_team(result, [t.name for t in plan.teams]),
                                charts.colours([t.name for t in plan.teams]))  # the run's own end, minute 160
    (tmp_path / "trace-timeline.svg").write_text(own.svg)
    assert check_axes(case, tmp_path) == ["timelines end at {'old-': 600.0, '': 160.0}, the trace at minute 600"]
    page = (tmp_path / "index.html").read_text()
    (tmp_path / "index.html").write_text(page.replace("Accelerator-hours each team ran on quota borrowed from others, "
                                                      "trace ", "Accelerator-hours each team ran on quota borrowed "
                                                      "from others, over "))
    assert "trace-borrowed does not say over which trace and minutes it measures" in check_axes(case, tmp_path)


# --- 4. diff names capacity owned by nobody -----------------------------------------------------------------------


def check_unowned(old: Any, new: Any, lines: list[str]) -> list[str]:
    """Every instance type whose capacity owned by no team and no shared pool changes has a line saying so."""
    problems = []
    before = {tc.instance_type: tc.unowned for tc in capacities(old)}
    for tc in capacities(new):
        a, b = before.get(tc.instance_type, 0), tc.unowned
        if a == b:
            if any(tc.instance_type in x and "unowned" in x for x in lines):
                problems.append(f"{tc.instance_type}: a line about unowned capacity that did not change")
            continue
        want = (f"{b} GPU{'s' if b != 1 else ''} of {tc.instance_type} become" if a == 0 else
                f"unowned capacity of {tc.instance_type}: {a} -> {b}" if b else
                f"the {a} unowned GPU{'s' if a != 1 else ''} of {tc.instance_type} are no longer unowned")
        if not any(x.startswith(want) for x in lines):
            problems.append(f"{tc.instance_type}: no line '{want}...' ({a} -> {b} unowned)")
    return problems


@pytest.mark.parametrize("name,expected", [
    ("chatbot", "1 GPU of ml.g5.2xlarge becomes unowned: no team and no shared pool holds it as quota"),
    ("lenders", "4 GPUs of ml.g5.2xlarge become unowned: no team and no shared pool holds them as quota"),
    ("grow", None),
])
def test_diff_names_capacity_a_change_leaves_owned_by_nobody(cases, name, expected):
    old, new = _plan(EXAMPLES / "startup.yaml"), _plan(cases[name].spec)
    lines = governance_diff(old, new)
    assert check_unowned(old, new, lines) == []
    unowned = [x for x in lines if "unowned" in x]
    assert unowned == ([f"{expected}, so no queue's quota covers {'it' if expected.startswith('1 ') else 'them'}"]
                       if expected else [])
    back = governance_diff(new, old)  # and the way back: owned again
    assert check_unowned(new, old, back) == []
    changes = {lst["heading"]: lst["items"] for lst in _section(structure(cases[name].page()), "changes")["lists"]}
    assert [x for x in changes["Governance changes"] if "unowned" in x] == unowned  # the page shows diff's words


def test_the_unowned_check_finds_the_line_missing(cases):
    old, new = _plan(EXAMPLES / "startup.yaml"), _plan(cases["lenders"].spec)
    lines = [x for x in governance_diff(old, new) if "unowned" not in x]
    assert check_unowned(old, new, lines) == ["ml.g5.2xlarge: no line '4 GPUs of ml.g5.2xlarge become...' "
                                              "(0 -> 4 unowned)"]


def test_diff_trace_says_the_chatbot_job_never_starts_instead_of_a_shorter_wait(cases):
    from hyperpod_gov.simulate.cli import diff_effect

    old, new = _plan(EXAMPLES / "startup.yaml"), _plan(cases["chatbot"].spec)
    lines = diff_effect(old, new, str(TRACE))
    chatbot = next(x for x in lines if x.startswith("team chatbot"))
    assert chatbot.startswith("team chatbot: p95 wait over admitted work goes from 0 to - minutes; never admitted "
                              "within the trace 0 -> 1 (c1: cannot borrow)") and "160" not in chatbot  # the run's end
