"""The review pack: sections of charts and text, written as one self-contained HTML page and a Markdown summary
with the same charts as SVG files beside it."""

from __future__ import annotations

import datetime as dt
import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from ..contracts import events, retirement_notes
from ..contracts.review import team_review
from ..diff import governance_diff
from ..markdown import cell
from ..plan import Plan
from ..plan.elastic import KIND_WORDS
from ..plan.slurm import borrow_qos
from ..simulate.timeline import CapacityTimeline
from ..simulate.trace import TraceRow
from . import charts
from .data import capacities
from .nodes import timeline_words
from .nodes_section import capacity_caution
from .sections import Alarm, Figure, Section
from .simulation import Simulation, never_fit_alarm, simulate_plans, simulation_section
from .svg import Chart

__all__ = ["Alarm", "Figure", "Inputs", "Section", "build_sections", "page_html", "report_html", "simulation_html",
           "summary_md", "write_pack", "write_page"]

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0 auto;max-width:1200px;
padding:1rem 1.5rem;color:#212121;line-height:1.4}
h1{font-size:1.5rem;margin:.2rem 0}
h2{font-size:1.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
.meta{color:#616161;margin:.2rem 0}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:1rem;align-items:start}
figure.chart{margin:.8rem 0;padding:.4rem;border:1px solid #eee;border-radius:4px;background:#fff}
figure.chart figcaption{font-size:.9rem;color:#424242;margin-bottom:.3rem}
figure.chart svg{max-width:100%;height:auto;display:block}
table{border-collapse:collapse;font-size:.85rem;margin:.5rem 0}th,td{border:1px solid #ddd;padding:.25rem .5rem;
text-align:left;vertical-align:top}th{background:#f5f5f5}
td.overdue{color:#b71c1c;font-weight:bold}td.due{color:#e65100}
ul.changes li{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85rem}
.none{color:#757575;font-style:italic}
td.never{color:#b71c1c;font-weight:bold}
.alarm{border:2px solid #b71c1c;background:#ffebee;color:#b71c1c;padding:.6rem 1rem;margin:1rem 0;border-radius:4px}
.alarm h2{color:#b71c1c;border:0;margin:0 0 .3rem 0;font-size:1.1rem}.alarm li{font-weight:bold}
"""


@dataclass(frozen=True)
class Inputs:
    """What a pack is built from. ``spec``/``base`` are the names shown on the page (not paths of this machine)."""

    plan: Plan
    spec: str
    today: dt.date
    base_plan: Optional[Plan] = None
    base: str = ""
    trace: Sequence[TraceRow] = ()
    trace_name: str = ""
    report: Optional[Mapping[str, Any]] = None
    report_name: str = ""
    capacity: Optional[CapacityTimeline] = None  # with ``trace``: run it on the nodes, under this timeline
    capacity_name: str = ""


# --- sections ------------------------------------------------------------------------------------------------------


def _all_team_names(*plans: Optional[Plan]) -> list[str]:
    return sorted({t.name for p in plans if p is not None for t in p.teams})


def allocation_sections(plan: Plan, base_plan: Optional[Plan] = None) -> list[Section]:
    """Capacity per instance type and who may borrow from whom; old beside new with a base plan."""
    colour = charts.colours(_all_team_names(plan, base_plan))
    cap = Section("capacity", "Capacity, quotas and sharing limits per instance type")
    borrow = Section("borrowing", "Who can borrow from whom")
    new_types = {tc.instance_type: tc for tc in capacities(plan)}
    old_types = {tc.instance_type: tc for tc in capacities(base_plan)} if base_plan else {}
    for itype in sorted(set(new_types) | set(old_types)):
        for prefix, label, types in (("old-", "old: ", old_types), ("", "new: " if base_plan else "", new_types)):
            if base_plan is None and prefix:
                continue
            tc = types.get(itype)
            if tc is None:
                continue
            extent = max(charts.capacity_extent(t) for t in (old_types.get(itype), new_types.get(itype)) if t)
            cap.figures.append(Figure(charts.capacity_chart(tc, colour, prefix=prefix, label=label, extent=extent),
                                      pair=itype))
            b = charts.borrow_chart(tc, prefix=prefix, label=label)
            if b is not None:
                borrow.figures.append(Figure(b, pair=itype))
    if not borrow.figures:
        borrow.lists.append(("", ["no instance type is shared by two teams: nobody can borrow"]))
    if any(n for tc in (*new_types.values(), *old_types.values()) for kind, n in tc.kinds if kind != "guaranteed"):
        cap.lists.append(("What each kind of capacity is (the row under the owners' bar)",
                          [f"{kind}: {words}" for kind, words in KIND_WORDS.items()]))
    return [cap, borrow]


def change_section(old: Plan, new: Plan) -> Section:
    """The governance changes in words (``diff``'s text) and the contract reviews they trigger."""
    s = Section("changes", "What the change does")
    s.lists.append(("Governance changes", governance_diff(old, new)))
    s.lists.append(("Contract reviews the change triggers, and retirement",
                    events(old, new) + retirement_notes(old, new)))
    return s


def report_section(report: Mapping[str, Any], name: str = "", prefix: str = "") -> Section:
    """Quota against measured usage per team, and the proposals of the usage report (``prefix``: of the chart's
    file name)."""
    window = f"{report.get('start', '?')} to {report.get('end', '?')}"
    s = Section("usage", f"Measured usage{f' ({name})' if name else ''}, {window}")
    chart = charts.report_chart(report["teams"], prefix)
    if chart is not None:
        s.figures.append(Figure(chart))
    patch = [f"{p.get('op')} {p.get('path')} -> {json.dumps(p['value']) if 'value' in p else '(removed)'}: "
             f"{p.get('reason', '')} (cost to other teams: {p.get('cost', '')})" for p in report.get("patch", [])]
    advice = [f"{a.get('team')}: {a.get('reason', '')} {a.get('cost', '')}".strip() for a in report.get("advice", [])]
    rejected = [f"{r.get('team')} ({r.get('kind')}): the spec rules refuse it: {r.get('problem')}"
                for r in report.get("rejected", [])]
    s.lists.append(("Proposed spec patch", patch))
    s.lists.append(("Advice", advice))
    if rejected:
        s.lists.append(("Not proposed", rejected))
    return s


def contract_section(plan: Plan, today: dt.date) -> Section:
    """Per team: owners, review date (overdue in red), approved workloads, alarms and who receives them."""
    s = Section("contracts", f"Contract status on {today.isoformat()}")
    body = []
    for team in plan.tenants:
        c = team.contract
        r = team_review(team, retiring=plan.contracts.is_retiring(team.name), today=today)
        status = r.status
        review = "-" if c is None else f"{c.review_by.isoformat()} ({status}"
        if r.days is not None and c is not None:
            review += f", {-r.days} days overdue)" if r.days < 0 else f", in {r.days} days)"
        elif c is not None:
            review += ")"
        w = team.monitoring if plan.slurm is None else None  # Slurm: no Kueue metrics, no alarms
        alarms = "; ".join(f"{a.kind} -> {a.owner or 'platform'}" for a in sorted(
            w.alarms, key=lambda a: a.kind)) if w else "-"
        owners = "-" if c is None else (f"business {c.business_owner}, operations {c.operations_owner}, "
                                        f"cost {c.cost_owner}" + (f", exceptions {c.exception_owner}"
                                                                  if c.exception_owner else ""))
        body.append([(team.name, ""), (owners, ""), (review, status if status in ("overdue", "due") else ""),
                     (", ".join(c.approved_workloads) if c and c.approved_workloads else "-", ""),
                     (c.data_classification if c else "-", ""), (alarms, "")])
    s.tables.append((["team", "owners", "review by", "approved workloads", "data", "alarms -> owner"], body))
    return s


def _tres(tres: Sequence[tuple[str, int]]) -> str:
    return ",".join(f"{name}={amount}" for name, amount in tres) or "-"


def slurm_section(plan: Plan) -> Section:
    """A Slurm cluster: each team's account, its guarantee and borrow cap per partition (GrpTRES), its users; each
    partition's groups and, where hyperpod-gov edits partition lines, the accounts and QOS it admits."""
    slurm = plan.slurm
    if slurm is None:
        raise ValueError("slurm_section describes a Slurm cluster")
    s = Section("slurm", "Slurm accounts, QOS and partitions")
    body = []
    for t in slurm.teams:
        for partition in t.partitions or ("-",):
            borrow = t.borrow_limit(partition) if partition != "-" else ()
            body.append([(t.name, ""), (f"{t.account} (Fairshare {t.fairshare})", ""), (partition, ""),
                         (t.sub_account(partition) if partition != "-" and t.limit(partition) else "-", ""),
                         (_tres(t.limit(partition)) if partition != "-" else "-", ""),
                         (f"{t.borrow_account(partition)} / {borrow_qos(t.name, partition)}: {_tres(borrow)}"
                          if borrow else "-", ""),
                         (", ".join(t.users) or "-", "")])
    s.tables.append((["team", "account", "partition", "sub-account", "guaranteed GrpTRES",
                      "borrowing account / QOS: GrpTRES",
                      "users"], body))
    rows = [[(p.name, ""), (", ".join(p.groups), ""), (f"{p.nodes} x {', '.join(p.instance_types)}", ""),
             (", ".join(p.accounts) if slurm.edits_partitions else f"any (configStrategy {slurm.config_strategy})",
              ""), (", ".join(p.qos) if slurm.edits_partitions else "any", "")] for p in slurm.partitions]
    s.tables.append((["partition", "groups", "nodes", "AllowAccounts", "AllowQos"], rows))
    s.lists.append(("QOS", [f"{q.name}: Priority {q.weight}" for q in sorted(slurm.priority_classes,
                                                                               key=lambda q: -q.weight)]
                    + [f"{slurm.standard_qos}: Priority 0, work without a priority class"]))
    return s


def _timeline(inputs: Inputs) -> str:
    return timeline_words(inputs.capacity_name, inputs.capacity) if inputs.capacity is not None else ""


def build_sections(inputs: Inputs, runs: Optional[tuple[Simulation, Optional[Simulation]]] = None) -> list[Section]:
    """Every section the inputs allow, in page order (a Slurm cluster's accounts after the allocation).
    ``runs``: the trace's runs (new, old) when the caller already has them."""
    plan, base = inputs.plan, inputs.base_plan
    sections = allocation_sections(plan, base)
    if plan.slurm is not None:
        sections.append(slurm_section(plan))
    if base is not None:
        sections.append(change_section(base, plan))
    if inputs.trace:
        new, old = runs or simulate_plans(plan, inputs.trace, base, inputs.capacity)
        sections.append(simulation_section(plan, new, base, old, inputs.trace_name, len(inputs.trace),
                                           _timeline(inputs)))
    if inputs.report is not None:
        sections.append(report_section(inputs.report, inputs.report_name))
    sections.append(contract_section(plan, inputs.today))
    return sections


# --- rendering -----------------------------------------------------------------------------------------------------


def _e(text: Any) -> str:
    return html.escape(str(text))


def _figure_html(f: Figure) -> str:
    c = f.chart
    return (f'<figure class="chart" id="fig-{_e(c.slug)}" data-chart="{_e(c.slug)}">\n'
            f"<figcaption>{_e(c.caption)}</figcaption>\n{c.svg}</figure>")


def section_html(s: Section) -> str:
    """One section as HTML (charts inline)."""
    out = [f'<section id="{_e(s.id)}">', f"<h2>{_e(s.title)}</h2>"]
    i = 0
    while i < len(s.figures):
        f = s.figures[i]
        group = [f]
        while f.pair and i + len(group) < len(s.figures) and s.figures[i + len(group)].pair == f.pair:
            group.append(s.figures[i + len(group)])
        if len(group) > 1:
            out.append('<div class="pair">' + "\n".join(_figure_html(g) for g in group) + "</div>")
        else:
            out.append(_figure_html(f))
        i += len(group)
    for heading, items in s.lists:
        if heading:
            out.append(f"<h3>{_e(heading)}</h3>")
        if items:
            out.append('<ul class="changes">' + "".join(f"<li>{_e(x)}</li>" for x in items) + "</ul>")
        else:
            out.append('<p class="none">none</p>')
    for header, rows in s.tables:
        out.append("<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in header) + "</tr></thead><tbody>")
        for row in rows:
            out.append("<tr>" + "".join(f'<td class="{cls}">{_e(v)}</td>' if cls else f"<td>{_e(v)}</td>"
                                        for v, cls in row) + "</tr>")
        out.append("</tbody></table>")
    out.append("</section>")
    return "\n".join(out)


def _subtitle(inputs: Inputs) -> str:
    p = inputs.plan
    scheduler = f"{p.mode} mode" if p.slurm is None else f"Slurm ({p.slurm.config_strategy} slurm.conf)"
    parts = [f"spec {inputs.spec}", f"cluster {p.cluster_name}", scheduler, f"idle compute: {p.idle_compute}"]
    if inputs.base_plan is not None:
        parts.insert(1, f"compared with {inputs.base}")
    if inputs.trace_name:
        parts.append(f"trace {inputs.trace_name} ({len(inputs.trace)} workloads)")
    if inputs.capacity is not None:
        parts.append(_timeline(inputs))
    if inputs.report_name:
        parts.append(f"usage report {inputs.report_name}")
    return " · ".join(parts)


def alarm_html(alarm: Alarm) -> str:
    """The red box at the top of the page, before any chart."""
    return (f'<section id="{_e(alarm.id)}" class="alarm" role="alert">\n<h2>{_e(alarm.headline)}</h2>\n<ul>'
            + "".join(f"<li>{_e(x)}</li>" for x in alarm.items) + "</ul>\n</section>")


def page_html(title: str, subtitle: str, sections: Sequence[Section], alarms: Sequence[Alarm] = ()) -> str:
    """The whole page: no script, no external resource; charts are inline SVG; any alarm first, in red."""
    body = "\n".join([alarm_html(a) for a in alarms] + [section_html(s) for s in sections])
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"<header><h1>{_e(title)}</h1><p class=\"meta\">{_e(subtitle)}</p></header>\n{body}\n</body>\n</html>\n")


def _md_cell(text: str) -> str:
    return cell(text)


def summary_md(title: str, subtitle: str, sections: Sequence[Section], alarms: Sequence[Alarm] = ()) -> str:
    """Markdown for a pull-request comment: any alarm first (a CAUTION alert, which GitHub draws in red), then
    captions and the charts as images beside it, lists and tables short."""
    out = [f"## {title}", "", subtitle, ""]
    for a in alarms:
        out += ["> [!CAUTION]", f"> **{_md_cell(a.headline)}**", ">"] + [f"> - {_md_cell(x)}" for x in a.items] + [""]
    for s in sections:
        out += [f"### {s.title}", ""]
        for f in s.figures:
            out += [f"![{_md_cell(f.chart.title)}]({f.chart.slug}.svg)", f"*{_md_cell(f.chart.caption)}*", ""]
        for heading, items in s.lists:
            if heading:
                out.append(f"**{heading}**")
            out += [f"- {_md_cell(x)}" for x in items] or ["- none"]
            out.append("")
        for header, rows in s.tables:
            out.append("| " + " | ".join(header) + " |")
            out.append("|" + "---|" * len(header))
            for row in rows:
                out.append("| " + " | ".join(
                    f"**{_md_cell(v)}**" if cls == "overdue" else _md_cell(v) for v, cls in row) + " |")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def charts_of(sections: Sequence[Section]) -> list[Chart]:
    return [f.chart for s in sections for f in s.figures]


def write_pack(inputs: Inputs, out: Path) -> list[Path]:
    """Write OUT/index.html, OUT/summary.md and one SVG per chart; return the paths written (sorted)."""
    runs = simulate_plans(inputs.plan, inputs.trace, inputs.base_plan, inputs.capacity) \
        if inputs.trace and inputs.capacity is not None else None
    sections = build_sections(inputs, runs)
    alarm = never_fit_alarm(inputs.plan, inputs.trace, inputs.base_plan, inputs.trace_name) if inputs.trace else None
    alarms = [alarm] if alarm is not None else []
    if runs is not None:
        alarms += _caution(runs, _timeline(inputs))
    return write_page(out, f"Allocation review: {inputs.plan.name}", _subtitle(inputs), sections, alarms)


def write_page(out: Path, title: str, subtitle: str, sections: Sequence[Section], alarms: Sequence[Alarm]
               ) -> list[Path]:
    """OUT/index.html, OUT/summary.md and one SVG per chart of ``sections``; the paths written (sorted)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for chart in charts_of(sections):
        path = out / f"{chart.slug}.svg"
        path.write_text('<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + chart.svg, encoding="utf-8")
        written.append(path)
    for name, text in (("index.html", page_html(title, subtitle, sections, alarms)),
                       ("summary.md", summary_md(title, subtitle, sections, alarms))):
        (out / name).write_text(text, encoding="utf-8")
        written.append(out / name)
    return sorted(written)


def _caution(runs: tuple[Simulation, Optional[Simulation]], timeline: str) -> list[Alarm]:
    new, old = runs
    if new.nodes is None:
        return []
    caution = capacity_caution(new.nodes, old.nodes if old else None, timeline)
    return [caution] if caution is not None else []


def simulation_html(plan: Plan, rows: Sequence[TraceRow], base_plan: Optional[Plan] = None, *, spec: str,
                    base: str = "", trace: str = "", capacity: Optional[CapacityTimeline] = None,
                    capacity_name: str = "") -> str:
    """The simulation part alone (``simulate SPEC --trace T [--compare OTHER] [--capacity TIMELINE] --format
    html``): ``base_plan`` is the spec before the change, ``plan`` the one after, both under the one capacity
    timeline; the page names files, not their folders. A fleet's part is ``fleet.fleet_simulation_html``."""
    new, old = simulate_plans(plan, rows, base_plan, capacity)
    timeline = timeline_words(Path(capacity_name).name, capacity) if capacity is not None else ""
    section = simulation_section(plan, new, base_plan, old, Path(trace).name, len(rows), timeline)
    subtitle = f"spec {Path(spec).name}" + (f" compared with {Path(base).name}" if base_plan is not None else "") + \
        f" · trace {Path(trace).name} ({len(rows)} workloads)" + (f" · {timeline}" if timeline else "")
    alarm = never_fit_alarm(plan, rows, base_plan, Path(trace).name)
    alarms = ([alarm] if alarm else []) + _caution((new, old), timeline)
    return page_html(f"Simulated trace: {plan.name}", subtitle, [section], alarms)


def report_html(report: Mapping[str, Any], spec: str) -> str:
    """The measured-usage part alone (``report SPEC --format html``), from the report's JSON object."""
    return page_html(f"Usage report: {report.get('spec', spec)}",
                     f"spec {Path(spec).name} · cluster {report.get('cluster', '?')} · {report.get('region', '?')}",
                     [report_section(report)])
