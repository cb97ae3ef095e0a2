"""The parts a review page is made of: sections holding charts, lists of sentences and tables."""

from __future__ import annotations

from dataclasses import dataclass, field

from .svg import Chart


@dataclass(frozen=True)
class Figure:
    """A chart in a section; ``pair`` groups charts shown side by side (old beside new)."""

    chart: Chart
    pair: str = ""


@dataclass
class Section:
    """A titled part of the page: charts, lists of sentences and tables, in that order."""

    id: str
    title: str
    figures: list[Figure] = field(default_factory=list)
    lists: list[tuple[str, list[str]]] = field(default_factory=list)  # (heading, items)
    tables: list[tuple[list[str], list[list[tuple[str, str]]]]] = field(default_factory=list)  # header, (cell, class)


@dataclass(frozen=True)
class Alarm:
    """What the page says in red at its top, before any chart: a headline and one line per item."""

    headline: str
    items: tuple[str, ...]
    id: str = "alarm"  # the element's id on the page (one per alarm)
