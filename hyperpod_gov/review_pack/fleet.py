"""The review page of a fleet: per team its allocation per cluster and in total (a table, and a bar per instance type
stacked by cluster), old beside new with a base fleet; with a trace, its run over the fleet's dispatch
(``fleet_simulation``); then each member's capacity charts (and measured usage) under its own heading."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from ..plan.amounts import Amounts
from ..plan.fleet import FleetPlan, TeamAllocation, team_allocations
from . import charts
from .data import capacities
from ..simulate.trace import TraceRow
from .fleet_simulation import fleet_never_fit_alarm, fleet_simulation_section, simulate_fleets
from .page import contract_section, page_html, report_section, write_page
from .sections import Alarm, Figure, Section
from .svg import Chart, DataIds, Datum, finish, new_figure


def _value(amounts: Amounts, kind: Optional[str]) -> tuple[float, str]:
    """The number a bar draws and its unit: partitions, accelerators (of ``kind``), else vCPU."""
    if amounts.partitions:
        return float(sum(n for _r, n in amounts.partitions)), "partitions"
    if kind and amounts.accelerators:
        return float(amounts.accelerators), f"accelerators ({kind})"
    return float(amounts.vcpu), "vCPU"


def _kinds(*fleets: Optional[FleetPlan]) -> dict[str, Optional[str]]:
    return {f.instance_type: f.accelerator_kind for fl in fleets if fl is not None
            for p in fl.plans.values() for f in p.flavors}


def _rows(alloc: Optional[TeamAllocation], kinds: dict[str, Optional[str]]) -> dict[str, dict[str, tuple[float, str]]]:
    """instance type -> cluster -> (value, unit), the clusters in the spec's order."""
    out: dict[str, dict[str, tuple[float, str]]] = {}
    for cluster, owned in alloc.per_cluster if alloc else ():
        for itype, amounts in owned:
            out.setdefault(itype, {})[cluster] = _value(amounts, kinds.get(itype))
    return out


def team_chart(team: str, new: Optional[TeamAllocation], old: Optional[TeamAllocation],
               kinds: dict[str, Optional[str]], colour: dict[str, str]) -> Optional[Chart]:
    """One horizontal bar per instance type the team owns (old above new with a base), stacked by cluster."""
    new_rows, old_rows = _rows(new, kinds), _rows(old, kinds)
    types = sorted(set(new_rows) | set(old_rows))
    if not types:
        return None
    slug = f"fleet-{team}"
    ids = DataIds(slug)
    bars = [(f"old: {t}" if old is not None else t, old_rows.get(t, {})) for t in types if old is not None] + \
        [(f"new: {t}" if old is not None else t, new_rows.get(t, {})) for t in types]
    bars.sort(key=lambda b: b[0].split(": ")[-1])
    fig, ax = new_figure(7.2, 1.3 + 0.42 * len(bars))
    labels, widest = [], 1.0
    for i, (label, per_cluster) in enumerate(bars):
        y = len(bars) - 1 - i
        left = 0.0
        unit = ""
        for cluster, (value, unit) in per_cluster.items():
            if not value:
                continue
            ax.barh(y, value, left=left, color=colour[cluster], edgecolor="white",
                    gid=ids(Datum(cluster, label, value, unit)))
            ax.text(left + value / 2, y, charts.n(value), ha="center", va="center", color="white", fontweight="bold")
            left += value
        ax.text(left, y, f"  {charts.n(left)} {unit}".rstrip(), va="center", fontsize=8)
        widest = max(widest, left)
        labels.append(label)
    ax.set_yticks(range(len(bars) - 1, -1, -1), labels)
    ax.set_xlim(0, widest * 1.45)
    ax.set_xlabel("owned quota, summed over the clusters")
    ax.set_title(f"{team}: allocation per cluster and in total", loc="left")
    clusters = [c for c in colour if any(c in per for _l, per in bars)]
    from matplotlib.patches import Patch

    fig.legend(handles=[Patch(facecolor=colour[c], label=c) for c in clusters], loc="lower center", fontsize=7,
               frameon=False, ncol=max(1, len(clusters)))
    fig.tight_layout(rect=(0, 0.32 / (1.3 + 0.42 * len(bars)), 1, 1))
    on = [c for c, _ in new.per_cluster] if new else []
    parts = []
    for label, per_cluster in bars:
        if per_cluster:
            sums = " + ".join(f"{charts.n(v)} on {c}" for c, (v, _u) in per_cluster.items())
            unit = next(iter(per_cluster.values()))[1]
            parts.append(f"{label}: {sums} = {charts.n(sum(v for v, _u in per_cluster.values()))} {unit}")
    caption = (f"{team} on the clusters {', '.join(on) or '(none)'}: " + "; ".join(parts) + ".")
    return finish(fig, slug=slug, title=f"{team}: allocation per cluster and in total", caption=caption, ids=ids)


def _owned_words(alloc: Optional[TeamAllocation], cluster: Optional[str], itype: str,
                 kinds: dict[str, Optional[str]]) -> str:
    if alloc is None:
        return "-"
    pairs = alloc.total if cluster is None else dict(alloc.per_cluster).get(cluster, ())
    amounts = dict(pairs).get(itype)
    if amounts is None:
        return "-"
    value, unit = _value(amounts, kinds.get(itype))
    return f"{charts.n(value)} {unit}"


def fleet_section(fleet: FleetPlan, base: Optional[FleetPlan] = None) -> Section:
    """Per team its allocation per cluster and in total: one chart per team and one table for all."""
    kinds = _kinds(fleet, base)
    clusters = list(fleet.plans) + [c for c in (base.plans if base else ()) if c not in fleet.plans]
    colour = charts.colours(clusters)
    colour = {c: colour[c] for c in clusters}  # the spec's order, for the legends
    new = {a.team: a for a in team_allocations(fleet)}
    old = {a.team: a for a in team_allocations(base)} if base is not None else {}
    s = Section("fleet", f"Fleet {fleet.name}: each team's allocation per cluster and in total")
    header = ["team", "cluster", "instance type", *(["before", "after"] if base is not None else ["owns"])]
    body = []
    for team in list(new) + [t for t in old if t not in new]:
        chart = team_chart(team, new.get(team), old.get(team) if base is not None else None, kinds, colour)
        if chart is not None:
            s.figures.append(Figure(chart))
        a, b = new.get(team), old.get(team)
        on = [c for c, _ in (a.per_cluster if a else ())] + [c for c, _ in (b.per_cluster if b else ())
                                                              if not a or c not in dict(a.per_cluster)]
        types = sorted({t for x in (a, b) if x for t, _ in x.total})
        for cluster in [*on, None]:
            for itype in types or ["-"]:
                cells = [_owned_words(b, cluster, itype, kinds)] if base is not None else []
                cells.append(_owned_words(a, cluster, itype, kinds))
                if cluster is not None and all(c == "-" for c in cells):
                    continue
                body.append([(team, ""), (cluster or "total", ""), (itype, ""), *((c, "") for c in cells)])
    s.tables.append((header, body))
    d = fleet.fleet.dispatch
    s.lists.append(("Dispatch", [f"Kueue MultiKueue: manager {d.manager}; workers {', '.join(d.workers)}"
                                 if d else "none: each cluster takes the work submitted to it"]))
    return s


def member_sections(fleet: FleetPlan, base: Optional[FleetPlan], today: dt.date,
                    reports: Optional[Mapping[str, Mapping[str, Any]]] = None, report_name: str = "") -> list[Section]:
    """Each member's capacity charts (old beside new), its measured usage (``reports``: cluster -> its report, the
    ``clusters`` of ``report FLEET --format json``) and contract status, under a heading naming the cluster."""
    out = []
    for cluster, plan in fleet.plans.items():
        before = base.plans.get(cluster) if base is not None else None
        team_colour = charts.colours(sorted({t.name for p in (plan, before) if p for t in p.teams}))
        where = f"Cluster {cluster} (account {plan.account}, {plan.region})"
        cap = Section(f"cluster-{cluster}", f"{where}: capacity, quotas and sharing limits per instance type")
        new_types = {tc.instance_type: tc for tc in capacities(plan)}
        old_types = {tc.instance_type: tc for tc in capacities(before)} if before else {}
        for itype in sorted(set(new_types) | set(old_types)):
            extent = max(charts.capacity_extent(t) for t in (old_types.get(itype), new_types.get(itype)) if t)
            for prefix, label, types in ((f"{cluster}-old-", f"{cluster} old: ", old_types),
                                         (f"{cluster}-", f"{cluster} new: " if before else f"{cluster}: ", new_types)):
                tc = types.get(itype)
                if tc is not None:
                    cap.figures.append(Figure(charts.capacity_chart(tc, team_colour, prefix=prefix, label=label,
                                                                    extent=extent), pair=f"{cluster}-{itype}"))
        out.append(cap)
        if reports is not None and cluster in reports:
            usage = report_section(reports[cluster], report_name, prefix=f"{cluster}-")
            usage.id, usage.title = f"cluster-{cluster}-usage", f"{where}: {usage.title[0].lower()}{usage.title[1:]}"
            out.append(usage)
        contracts = contract_section(plan, today)
        contracts.id, contracts.title = f"cluster-{cluster}-contracts", f"{where}: {contracts.title[0].lower()}" \
            f"{contracts.title[1:]}"
        out.append(contracts)
    return out


@dataclass(frozen=True)
class FleetTrace:
    """A trace to run on a fleet's dispatch (and its base's), and the names the page shows."""

    rows: Sequence[TraceRow]
    name: str


def _trace_parts(fleet: FleetPlan, base: Optional[FleetPlan], trace: Optional[FleetTrace]
                 ) -> tuple[list[Section], list[Alarm]]:
    if trace is None:
        return [], []
    new, old = simulate_fleets(fleet, trace.rows, base)
    alarm = fleet_never_fit_alarm(fleet, trace.rows, base, trace.name)
    return [fleet_simulation_section(new, old, trace.name, len(trace.rows))], [alarm] if alarm else []


def write_fleet_pack(fleet: FleetPlan, out: Path, *, spec: str, today: dt.date, base: Optional[FleetPlan] = None,
                     base_name: str = "", trace: Optional[FleetTrace] = None,
                     report: Optional[Mapping[str, Any]] = None, report_name: str = "") -> list[Path]:
    """Write OUT/index.html, OUT/summary.md and one SVG per chart of the fleet; return the paths written (sorted).
    With a trace: its run (old beside new) after the fleet's allocation and before the members, the red alarm for
    work the fleet can never admit at the top. With a fleet usage report: each member's usage under it."""
    simulated, alarms = _trace_parts(fleet, base, trace)
    reports = report.get("clusters") if report is not None else None
    sections = [fleet_section(fleet, base), *simulated, *member_sections(fleet, base, today, reports, report_name)]
    title = f"Fleet allocation review: {fleet.name}"
    subtitle = " · ".join([f"spec {spec}", *([f"compared with {base_name}"] if base is not None else []),
                           f"clusters {', '.join(fleet.plans)}",
                           *([f"trace {trace.name} ({len(trace.rows)} workloads)"] if trace is not None else []),
                           *([f"usage report {report_name}"] if report is not None else [])])
    return write_page(out, title, subtitle, sections, alarms)


def fleet_simulation_html(fleet: FleetPlan, rows: Sequence[TraceRow], base: Optional[FleetPlan] = None, *,
                          spec: str, base_name: str = "", trace: str = "") -> str:
    """The fleet's simulation part alone (``simulate FLEET --trace T [--compare OTHER_FLEET] --format html``):
    ``base`` is the fleet before the change, ``fleet`` the one after; the page names files, not their folders."""
    simulated, alarms = _trace_parts(fleet, base, FleetTrace(rows, Path(trace).name))
    subtitle = f"fleet {Path(spec).name}" + (f" compared with {Path(base_name).name}" if base is not None else "") + \
        f" · trace {Path(trace).name} ({len(rows)} workloads)"
    return page_html(f"Simulated trace: fleet {fleet.name}", subtitle, simulated, alarms)


def run_fleet(args, err) -> int:
    """`review-pack FLEET.yaml [--base OLD_FLEET] [--trace T.csv] [--report FLEET_REPORT.json] --out DIR`: 0 when
    written, 1 for a bad fleet, trace, report or --out (``--capacity`` is refused: the fleet simulation models no
    node groups)."""
    from ..plan.fleet import build_fleet
    from ..plan.invariants import INVARIANTS
    from ..simulate.fleet_cli import NO_DISPATCH, fleet_parts, fleet_trace_checks
    from ..simulate.trace import load_trace
    from ..spec.errors import SpecError, SpecIssue
    from ..spec.fleet import is_fleet_spec, load_fleet
    from ..spec.rules import RULES
    from .report_json import load_fleet_report

    today = args.today or dt.date.today()
    what = "fleet"
    try:
        if getattr(args, "capacity", None) or getattr(args, "scale_up_delay", None) is not None:
            raise SpecError([SpecIssue("--capacity", "is not available for a fleet spec: the fleet simulation does "
                                       "not model node groups or capacity timelines (docs/simulator.md, Fleet)",
                                       args.capacity, "leave it out; run a member's own spec with --capacity")],
                            args.spec)
        fleet = build_fleet(load_fleet(args.spec, today=today, known=RULES + INVARIANTS))
        base = None
        if args.base:
            if not is_fleet_spec(args.base):
                raise SpecError([SpecIssue("--base", "is not a fleet spec (it lists no clusters)", args.base,
                                           "compare a fleet with the fleet it was")], args.base)
            base = build_fleet(load_fleet(args.base, today=today, known=RULES + INVARIANTS))
        trace = None
        if args.trace:
            what = "trace"
            for path, f in ((args.spec, fleet), (args.base, base)):
                if f is not None and f.fleet.dispatch is None:
                    raise SpecError([SpecIssue("--trace", NO_DISPATCH, path, "leave out --trace, or give the fleet a "
                                               "dispatch")], path)
            teams = [q.team for q in fleet_parts(fleet)[1]]
            trace = FleetTrace(load_trace(args.trace, **fleet_trace_checks(fleet, teams)), Path(args.trace).name)
        what = "usage report"
        report = load_fleet_report(args.report, list(fleet.plans)) if args.report else None
        what = "output folder"
        out = Path(args.out)
        try:
            written = write_fleet_pack(fleet, out, spec=Path(args.spec).name, today=today, base=base,
                                       base_name=Path(args.base).name if args.base else "", trace=trace,
                                       report=report, report_name=Path(args.report).name if args.report else "")
        except OSError as exc:
            raise SpecError([SpecIssue("--out", f"cannot be written ({exc.strerror or exc})", str(out),
                                       "give a folder you can write to (it is created if missing)")]) from None
    except SpecError as exc:
        print(exc.render(what, args.spec), file=err)
        return 1
    index = out / "index.html"
    print(f"{index}: {index.stat().st_size} bytes, {len(written) - 2} charts; summary: {out / 'summary.md'}")
    return 0
