"""What the Slurm files and commands share (``plan/slurm_spelling.py`` defines it, so that the plan's Slurm view
spells sacctmgr commands without importing this package)."""

from __future__ import annotations

from ..plan.slurm_spelling import (  # noqa: F401  (re-exported)
    MARK_BEGIN,
    MARK_END,
    MIN_SLURM,
    DEFAULT_SLURM_PREFIX,
    CLUSTER_VAR,
    PRUNE_NOTE,
    _arg,
    _tres,
    _tres_change,
    _csv,
    SACCTMGR,
    _sh_args,
    _header,
    _qos_order,
    _depth,
)
