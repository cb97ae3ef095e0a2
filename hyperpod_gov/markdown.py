"""Free text into one Markdown table cell, shown as written: the contract record and the review pack's summary.

The spec refuses control characters and markup in contract fields already (``spec._base.check_plain_text``); this
is the second wall, for text that reaches a page another way. Every line break and control character becomes a
space (a carriage return is a line ending to Markdown and would start a heading of its own), Markdown's inline
link markup is escaped ('|' would end the cell, '![...](...)' would show an image) and '<' is written as an entity (it
would open an HTML tag).
"""

from __future__ import annotations

import re
import unicodedata

from .spec._base import INVISIBLE


# Written with a backslash so that they show as themselves: '|' ends a cell; '[' and ']' make a link or an image
# (an image from a contract field would load a tracking pixel, or any picture, on the record page). The pages'
# own emphasis and code spans ('_not set_', `` `name` ``) pass through a cell, so those stay markup.
_MARKUP = re.compile(r"[|\[\]]")


def cell(value: object) -> str:
    """``value`` as the text of one Markdown table cell."""
    text = str(value)
    if not text.isprintable():  # every character of INVISIBLE's categories is one str.isprintable refuses
        text = "".join(" " if unicodedata.category(c) in INVISIBLE else c for c in text)
    return _MARKUP.sub(r"\\\g<0>", text).replace("<", "&lt;")
