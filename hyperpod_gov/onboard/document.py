"""The onboarding page as blocks (headings, paragraphs, lists, tables, code), written out as Markdown or as one
HTML document. Every string from the spec goes through the writer's escaping: Markdown escapes what would become
markup (emphasis, links, table cells, HTML), HTML escapes everything; code is fenced with a fence longer than any
run of backticks in it."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Sequence, Union

from ..markdown import cell


@dataclass(frozen=True)
class Code:
    """Inline code (a command, a name, an ARN)."""

    text: str


Inline = Union[str, Code]
Text = tuple[Inline, ...]


@dataclass(frozen=True)
class Heading:
    level: int  # 1..3
    text: str


@dataclass(frozen=True)
class Para:
    parts: Text


@dataclass(frozen=True)
class Bullets:
    items: tuple[Text, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[Text, ...], ...]


@dataclass(frozen=True)
class CodeBlock:
    language: str  # bash, ini, yaml
    text: str


Block = Union[Heading, Para, Bullets, Table, CodeBlock]


def text(*parts: Inline) -> Text:
    return tuple(parts)


def codes(values: tuple[str, ...], none: str = "none") -> Text:
    """``values`` as code, comma-separated (``none`` when there are none)."""
    out: list[Inline] = []
    for i, v in enumerate(values):
        out += ([", "] if i else []) + [Code(v)]
    return tuple(out) or (none,)


# --- Markdown ------------------------------------------------------------------------------------------------------
# Besides what markdown.cell escapes ('|', '[', ']', '<'): the backslash itself, code spans, emphasis and '>' and '&'
# (an entity such as '&lt;' would show as '<').
_MD_EXTRA = re.compile(r"([\\`*_>&])")


def md_text(value: str) -> str:
    """Plain text as Markdown that shows as written."""
    return cell(_MD_EXTRA.sub(r"\\\1", value))


def _fence(value: str, minimum: int) -> str:
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    return "`" * max(minimum, longest + 1)


def md_code(value: str, *, in_table: bool = False) -> str:
    one_line = " ".join(value.splitlines())
    if in_table:  # GFM reads '|' as the end of a cell even inside a code span
        one_line = one_line.replace("|", "\\|")
    fence = _fence(one_line, 1)
    pad = " " if one_line.startswith("`") or one_line.endswith("`") else ""
    return f"{fence}{pad}{one_line}{pad}{fence}"


def _md_inline(parts: Text, *, in_table: bool = False) -> str:
    return "".join(md_code(p.text, in_table=in_table) if isinstance(p, Code) else md_text(p) for p in parts)


def to_markdown(blocks: Sequence[Block]) -> str:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out += ["#" * b.level + " " + md_text(b.text), ""]
        elif isinstance(b, Para):
            out += [_md_inline(b.parts), ""]
        elif isinstance(b, Bullets):
            out += [f"- {_md_inline(item)}" for item in b.items] + [""]
        elif isinstance(b, Table):
            out.append("|" + "|".join(f" {md_text(h)} " if h else " " for h in b.header) + "|")
            out.append("|" + "---|" * len(b.header))
            out += ["| " + " | ".join(_md_inline(c, in_table=True) for c in row) + " |" for row in b.rows]
            out.append("")
        else:
            fence = _fence(b.text, 3)
            out += [f"{fence}{b.language}", b.text.rstrip("\n"), fence, ""]
    return "\n".join(out).rstrip("\n") + "\n"


# --- HTML ----------------------------------------------------------------------------------------------------------
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0 auto;max-width:960px;
padding:1rem 1.5rem;color:#212121;line-height:1.45}
h1{font-size:1.5rem}h2{font-size:1.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
h3{font-size:1.05rem}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em;background:#f5f5f5;padding:0 .2em}
pre{background:#f5f5f5;padding:.6rem;overflow-x:auto}pre code{padding:0}
table{border-collapse:collapse;font-size:.9rem;margin:.5rem 0}th,td{border:1px solid #ddd;padding:.25rem .5rem;
text-align:left;vertical-align:top}th{background:#f5f5f5}
"""


def _e(value: str) -> str:
    return html.escape(value, quote=True)


def _html_inline(parts: Text) -> str:
    return "".join(f"<code>{_e(p.text)}</code>" if isinstance(p, Code) else _e(p) for p in parts)


def to_html(blocks: Sequence[Block]) -> str:
    """One self-contained HTML document (no script, no external resource); its title is the first heading."""
    title = next((b.text for b in blocks if isinstance(b, Heading)), "Onboarding")
    body: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            body.append(f"<h{b.level}>{_e(b.text)}</h{b.level}>")
        elif isinstance(b, Para):
            body.append(f"<p>{_html_inline(b.parts)}</p>")
        elif isinstance(b, Bullets):
            body.append("<ul>" + "".join(f"<li>{_html_inline(i)}</li>" for i in b.items) + "</ul>")
        elif isinstance(b, Table):
            body.append("<table><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in b.header)
                        + "</tr></thead><tbody>"
                        + "".join("<tr>" + "".join(f"<td>{_html_inline(c)}</td>" for c in row) + "</tr>"
                                  for row in b.rows) + "</tbody></table>")
        else:
            body.append(f'<pre><code class="language-{_e(b.language)}">{_e(b.text.rstrip(chr(10)))}</code></pre>')
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{_e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")
