"""The review page of a fleet: per team its allocation per cluster and in total (a table, and a bar per instance type
stacked by cluster), old beside new with a base fleet, then each member's capacity charts under its own heading."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Optional

from ..plan.amounts import Amounts
from ..plan.fleet import FleetPlan, TeamAllocation, team_allocations
from . import charts
from .data import capacities
from .page import contract_section, page_html, summary_md, charts_of
from .sections import Figure, Section
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


def member_sections(fleet: FleetPlan, base: Optional[FleetPlan], today: dt.date) -> list[Section]:
    """Each member's capacity charts (old beside new) and contract status, under a heading naming the cluster."""
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
        contracts = contract_section(plan, today)
        contracts.id, contracts.title = f"cluster-{cluster}-contracts", f"{where}: {contracts.title[0].lower()}" \
            f"{contracts.title[1:]}"
        out += [cap, contracts]
    return out


def write_fleet_pack(fleet: FleetPlan, out: Path, *, spec: str, today: dt.date, base: Optional[FleetPlan] = None,
                     base_name: str = "") -> list[Path]:
    """Write OUT/index.html, OUT/summary.md and one SVG per chart of the fleet; return the paths written (sorted)."""
    sections = [fleet_section(fleet, base), *member_sections(fleet, base, today)]
    title = f"Fleet allocation review: {fleet.name}"
    subtitle = " · ".join([f"spec {spec}", *([f"compared with {base_name}"] if base is not None else []),
                           f"clusters {', '.join(fleet.plans)}"])
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for chart in charts_of(sections):
        path = out / f"{chart.slug}.svg"
        path.write_text('<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + chart.svg, encoding="utf-8")
        written.append(path)
    for name, text in (("index.html", page_html(title, subtitle, sections)),
                       ("summary.md", summary_md(title, subtitle, sections))):
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    return sorted(written)


def run_fleet(args, err) -> int:
    """`review-pack FLEET.yaml [--base OLD_FLEET] --out DIR`: 0 when written, 1 for a bad fleet or --out."""
    from ..plan.fleet import build_fleet
    from ..plan.invariants import INVARIANTS
    from ..spec.errors import SpecError, SpecIssue
    from ..spec.fleet import is_fleet_spec, load_fleet
    from ..spec.rules import RULES

    today = args.today or dt.date.today()
    given = [f for f, v in (("--trace", args.trace), ("--capacity", getattr(args, "capacity", None)),
                            ("--report", args.report)) if v]
    try:
        if given:
            raise SpecError([SpecIssue(", ".join(given), "is not available for a fleet spec yet", args.spec,
                                       "leave it out; simulate the fleet with `hyperpod-gov simulate FLEET --trace T`")],
                            args.spec)
        fleet = build_fleet(load_fleet(args.spec, today=today, known=RULES + INVARIANTS))
        base = None
        if args.base:
            if not is_fleet_spec(args.base):
                raise SpecError([SpecIssue("--base", "is not a fleet spec (it lists no clusters)", args.base,
                                           "compare a fleet with the fleet it was")], args.base)
            base = build_fleet(load_fleet(args.base, today=today, known=RULES + INVARIANTS))
        out = Path(args.out)
        try:
            written = write_fleet_pack(fleet, out, spec=Path(args.spec).name, today=today, base=base,
                                       base_name=Path(args.base).name if args.base else "")
        except OSError as exc:
            raise SpecError([SpecIssue("--out", f"cannot be written ({exc.strerror or exc})", str(out),
                                       "give a folder you can write to (it is created if missing)")]) from None
    except SpecError as exc:
        n = len(exc.issues)
        print(f"{exc.source or args.spec}: {n} problem{'s' if n != 1 else ''} in the fleet:", file=err)
        for issue in exc.issues:
            print(f"  - {issue}", file=err)
        return 1
    index = out / "index.html"
    print(f"{index}: {index.stat().st_size} bytes, {len(written) - 2} charts; summary: {out / 'summary.md'}")
    return 0
