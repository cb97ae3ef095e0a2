"""The sacctmgr commands that take Slurm from one state to another (``plan/slurm_commands.py`` defines them, so that
the plan's Slurm view lists them without importing this package)."""

from __future__ import annotations

from ..plan.slurm_commands import (  # noqa: F401  (re-exported)
    add_qos,
    _qos_sets,
    modify_qos,
    add_account,
    _account_commands,
    add_user,
    set_default_account,
    delete_user,
    delete_account,
    delete_qos,
    EMPTY,
    _organisation,
    _managed,
    changes,
)
