"""Cost-allocation tags the spec puts on AWS resources (``tags`` at the top level and per team)."""

from __future__ import annotations

import re

from ._base import spec_error

# What AWS accepts in a tag (letters in any language, digits, spaces and _ . : / = + - @).
TAG_TEXT = re.compile(r"\A[\w\s.:/=+\-@]*\Z")
# hyperpod-gov's own tags (the spec's name, a quota's contract): a spec tag may not take one of them, so the
# generated tags always stay as they are (a conflict is refused, not resolved).
GENERATED_PREFIX = "hyperpod-gov:"
MAX_SPEC_TAGS = 30  # top level; a team adds at most MAX_TEAM_TAGS: both with the generated ones stay under AWS's 50
MAX_TEAM_TAGS = 10


def check_tags(tags: dict[str, str], *, limit: int) -> dict[str, str]:
    """Tags sorted by key, or a spec error naming the first bad key or value."""
    if len(tags) > limit:
        raise spec_error(f"has {len(tags)} tags", f"keep at most {limit} (AWS allows 50 per resource, and "
                         "hyperpod-gov adds its own)")
    for key, value in tags.items():
        if not 1 <= len(key) <= 128 or not TAG_TEXT.match(key):
            raise spec_error(f"{key!r} is not a tag key", "use 1 to 128 letters, digits, spaces or _ . : / = + - @")
        if key.lower().startswith("aws:"):
            raise spec_error(f"{key!r} is under aws:, which AWS reserves", "use a prefix of your own, e.g. acme:cost-center")
        if key.startswith(GENERATED_PREFIX):
            raise spec_error(f"{key!r} is under {GENERATED_PREFIX}, which hyperpod-gov's own tags use",
                             "use a prefix of your own, e.g. acme:cost-center")
        if len(value) > 256 or not TAG_TEXT.match(value):
            raise spec_error(f"the value of {key!r} is not a tag value",
                             "use at most 256 letters, digits, spaces or _ . : / = + - @")
    return dict(sorted(tags.items()))
