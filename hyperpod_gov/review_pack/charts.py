"""The review pack's charts: each a function of plan parts, simulator figures or a usage report, returning a
``Chart`` (SVG text, caption and the numbers drawn)."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from matplotlib.patches import Patch, Rectangle

from ..simulate.outcomes import TeamWaits
from ..simulate.spec_level import TeamFigures
from .data import TypeCapacity, borrow_cells
from .svg import Chart, DataIds, Datum, finish, new_figure
from .timeline import Usage

# Colour-blind-safe qualitative palette (Okabe-Ito), then a second round; assigned by sorted team name.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
           "#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C")
POOL = "#9E9E9E"
UNOWNED = "#E6E6E6"
CLOSED = "#5A5A5A"
OPEN = "#2E7D32"
OLD, NEW = "#9BB7D4", "#0B4F8A"
# The capacity by kind (plan.elastic): guaranteed solid, elastic light, interruptible (Spot) hatched, flexible dotted.
KIND_STYLE = {"guaranteed": ("#37474F", None, "white"), "elastic": ("#CFD8DC", None, "#263238"),
              "interruptible": ("#FFE0B2", "\\\\", "#4E342E"), "flexible": ("#E1D5F0", "..", "#311B92")}


def colours(teams: Sequence[str]) -> dict[str, str]:
    """One colour per team name, stable for a set of names (old and new spec share it)."""
    return {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(sorted(set(teams)))}


def _n(x: float) -> str:
    r = round(float(x), 2)
    return str(int(r)) if r.is_integer() else f"{r:g}"


n = _n  # a number as the charts write it (the page's tables and lists use the same)
NEVER = "#B71C1C"  # work never admitted: the page's red


def capacity_extent(tc: TypeCapacity) -> int:
    """The widest bar of the type's capacity chart: the capacity, or a team's quota plus borrowing limit."""
    return max([tc.capacity] + [s.nominal + s.borrow_limit for s in tc.shares])


def capacity_chart(tc: TypeCapacity, colour: Mapping[str, str], *, prefix: str = "", label: str = "",
                   extent: Optional[int] = None) -> Chart:
    """Stacked bar of the type's capacity (teams, shared pool, nobody), then one row per team with its quota,
    its borrowing limit on top (hatched) and what it lends. ``extent``: the widest bar to scale for (old and new
    charts of one type share it)."""
    slug = f"{prefix}capacity-{tc.instance_type}"
    ids = DataIds(slug)
    kinds = [(kind, amount) for kind, amount in tc.kinds if amount]
    rows = len(tc.shares) + 1 + bool(tc.kinds)
    legend_rows = 2 if kinds else 1
    height = 1.2 + 0.42 * rows + 0.2 * (legend_rows - 1)
    fig, ax = new_figure(7.2, height)
    y_top = rows - 1
    left = 0
    for s in tc.shares:
        if s.nominal:
            face = POOL if s.is_shared_pool else colour[s.team]
            ax.barh(y_top, s.nominal, left=left, color=face, edgecolor="white",
                    hatch="xx" if s.is_shared_pool else None,
                    gid=ids(Datum("quota", s.team, s.nominal, tc.unit)))
            if s.nominal >= tc.capacity * 0.06:
                ax.text(left + s.nominal / 2, y_top, _n(s.nominal), ha="center", va="center", color="white",
                        fontweight="bold")
            left += s.nominal
    ax.barh(y_top, tc.unowned, left=left, color=UNOWNED, edgecolor="#BDBDBD",
            gid=ids(Datum("nobody owns", tc.instance_type, tc.unowned, tc.unit)))
    if tc.unowned:
        ax.text(left + tc.unowned / 2, y_top, f"{_n(tc.unowned)} unowned", ha="center", va="center", color="#424242")
    labels = [f"capacity {_n(tc.capacity)}"]
    if tc.kinds:
        labels.append(_kinds_row(ax, tc, kinds, y_top - 1, ids))
    for i, s in enumerate(tc.shares):
        y = y_top - 1 - bool(tc.kinds) - i
        face = POOL if s.is_shared_pool else colour[s.team]
        ax.barh(y, s.nominal, color=face, gid=ids(Datum("nominal", s.team, s.nominal, tc.unit)))
        ax.barh(y, s.borrow_limit, left=s.nominal, color="white", edgecolor=face, hatch="///", linewidth=0.8,
                gid=ids(Datum("borrow limit", s.team, s.borrow_limit, tc.unit)))
        ax.barh(y, s.lendable, left=s.nominal - s.lendable, color="white", alpha=0.45, linewidth=0,
                gid=ids(Datum("lendable", s.team, s.lendable, tc.unit)))
        if s.strategy == "DontLend":
            ax.barh(y, s.nominal, color="none", edgecolor="black", linewidth=1.6)
        lends = ("lends nothing (DontLend)" if s.strategy == "DontLend" else "lends nothing" if not s.lendable
                 else "lends all" if s.lends_all else f"lends {_n(s.lendable)}")
        borrows = f"borrows up to {_n(s.borrow_limit)}" if s.borrow_limit else "cannot borrow"
        ax.text(s.nominal + s.borrow_limit + tc.capacity * 0.01, y, f"{lends}; {borrows}", va="center", fontsize=8)
        labels.append(f"{s.team}{' (pool)' if s.is_shared_pool else ''}: {_n(s.nominal)}")
    ax.set_yticks(range(rows - 1, -1, -1), labels)
    ax.axvline(tc.capacity, color="#616161", linestyle="--", linewidth=0.8)
    widest = extent or capacity_extent(tc)
    ax.set_xlim(0, widest * 1.45 if tc.shares else tc.capacity * 1.05 or 1)
    ax.set_xlabel(f"{tc.unit} ({tc.resource}) on {tc.instances} x {tc.instance_type}")
    ax.set_title(f"{label}{tc.instance_type}: {_n(tc.capacity)} {tc.unit}", loc="left")
    handles = [Patch(facecolor="#BDBDBD", label="lighter: lent when idle"),
               Patch(facecolor="#BDBDBD", edgecolor="black", linewidth=1.6, label="kept (DontLend)"),
               Patch(facecolor="white", edgecolor="black", hatch="///", label="borrowing limit"),
               Patch(facecolor=UNOWNED, edgecolor="#BDBDBD", label="nobody owns")]
    if any(s.is_shared_pool for s in tc.shares):
        handles.append(Patch(facecolor=POOL, hatch="xx", label="shared pool"))
    handles += [Patch(facecolor=KIND_STYLE[k][0], hatch=KIND_STYLE[k][1], edgecolor="#616161", label=k)
                for k, _ in kinds]
    fig.legend(handles=handles, loc="lower center", fontsize=7, frameon=False,
               ncol=-(-len(handles) // legend_rows))
    fig.tight_layout(rect=(0, (0.32 + 0.2 * (legend_rows - 1)) / height, 1, 1))
    owners = ", ".join(f"{s.team} {_n(s.nominal)}" for s in tc.shares if s.nominal) or "no team"
    caption = (f"{label}{tc.instance_type}: who owns the {_n(tc.capacity)} {tc.unit} ({owners}, "
               f"{_n(tc.unowned)} unowned), and how far each team may borrow (hatched)."
               + (f" Of the capacity: {kinds_words(tc)}." if tc.kinds else "")
               + "".join(f" The flexible group {g} may run as any of its types, and is counted under each."
                         for g in tc.flexible_groups))
    return finish(fig, slug=slug, title=f"{label}Capacity and quotas on {tc.instance_type}", caption=caption, ids=ids)


def kinds_words(tc: TypeCapacity) -> str:
    """"4 guaranteed, 11 elastic, 0 interruptible" (and flexible where a flexible group can run the type)."""
    return ", ".join(f"{_n(n)} {kind}" + (" (a flexible group's, counted under each of its types)"
                                           if kind == "flexible" else "")
                     for kind, n in tc.kinds if n or kind != "flexible")


def _kinds_row(ax: Any, tc: TypeCapacity, kinds: Sequence[tuple[str, int]], y: float, ids: DataIds) -> str:
    """The capacity by kind, stacked on row ``y`` (guaranteed, elastic, interruptible, flexible); its label."""
    left = 0
    for kind, amount in tc.kinds:
        if not amount and kind != "guaranteed":  # what there is, and the guarantee even when it is none
            continue
        face, hatch, ink = KIND_STYLE[kind]
        ax.barh(y, amount, left=left, color=face, hatch=hatch, edgecolor="white" if hatch is None else "#9E9E9E",
                gid=ids(Datum("capacity", kind, amount, tc.unit)))
        if amount and amount >= tc.capacity * 0.12:
            ax.text(left + amount / 2, y, f"{_n(amount)} {kind}", ha="center", va="center", color=ink, fontsize=7)
        left += amount
    guaranteed = dict(tc.kinds).get("guaranteed", 0)
    return f"guaranteed {_n(guaranteed)}" if len(kinds) != 1 else f"all {kinds[0][0]}"


def borrow_chart(tc: TypeCapacity, *, prefix: str = "", label: str = "") -> Optional[Chart]:
    """Borrowers (rows) by lenders (columns) on one type: green cells say up to how much, a DontLend column is
    dark and marked closed. None when fewer than two teams share the type."""
    if len(tc.shares) < 2:
        return None
    slug = f"{prefix}borrow-{tc.instance_type}"
    ids = DataIds(slug)
    n = len(tc.shares)
    fig, ax = new_figure(max(5.6, 1.9 + 1.15 * n), 1.0 + 0.45 * n)
    index = {s.team: i for i, s in enumerate(tc.shares)}
    strategy = {s.team: s.strategy for s in tc.shares}
    for c in borrow_cells(tc):
        x, y = index[c.lender], n - 1 - index[c.borrower]
        face, text, colour = {"own": ("#F5F5F5", "own", "#757575"), "closed": (CLOSED, "closed", "white"),
                              "cannot-borrow": ("#FAFAFA", "-", "#9E9E9E"),
                              "open": (OPEN, f"up to {_n(c.up_to)}", "white")}[c.state]
        value = c.up_to if c.state == "open" else 0
        own = c.state == "own"  # the diagonal carries no number
        ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=face, edgecolor="white", linewidth=2,
                               gid=None if own else ids(Datum(f"may borrow from {c.lender}", c.borrower, value,
                                                              tc.unit))))
        ax.text(x, y, text, ha="center", va="center", color=colour, fontsize=8)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(-0.5, n - 0.5)
    ax.set_xticks(range(n), [f"{s.team}\n({strategy[s.team]})" for s in tc.shares], fontsize=7)
    ax.set_yticks(range(n - 1, -1, -1), [s.team for s in tc.shares])
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for side in ("left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.set_ylabel("borrower")
    ax.set_xlabel(f"lender ({tc.unit})")
    ax.set_title(f"{label}{tc.instance_type}: who may borrow from whom", loc="left", pad=28)
    fig.tight_layout()
    closed = sorted(s.team for s in tc.shares if s.lendable == 0)
    caption = (f"{label}{tc.instance_type}: where each team (row) may borrow and up to how much; dark columns "
               f"lend nothing ({', '.join(closed) or 'none'}).")
    return finish(fig, slug=slug, title=f"{label}Borrowing on {tc.instance_type}", caption=caption, ids=ids)


def paired_bars(slug: str, title: str, caption: str, teams: Sequence[str],
                 series: Sequence[tuple[str, str, Mapping[str, Optional[float]]]], unit: str, xlabel: str,
                 counts: Sequence[tuple[str, Mapping[str, int]]] = (), missing: str = "no workloads") -> Chart:
    """Horizontal bars per team, one per series (label, colour, values); a missing value is written, not drawn.
    ``counts``: per series label, a count per team written in red after its bar (work never admitted)."""
    ids = DataIds(slug)
    k = len(series)
    fig, ax = new_figure(7.2, 0.8 + 0.32 * k * max(len(teams), 1))
    height = 0.8 / k
    top = max([v for _l, _c, vals in series for v in vals.values() if v is not None] + [1.0])
    noted = dict(counts)
    for i, team in enumerate(teams):
        base = len(teams) - 1 - i
        for j, (name, colour, vals) in enumerate(series):
            y = base + 0.4 - height * (j + 0.5)
            v = vals.get(team)
            count = noted.get(name, {}).get(team, 0)
            if v is None:
                ax.text(0, y, f"  {name}: {missing}", va="center", fontsize=7, color="#757575")
            else:
                ax.barh(y, v, height=height * 0.9, color=colour, gid=ids(Datum(name, team, v, unit)))
                ax.text(v + top * 0.01, y, f"{name}: {_n(v)}", va="center", fontsize=7)
            if count:  # in a column of its own at the right, where no bar reaches
                ax.text(top * 1.3, y, f"{count} never admitted", va="center", fontsize=7, color=NEVER,
                        fontweight="bold", gid=ids(Datum(f"{name} never admitted", team, count, "workloads")))
    ax.set_yticks(range(len(teams) - 1, -1, -1), list(teams))
    ax.set_xlim(0, top * 1.6 if counts else top * 1.35)
    ax.set_xlabel(xlabel)
    ax.set_title(title, loc="left")
    fig.tight_layout()
    return finish(fig, slug=slug, title=title, caption=caption, ids=ids)


def wait_chart(new: Mapping[str, TeamWaits], old: Optional[Mapping[str, TeamWaits]] = None, *,
               trace: str = "the trace") -> Chart:
    """Wait to admission p50 and p95 per team over admitted work (minutes), with the work never admitted written
    beside in red; old beside new when there is an old spec."""
    teams = sorted(set(new) | set(old or {}))
    series: list[tuple[str, str, Mapping[str, Optional[float]]]] = []
    counts: list[tuple[str, Mapping[str, int]]] = []
    for name, waits, shade in (("old", old, ("#C6DBEF", OLD)), ("new" if old else "", new, ("#6BAED6", NEW))):
        if waits is None:
            continue
        tag = f"{name} " if name else ""
        series.append((f"{tag}p50", shade[0], {t: w.wait_p50_min for t, w in waits.items()}))
        series.append((f"{tag}p95", shade[1], {t: w.wait_p95_min for t, w in waits.items()}))
        counts.append((f"{tag}p95", {t: w.never_admitted for t, w in waits.items()}))
    caption = (f"Minutes from submission to first admission per team, p50 and p95 over admitted work only, {trace}"
               + (", old spec beside new" if old else "")
               + "; in red beside a team's bars, its work never admitted within the trace (listed under the "
               "charts): a shorter bar with work never admitted is no improvement.")
    return paired_bars("trace-wait", "Wait to admission (admitted work)", caption, teams, series, "minutes",
                        "minutes to first admission", counts=counts, missing="nothing admitted")


def borrowed_chart(new: Mapping[str, TeamFigures], old: Optional[Mapping[str, TeamFigures]] = None, *,
                   trace: str = "the trace") -> Chart:
    """Borrowed accelerator-hours per team, old beside new."""
    teams = sorted(set(new) | set(old or {}))
    series: list[tuple[str, str, Mapping[str, Optional[float]]]] = []
    if old is not None:
        series.append(("old", OLD, {t: f.borrowed_accelerator_hours for t, f in old.items()}))
    series.append(("new" if old is not None else "borrowed", NEW,
                   {t: f.borrowed_accelerator_hours for t, f in new.items()}))
    caption = (f"Accelerator-hours each team ran on quota borrowed from others, {trace}" +
               (", old spec beside new: who gains and who loses borrowing." if old else "."))
    return paired_bars("trace-borrowed", "Borrowed accelerator-hours", caption, teams, series, "accelerator-hours",
                        "accelerator-hours")


def timeline_chart(usage: Mapping[str, Usage], colour: Mapping[str, str], *, prefix: str = "",
                   label: str = "", capacity: Optional[int] = None, end: Optional[float] = None,
                   trace: str = "the trace", shared_axis: bool = False, nodes: Any = None,
                   capacity_of: str = "the cluster's") -> Chart:
    """Accelerators in use per team over the trace, stacked (step function from the simulator's run), on the
    axis from minute 0 to ``end`` (old and new charts share it; default: the run's own end). ``nodes``: a run with
    a capacity timeline draws its nodes and their events over the stack (``nodes_charts.NodesOverlay``: its
    ``draw(ax, ids)`` returns the highest value it drew, its ``caption(label, trace, shared_axis)`` the caption).
    ``capacity_of``: whose capacity the dashed line is, in the caption (a fleet's: "the workers'")."""
    slug = f"{prefix}trace-timeline"
    ids = DataIds(slug)
    fig, ax = new_figure(7.2, 2.6 if nodes is None else 3.4)
    teams = sorted(usage)
    end = max([u.end_minute for u in usage.values()] + ([end] if end is not None else []), default=0.0)
    times = sorted({t for u in usage.values() for t, _n in u.steps} | {end})
    below = [0.0] * len(times)
    for team in teams:
        u = usage[team]
        level, out, k = 0, [], 0
        for t in times:
            while k < len(u.steps) and u.steps[k][0] <= t:
                level = u.steps[k][1]
                k += 1
            out.append(level)
        top = [b + v for b, v in zip(below, out)]
        ax.fill_between(times, below, top, step="post", color=colour[team], linewidth=0, label=team,
                        gid=ids(Datum("accelerator-hours", team, u.accelerator_hours, "accelerator-hours")))
        ids(Datum("peak accelerators", team, u.peak, "accelerators"))
        below = top
    if capacity is not None:
        ax.axhline(capacity, color="#616161", linestyle="--", linewidth=0.8)
        ax.text(0, capacity, f" capacity {capacity}", va="bottom", fontsize=7, color="#616161")
    ax.axvline(end, color="#616161", linestyle=":", linewidth=0.8,
               gid=ids(Datum("minute", "end of the trace", end, "minutes")))
    ax.set_xlim(0, end or 1)
    top = max([capacity or 0] + below + [1])
    if nodes is not None:
        top = max(top, nodes.draw(ax, ids))
    ax.set_ylim(0, top * 1.15)
    ax.set_xlabel("minute of the trace")
    ax.set_ylabel("accelerators in use")
    ax.set_title(f"{label}Accelerators {'in use' if nodes is None else 'running on nodes'} per team", loc="left")
    if nodes is None:
        ax.legend(loc="upper right", fontsize=7, frameon=False, ncol=min(len(teams), 4) or 1)
    else:  # the node marks join the teams: below the axes, where no line runs
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), fontsize=7, frameon=False, ncol=4)
    fig.tight_layout()
    caption = (f"{label}Accelerators each team holds, stacked, {trace}"
               + (f", under the dashed line of {capacity_of} {capacity}" if capacity is not None else "")
               + ": a drop is a finish or a preemption"
               + ("; old and new share this time axis." if shared_axis else "."))
    if nodes is not None:
        caption = nodes.caption(label, trace, shared_axis)
    return _finish_timeline(fig, slug, f"{label}Usage over the trace", caption, ids,
                            ("accelerator-hours", "minute") + (nodes.series if nodes is not None else ()))


def _finish_timeline(fig: Any, slug: str, title: str, caption: str, ids: DataIds,
                     series: tuple[str, ...] = ("accelerator-hours", "minute")) -> Chart:
    # The peak of each team is described, not a shape of its own: it is read back from the text.
    drawn = DataIds(slug)
    extra = []
    for gid, d in ids.by_id.items():
        if d.series in series:
            drawn.by_id[gid] = d
        else:
            extra.append(d.sentence())
    return finish(fig, slug=slug, title=title, caption=caption, ids=drawn, extra_desc=extra)


def report_chart(teams: Sequence[Mapping[str, Any]], prefix: str = "") -> Optional[Chart]:
    """Quota against measured average and peak usage, one bar group per team and instance type (from the JSON that
    ``hyperpod-gov report --format json`` writes). None when no team owns anything. ``prefix``: of the file name
    (a fleet's page has one per member)."""
    rows = [(t["team"], f) for t in teams for f in t["flavors"]]
    if not rows:
        return None
    slug = f"{prefix}report-usage"
    ids = DataIds(slug)
    fig, ax = new_figure(7.2, 0.8 + 0.55 * len(rows))
    top = max([float(f["nominal"]) + float(f.get("borrowingLimit") or 0) for _t, f in rows]
              + [float(f["peak"] or 0) for _t, f in rows] + [1.0])
    names = []
    for i, (team, f) in enumerate(rows):
        y = len(rows) - 1 - i
        key = f"{team} on {f['instanceType']}"
        unit = f["unit"]
        ax.barh(y, f["nominal"], height=0.7, color="white", edgecolor="#424242",
                gid=ids(Datum("quota", key, f["nominal"], unit)))
        if f["average"] is not None:
            ax.barh(y, f["average"], height=0.4, color=NEW, gid=ids(Datum("average use", key, f["average"], unit)))
        if f["peak"] is not None:
            ax.plot([f["peak"], f["peak"]], [y - 0.35, y + 0.35], color="#D55E00", linewidth=2,
                    gid=ids(Datum("peak use", key, f["peak"], unit)))
        measured = ("no data" if f["average"] is None else
                    f"average {_n(f['average'])}, peak {_n(f['peak'] if f['peak'] is not None else 0)}")
        ax.text(max(float(f["nominal"]), float(f["peak"] or 0)) + top * 0.01, y,
                f"{measured} of {_n(f['nominal'])}", va="center", fontsize=7)
        names.append(f"{team}\n{f['instanceType']}")
    ax.set_yticks(range(len(rows) - 1, -1, -1), names, fontsize=7)
    ax.set_xlim(0, top * 1.45)
    ax.set_xlabel("units of the governed resource (accelerators, partitions or vCPU)")
    ax.set_title("Quota against measured usage", loc="left")
    ax.legend(handles=[Patch(facecolor="white", edgecolor="#424242", label="quota"),
                       Patch(facecolor=NEW, label="average use"), Patch(facecolor="#D55E00", label="peak use")],
              loc="lower right", fontsize=7, frameon=False)
    fig.tight_layout()
    caption = ("Measured usage against quota per team: a short blue bar in a wide frame is idle quota, "
               "an orange tick past the frame is borrowing.")
    return finish(fig, slug=slug, title="Quota against measured usage", caption=caption, ids=ids)
