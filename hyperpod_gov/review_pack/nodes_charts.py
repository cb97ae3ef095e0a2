"""The charts of a run with a capacity timeline: per team, waits for nodes and evictions by lost nodes; and, over
the usage timeline, the accelerators on the nodes with the node losses, returns and scale-ups as events."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from .charts import NEVER, NEW, OLD, n
from .nodes import ADDED, LOST, READY, NodesRun, TeamNodes
from .svg import Chart, DataIds, Datum, finish, new_figure

LOST_COLOUR, ADDED_COLOUR, READY_COLOUR, NODES_COLOUR = NEVER, "#2E7D32", "#616161", "#212121"
EVICTED = "evicted by lost nodes"


def nodes_wait_chart(new: Mapping[str, TeamNodes], old: Optional[Mapping[str, TeamNodes]] = None, *,
                     trace: str) -> Chart:
    """Per team: p50 and p95 minutes from submission to the first start on nodes (over work that started), the
    minutes evicted work waited to run again (summed), and in red beside, the evictions by lost nodes and the work
    never on nodes within the trace; old beside new."""
    slug = "trace-nodes"
    ids = DataIds(slug)
    teams = sorted(set(new) | set(old or {}))
    runs = [(tag, shade, r) for tag, shade, r in (("old ", ("#C6DBEF", OLD, "#FDD0A2"), old),
                                                  ("new " if old else "", ("#6BAED6", NEW, "#E6550D"), new))
            if r is not None]
    series = [(f"{tag}{what}", colour, r, what) for tag, shade, r in runs
              for what, colour in zip(("p50 to nodes", "p95 to nodes", "rewait after lost nodes"), shade)]
    k = len(series)
    fig, ax = new_figure(7.2, 0.9 + 0.3 * k * max(len(teams), 1))
    height = 0.8 / k
    values = {(name, team): _value(r.get(team), what) for name, _c, r, what in series for team in teams}
    top = max([v for v in values.values() if v is not None] + [1.0])
    for i, team in enumerate(teams):
        base = len(teams) - 1 - i
        for j, (name, colour, r, what) in enumerate(series):
            y = base + 0.4 - height * (j + 0.5)
            v = values[(name, team)]
            if v is None:
                ax.text(0, y, f"  {name}: {'no workloads' if team not in r else 'nothing started'}", va="center",
                        fontsize=7, color="#757575")
            else:
                ax.barh(y, v, height=height * 0.9, color=colour, gid=ids(Datum(name, team, v, "minutes")))
                ax.text(v + top * 0.01, y, f"{name}: {n(v)}", va="center", fontsize=7)
            t = r.get(team)
            if t is None or what != "p95 to nodes":
                continue
            tag = name[:-len(what)]
            notes = [(f"{tag}{EVICTED}", len(t.evictions)), (f"{tag}never on nodes", t.never_started)]
            for dy, (label, count) in zip((height / 2, -height / 2), notes):
                if count:  # in a column of its own at the right, where no bar reaches
                    ax.text(top * 1.3, y + dy, f"{count} {label.removeprefix(tag)}", va="center", fontsize=7,
                            color=NEVER, fontweight="bold", gid=ids(Datum(label, team, count, "workloads")))
    ax.set_yticks(range(len(teams) - 1, -1, -1), teams)
    ax.set_xlim(0, top * 1.75)
    ax.set_xlabel("minutes")
    title = "Waits for nodes and evictions by lost nodes"
    ax.set_title(title, loc="left")
    fig.tight_layout()
    caption = (f"Per team, {trace}: minutes from submission to the first start on nodes, p50 and p95 over work "
               "that started (admission alone runs nothing), and the minutes work evicted by lost nodes waited "
               "to run again, summed" + (", old spec beside new" if old else "") + "; in red beside a team's "
               "bars, its evictions by lost nodes and its work never on nodes within the trace (listed under the "
               "charts): a shorter bar beside evictions is no improvement.")
    return finish(fig, slug=slug, title=title, caption=caption, ids=ids)


def _value(t: Optional[TeamNodes], what: str) -> Optional[float]:
    if t is None:
        return None
    if what == "rewait after lost nodes":
        return round(t.rewait_minutes, 2)
    return t.wait_p50_min if what == "p50 to nodes" else t.wait_p95_min


@dataclass(frozen=True)
class NodesOverlay:
    """What ``charts.timeline_chart`` draws over the usage of a run with a capacity timeline: the accelerators
    on the nodes present (a solid step line), node losses (red) and returns (green) as vertical lines with their
    size, the autoscaler's nodes Ready (grey triangles at the foot) and evictions by lost nodes (red crosses)."""

    run: NodesRun
    end: float
    series: tuple[str, ...] = ("accelerators on nodes", LOST, ADDED, READY, EVICTED)

    def draw(self, ax: Any, ids: DataIds) -> float:
        steps = list(self.run.on_nodes)
        xs = [t for t, _ in steps] + [self.end]
        ys = [v for _, v in steps] + [steps[-1][1]]
        final = steps[-1][1]
        ax.step(xs, ys, where="post", color=NODES_COLOUR, linewidth=1.2, label="accelerators on nodes",
                gid=ids(Datum("accelerators on nodes", "at the end of the run", final, "accelerators")))
        edge = ax.get_xaxis_transform()  # x in minutes, y in the axes' height
        totals: dict[tuple[str, float, str, str], int] = {}
        for e in self.run.events:
            key = (e.kind, e.minute, e.group, e.flavor)
            totals[key] = totals.get(key, 0) + e.nodes
        said = set()
        for (kind, minute, group, flavor), nodes in totals.items():
            where = f"{group} ({flavor}) at minute {n(minute)}"
            label = kind if kind not in said else "_"
            said.add(kind)
            if kind == READY:
                ax.plot([minute], [0.03], marker="^", color=READY_COLOUR, markersize=6, linestyle="none",
                        transform=edge, clip_on=False, label=label, gid=ids(Datum(kind, where, nodes, "nodes")))
                continue
            colour, sign = (LOST_COLOUR, "-") if kind == LOST else (ADDED_COLOUR, "+")
            ax.axvline(minute, color=colour, linestyle="--", linewidth=1.0, label=label,
                       gid=ids(Datum(kind, where, nodes, "nodes")))
            ax.text(minute, 0.97, f" {sign}{nodes} {group}", transform=edge, color=colour, fontsize=7,
                    va="top", ha="left")
        evicted = [e for t in self.run.teams.values() for e in t.evictions]
        for i, e in enumerate(sorted(evicted, key=lambda e: (e.minute, e.workload))):
            ax.plot([e.minute], [0.88 - 0.06 * (i % 4)], marker="x", color=LOST_COLOUR, markersize=6,
                    linestyle="none", transform=edge, label=EVICTED if i == 0 else "_",
                    gid=ids(Datum(EVICTED, f"{e.team}: {e.workload} at minute {n(e.minute)}", e.accelerators,
                                  "accelerators")))
        return float(max(ys))

    def caption(self, label: str, trace: str, shared_axis: bool) -> str:
        return (f"{label}Accelerators each team runs on nodes, stacked, {trace}, under the solid line of the "
                "accelerators on the nodes present: a drop is a finish, a preemption or an eviction by lost nodes "
                "(red cross); red dashed lines are nodes lost, green ones nodes added back, grey triangles the "
                "autoscaler's nodes Ready" + ("; old and new share this time axis." if shared_axis else "."))

