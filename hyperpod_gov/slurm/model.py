"""The desired Slurm state of a plan (``plan/slurm_state.py`` defines it, so that the plan's Slurm view reads it
without importing this package); ``desired(plan)`` derives it from a whole plan."""

from __future__ import annotations

from ..plan.plan import Plan
from ..plan.slurm_state import (  # noqa: F401  (re-exported: the renderers and the tests import them from here)
    PRIORITY_WEIGHT_QOS,
    PRIORITY_WEIGHT_FAIRSHARE,
    DATA_DIR_MODE,
    PREEMPT_REQUEUE,
    FLAG_NO_RESERVE,
    Qos,
    SlurmAccount,
    User,
    Partition,
    ConfState,
    PosixGroup,
    PosixUser,
    DataDir,
    SlurmState,
    _tres_gpu,
    conf_settings,
    desired_state,
)

Account = SlurmAccount  # the name this package and its users know it by


def desired(plan: Plan) -> SlurmState:
    """The Slurm state ``plan`` asks for (``plan.slurm`` must be set: a Slurm-orchestrated spec)."""
    sp = plan.slurm
    if sp is None:
        raise ValueError("the plan is not of a Slurm-orchestrated cluster (cluster.orchestrator: slurm)")
    return desired_state(sp)
