"""Read a review pack back: the page's structure (sections, charts, captions, accessible text) and the numbers
each SVG carries in its data attributes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

SVG = "{http://www.w3.org/2000/svg}"


class _Structure(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[dict[str, Any]] = []
        self._stack: list[str] = []
        self._text: list[str] = []
        self._capture: str = ""
        self.scripts = 0
        self.links: list[str] = []
        self._cell_class = ""

    @property
    def _section(self) -> dict[str, Any]:
        return self.sections[-1]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Any]]) -> None:
        a = dict(attrs)
        self._stack.append(tag)
        for key in ("src", "href", "xlink:href"):
            if key in a:
                self.links.append(a[key])
        if tag == "script":
            self.scripts += 1
        if tag == "section":
            self.sections.append({"id": a["id"], "title": "", "charts": [], "lists": [], "tables": []})
        elif tag == "figure":
            self._section["charts"].append({"chart": a["data-chart"], "caption": "", "title": "", "desc": []})
        elif tag == "svg":
            assert a.get("role") == "img" and a.get("data-chart") == self._section["charts"][-1]["chart"]
        elif tag == "ul":
            if not self._section["lists"]:  # a list without a heading of its own (the alarm's)
                self._section["lists"].append({"heading": "", "items": []})
            self._section["lists"][-1]["items"] = []
        elif tag == "table":
            self._section["tables"].append({"header": [], "rows": []})
        elif tag == "tr" and "thead" not in self._stack:
            self._section["tables"][-1]["rows"].append([])
        if tag in ("h2", "h3", "figcaption", "title", "desc", "li", "th", "td", "p"):
            self._capture, self._text = tag, []
            self._cell_class = a.get("class") or ""

    def handle_endtag(self, tag: str) -> None:
        while self._stack and self._stack.pop() != tag:
            pass
        if tag != self._capture:
            return
        text = "".join(self._text).strip()
        self._capture = ""
        if not self.sections:
            return
        s = self._section
        if tag == "h2":
            s["title"] = text
        elif tag == "h3":
            s["lists"].append({"heading": text, "items": []})
        elif tag == "p" and text == "none" and s["lists"]:
            s["lists"][-1]["items"] = []
        elif tag == "figcaption":
            s["charts"][-1]["caption"] = text
        elif tag == "title" and s["charts"]:
            s["charts"][-1]["title"] = text
        elif tag == "desc" and s["charts"]:
            s["charts"][-1]["desc"] = text.split("\n")
        elif tag == "li":
            if not s["lists"]:
                s["lists"].append({"heading": "", "items": []})
            s["lists"][-1]["items"].append(text)
        elif tag == "th":
            s["tables"][-1]["header"].append(text)
        elif tag == "td":
            s["tables"][-1]["rows"][-1].append(text + (f" [{self._cell_class}]" if self._cell_class else ""))

    def handle_data(self, data: str) -> None:
        if self._capture:
            self._text.append(data)


def structure(html: str) -> _Structure:
    """The page's sections with their charts (caption, SVG title and description), lists and tables."""
    parser = _Structure()
    parser.feed(html)
    parser.close()
    return parser


def numbers(svg_file: Path) -> dict[tuple[str, str], float]:
    """(series, key) -> value of every drawn value of one chart, from its data attributes."""
    root = ET.parse(svg_file).getroot()
    out: dict[tuple[str, str], float] = {}
    for el in root.iter(f"{SVG}g"):
        if "data-series" in el.attrib:
            key = (el.attrib["data-series"], el.attrib["data-key"])
            assert key not in out, f"{key} drawn twice in {svg_file.name}"
            assert len(el), f"{key} has no shape in {svg_file.name}"  # the value is drawn, not only described
            out[key] = float(el.attrib["data-value"])
    return out


def desc(svg_file: Path) -> list[str]:
    root = ET.parse(svg_file).getroot()
    node = root.find(f"{SVG}desc")
    assert node is not None and node.text
    return node.text.split("\n")
