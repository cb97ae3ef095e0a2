"""Dashboard widgets as the JSON CloudWatch reads (what aws-cdk-lib's widgets render), laid out and written as
JavaScript's ``JSON.stringify`` writes them; plain data, no construct (``monitoring.py`` puts them in dashboards).
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any, Mapping, Optional, Sequence

from aws_cdk import Aws

from ..plan.monitoring import HOUR, FlavorWatch, Metric, TeamWatch
from .plain import join

ROW_HEIGHT = 6
ORANGE = "#ff7f0e"  # aws-cdk-lib's Color.ORANGE


_STATISTICS = ("SampleCount", "Average", "Sum", "Minimum", "Maximum")
DEFAULT_PERIOD = 300  # CloudWatch's (and CDK's) default period: a dashboard metric leaves it out


def statistic(m: Metric) -> str:
    if m.statistic not in _STATISTICS:
        raise ValueError(f"metric {m.name}: statistic {m.statistic!r} is not one of {', '.join(_STATISTICS)}")
    return m.statistic


# --- dashboards -------------------------------------------------------------------------------------------------
# A widget is its JSON as CloudWatch reads it (what aws-cdk-lib's widgets render), without its position; a row of
# widgets is laid out left to right, wrapping at 24 columns, and rows go top to bottom.

Widget = dict[str, Any]
GRID_WIDTH = 24


def _graph_metric(m: Metric, period: int, label: Optional[str], id: Optional[str] = None) -> list[Any]:
    line: list[Any] = [m.namespace, m.name]
    for k, v in sorted(m.dimension_map().items()):
        line += [k, v]
    options: dict[str, Any] = {}
    if label is not None:
        options["label"] = label
    if id is not None:
        options["id"] = id
    if period != DEFAULT_PERIOD:
        options["period"] = period
    if statistic(m) != "Average":
        options["stat"] = m.statistic
    return [*line, options] if options else line


def _graph_expression(expression: str, period: int, label: str) -> list[Any]:
    options: dict[str, Any] = {"label": label} if label else {}
    options["expression"] = expression
    if period != DEFAULT_PERIOD:
        options["period"] = period
    return [options]


def _graph(title: str, metrics: list[list[Any]], width: int, region: str, *,
           annotations: Optional[list[dict[str, Any]]] = None, y_axis: Optional[dict[str, Any]] = None) -> Widget:
    properties: dict[str, Any] = {"view": "timeSeries", "title": title, "region": region, "metrics": metrics}
    if annotations:
        properties["annotations"] = {"horizontal": annotations}
    properties["yAxis"] = {"left": y_axis} if y_axis else {}
    return {"type": "metric", "width": width, "height": ROW_HEIGHT, "properties": properties}


def text_widget(markdown: str, width: int, height: int = ROW_HEIGHT) -> Widget:
    return {"type": "text", "width": width, "height": height, "properties": {"markdown": markdown}}


def _usage_widget(w: TeamWatch, width: int, region: str, period: int = 300) -> Widget:
    metrics: list[list[Any]] = []
    annotations: list[dict[str, Any]] = []
    for i, f in enumerate(w.flavors):
        metrics.append(_graph_metric(f.usage, period, f"used {f.unit} ({f.instance_type})", id=f"u{i}"))
        # Borrowed = usage above nominal; borrow limits are not exported, so nominal comes from the plan.
        metrics.append(_graph_expression(f"IF(u{i} > {f.nominal}, u{i} - {f.nominal}, 0)", period,
                                         f"borrowed {f.unit} ({f.instance_type})"))
        annotations.append({"value": f.nominal, "label": f"nominal {f.nominal} {f.unit} ({f.instance_type})",
                            "yAxis": "left"})
        if f.borrowing_limit:
            annotations.append({"value": f.nominal + f.borrowing_limit, "color": ORANGE,
                                "label": f"nominal + borrow limit {f.nominal + f.borrowing_limit}", "yAxis": "left"})
    return _graph(f"{w.team}: usage against nominal quota", metrics, width, region, annotations=annotations)


def _queue_widget(w: TeamWatch, width: int, region: str) -> Widget:
    return _graph(f"{w.team}: pending and admitted workloads",
                  [_graph_metric(w.pending, 300, "pending (max over statuses)"),
                   _graph_metric(w.admitted, 300, "admitted")], width, region)


def _evictions_widget(w: TeamWatch, width: int, region: str) -> Widget:
    return _graph(f"{w.team}: evictions by reason (per hour)", [_graph_expression(w.evictions_search, HOUR, "")],
                  width, region)


def _utilisation_widget(w: TeamWatch, width: int, region: str) -> Widget:
    if w.utilisation is None:
        return text_widget(f"**{w.team}**: owns no accelerators", width)
    return _graph(f"{w.team}: accelerator utilisation (%)", [_graph_metric(w.utilisation, 300, w.utilisation.name)],
                  width, region, y_axis={"max": 100, "min": 0})


def _flavor_line(f: FlavorWatch) -> str:
    lend = "all" if f.lending_limit is None else str(f.lending_limit)
    return f"{f.nominal} {f.unit} on {f.instance_type} (lends {lend}, borrows up to {f.borrowing_limit})"


def _summary(w: TeamWatch, width: int) -> Widget:
    owns = "; ".join(_flavor_line(f) for f in w.flavors) or "nothing"
    lines = [
        f"### {w.team}{' (shared pool)' if w.is_shared_pool else ''}",
        f"{w.strategy}, fair-share weight {w.fair_share_weight}",
        f"Owns: {owns}",
        f"Operations: {w.operations_owner or 'platform'}; cost: {w.cost_owner or 'platform'}",
        f"Queue `{w.cluster_queue}`",
    ]
    return text_widget("\n\n".join(lines), width)


def team_row(w: TeamWatch, region: Optional[str] = None) -> list[Widget]:
    """One dashboard row (24 columns): summary, usage, queue, evictions, utilisation, as widget JSON.

    ``region``: the metrics' region (the plan's); given, the dashboard body is a plain string, a third smaller.
    """
    r = region if region is not None else Aws.REGION
    return [_summary(w, 4), _usage_widget(w, 6, r), _queue_widget(w, 5, r), _evictions_widget(w, 5, r),
            _utilisation_widget(w, 4, r)]


def layout(rows: Sequence[Sequence[Widget]]) -> list[Widget]:
    """The widgets of the rows with their positions: each row left to right, wrapping past 24 columns."""
    placed: list[Widget] = []
    top = 0
    for row in rows:
        x = y = height = 0
        for widget in row:
            if x + widget["width"] > GRID_WIDTH:
                x, y = 0, height
            placed.append({"type": widget["type"], "width": widget["width"], "height": widget["height"],
                           "x": x, "y": top + y, "properties": widget["properties"]})
            height = max(height, y + widget["height"])
            x += widget["width"]
        top += height
    return placed


def js_number(x: float) -> str:
    """``x`` as JavaScript prints a number (``Number.prototype.toString``, which ``JSON.stringify`` uses): the
    shortest digits that read back as ``x`` (Python's ``repr`` finds the same), positional from 1e-6 up to below
    1e21, ``1e-7`` and ``1.5e+21`` beyond; not finite: ``null``."""
    if not math.isfinite(x):
        return "null"
    if x == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(x)).as_tuple()
    d = "".join(map(str, digits)).rstrip("0") or "0"
    exponent = int(exponent) + len(digits) - len(d)
    k, n = len(d), len(d) + exponent  # the digits, and where the point goes after the first n of them
    if k <= n <= 21:
        text = d + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{d[:n]}.{d[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + d
    else:
        e = n - 1
        text = d[0] + (f".{d[1:]}" if k > 1 else "") + f"e{'+' if e > 0 else '-'}{abs(e)}"
    return ("-" if sign else "") + text


_INDEX = re.compile(r"0|[1-9][0-9]{0,9}")


def _is_index(key: str) -> bool:
    """Whether JavaScript holds ``key`` as an array index (an integer below 2**32 - 1 in canonical form)."""
    return bool(_INDEX.fullmatch(key)) and int(key) < 2**32 - 1


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)


def _python_writes_it_alike(value: Any) -> bool:
    """Whether Python's ``json`` (C encoder) writes ``value`` as ``JSON.stringify`` does: no float (``2.0``,
    ``1e-07``), no object key JavaScript holds as an array index ("0", "17"; it lists those first), only exact
    ``str``/``int``/``bool``/``None``, ``dict``, ``list`` and ``tuple`` (a subclass, e.g. an enum, may write
    otherwise)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is dict:
        for k, v in value.items():
            # an index starts with a digit: most keys are told apart by their first character alone
            if type(k) is not str or (k[:1].isdigit() and _INDEX.fullmatch(k)) or not _python_writes_it_alike(v):
                return False
        return True
    if kind is list or kind is tuple:
        return all(_python_writes_it_alike(v) for v in value)
    return False


def js_json(value: Any) -> str:
    """``value`` as JavaScript's ``JSON.stringify`` writes it: no spaces, non-ASCII as is, numbers as
    :func:`js_number` (Python's ``json`` writes ``1e-07`` and ``2.0``), an object's array-index keys ("0", "17")
    before its other keys, ascending (the order of a JavaScript object's own keys). Where Python's C encoder
    writes the same (no float, no index key: every dashboard and manifest here), it writes it; a 300-team synth
    writes 600 of them, 0.71 s in :func:`_js_json` against 0.14 s so."""
    if _python_writes_it_alike(value):
        return _ENCODER.encode(value)
    return _js_json(value)


def _js_json(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return int.__repr__(value)  # the number, whatever a subclass (an enum) prints
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, Mapping):
        items = [(str(k), v) for k, v in value.items()]
        if any(_INDEX.fullmatch(k) for k, _ in items):  # JavaScript lists array-index keys first, ascending
            items = sorted(items, key=lambda kv: (0, int(kv[0])) if _is_index(kv[0]) else (1, 0))
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_js_json(v)}" for k, v in items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_js_json(v) for v in value) + "]"
    raise TypeError(f"{type(value).__name__} is not JSON")


def dashboard_body(widgets: list[Widget]) -> str:
    """The dashboard's JSON, as ``Stack.to_json_string`` writes it (:func:`js_json`). Written in Python: the
    deploy-time values in it (alarm ARNs, the region) are string tokens inside the text, which CDK renders as the
    same ``Fn::Join`` as ``to_json_string``'s, without two jsii calls a dashboard."""
    return js_json({"widgets": widgets})


_REFERENCE = re.compile("\ue000(\\d+)\ue001")


def body_with_references(widgets: list[Widget], references: Sequence[dict[str, Any]]) -> Any:
    """The dashboard body where ``widgets`` hold ``placeholder(i)`` for ``references[i]`` (intrinsics of the
    same fragment, e.g. an alarm's ARN): ``Fn::Join`` of the text and the references, as CDK renders a string
    with tokens (``plain.join``)."""
    text = dashboard_body(widgets)
    if not text.count("\ue000") == text.count("\ue001") == len(references):
        raise ValueError("a dashboard's text holds U+E000 or U+E001, which mark its references")
    pieces = _REFERENCE.split(text)  # text, index, text, index, ..., text
    return join([pieces[i] if i % 2 == 0 else references[int(pieces[i])] for i in range(len(pieces))])


def placeholder(i: int) -> str:
    return f"\ue000{i}\ue001"
