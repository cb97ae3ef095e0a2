"""Which stack a per-team (or per-principal) resource goes to.

A stable hash of the key, modulo ``deployment.teamStacks``: adding or removing
a team never moves another team to a different stack, so no logical id
changes and nothing is replaced.
"""

from __future__ import annotations

import hashlib


def shard_of(key: str, shards: int) -> int:
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards

