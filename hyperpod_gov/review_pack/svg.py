"""Matplotlib figures as deterministic, accessible SVG.

Every chart is drawn by matplotlib (Agg chosen, so no window ever opens) and written as SVG under fixed
settings: text stays text (``svg.fonttype: none``, so a browser and a test can read it), hashed ids use a fixed
per-chart salt (stable bytes), every id is prefixed with the chart's name (no id shared by two charts inlined in
one page), no creation date and no creator line. The root element
carries ``role="img"``, a ``<title>`` and a ``<desc>`` naming every number drawn, and each drawn value is a
``<g>`` with ``data-series``, ``data-key`` and ``data-value`` attributes.
"""

from __future__ import annotations

import html
import io
import re
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import matplotlib

matplotlib.use("Agg")  # never a window, whatever MPLBACKEND says

import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

STYLE = {
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "figure.dpi": 72,
    "savefig.bbox": "standard",
    "path.simplify": False,
    "hatch.linewidth": 0.8,
}

_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.S)
_ROOT = re.compile(r"<svg\b[^>]*>")
_ID = re.compile(r'(\bid="|url\(#|href="#)(?P<id>[^")]+)')


def _unique_ids(text: str, slug: str) -> str:
    """Prefix every id (and every reference to one) with the chart's name, unless it already carries it."""
    def sub(m: re.Match) -> str:
        ident = m.group("id")
        return m.group(0) if ident.startswith(f"{slug}-") else f"{m.group(1)}{slug}-{ident}"
    return _ID.sub(sub, text)


@dataclass(frozen=True)
class Datum:
    """One drawn number: which series, which key (team, instance type...), its value and unit."""

    series: str
    key: str
    value: float
    unit: str

    def sentence(self) -> str:
        return f"{self.key}, {self.series}: {_num(self.value)} {self.unit}".rstrip()


@dataclass(frozen=True)
class Chart:
    """A chart ready for the page: file stem, title, one-line caption, the SVG text and the numbers drawn."""

    slug: str
    title: str
    caption: str
    svg: str
    data: tuple[Datum, ...]


def _num(x: float) -> str:
    r = round(float(x), 2)
    return str(int(r)) if r.is_integer() else f"{r:g}"


def new_figure(width: float, height: float) -> tuple[Any, Any]:
    """A figure and its single axes under the fixed style."""
    with matplotlib.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(width, height))
    return fig, ax


class DataIds:
    """Hands out element ids for drawn values, remembering which ``Datum`` each id shows."""

    def __init__(self, slug: str) -> None:
        self._slug = slug
        self.by_id: dict[str, Datum] = {}

    def __call__(self, datum: Datum) -> str:
        gid = f"{self._slug}-d{len(self.by_id)}"
        self.by_id[gid] = datum
        return gid

    def __iter__(self) -> Iterator[Datum]:
        return iter(self.by_id.values())


def finish(fig: Any, *, slug: str, title: str, caption: str, ids: DataIds,
           extra_desc: Sequence[str] = ()) -> Chart:
    """Write the figure as SVG (deterministic bytes) and close it; attach title, description and data attributes."""
    buf = io.StringIO()
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": f"hyperpod-gov:{slug}"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = _METADATA.sub("", _PROLOG.sub("", buf.getvalue(), count=1), count=1)
    text = _unique_ids(text, slug)
    data = tuple(ids)
    desc = [caption, *extra_desc, *(d.sentence() for d in data)]
    root = _ROOT.search(text)
    if root is None:
        raise ValueError(f"chart {slug}: matplotlib wrote no <svg> element")
    opening = root.group(0)[:-1] + (
        f' role="img" aria-labelledby="{slug}-title {slug}-desc" data-chart="{html.escape(slug)}">'
    )
    accessible = (f'\n <title id="{slug}-title">{html.escape(title)}</title>'
                  f'\n <desc id="{slug}-desc">{html.escape(chr(10).join(desc))}</desc>')
    text = text[:root.start()] + opening + accessible + text[root.end():]
    for gid, d in ids.by_id.items():
        attrs = (f' data-series="{html.escape(d.series)}" data-key="{html.escape(d.key)}"'
                 f' data-value="{_num(d.value)}" data-unit="{html.escape(d.unit)}"')
        text, n = re.subn(f'<g id="{re.escape(gid)}"', f'<g id="{gid}"{attrs}', text, count=1)
        if n != 1:  # every datum must be on the chart (explicit: python -O strips asserts)
            raise ValueError(f"chart {slug}: the value {d} was never drawn")
    return Chart(slug, title, caption, text.strip() + "\n", data)
