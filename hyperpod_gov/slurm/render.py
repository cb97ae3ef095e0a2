"""Slurm governance as files the controller runs, and the exact sacctmgr commands a change causes.

``files(plan)`` gives, by relative path:

- ``accounting.sh``: the accounts, QOS and user associations of ``model.desired``, each read back first
  (``sacctmgr -nP show ...``) and then added, or modified in exactly the attributes that differ, so that running it
  again on an unchanged spec changes nothing. Nothing is deleted unless ``HPG_SLURM_PRUNE=1`` asks (deleting an
  association cancels its running jobs); without it, what the spec no longer has is listed.
- ``slurm.conf.d/governance.conf``: the global settings (priority, preemption, enforcement, GPU tracking), written
  by ``apply.sh`` between marker comments into the file slurm.conf includes (HyperPod's ``accounting.conf``).
- ``slurm.conf.d/partitions.conf`` (``configStrategy: Merge`` only): the ``AllowAccounts``/``AllowQos`` of each
  compute partition, which ``apply.sh`` sets on HyperPod's own partition lines (Slurm refuses a partition defined
  twice, so these are not a second definition).
- ``posix.sh``: the teams' groups and users with the same ids on every node, and their data directories
  (group-owned, mode 2770).
- ``apply.sh``: what the controller's lifecycle script calls: checks the Slurm version, waits for slurmdbd, runs
  posix.sh and accounting.sh, writes the configuration and restarts slurmctld only when it changed.

Every path and name the scripts use comes from an environment variable with HyperPod's default (``/opt/slurm``),
so that a test can point them at a temporary Slurm. ``changes(old, new)`` lists the commands accounting.sh runs to
take Slurm from one state to the other, in the same order and spelling.
"""

from __future__ import annotations

from ..plan.plan import Plan
from ._common import (  # noqa: F401  (re-exported: other modules and the tests import them from here)
    CLUSTER_VAR,
    DEFAULT_SLURM_PREFIX,
    MARK_BEGIN,
    MARK_END,
    MIN_SLURM,
    PRUNE_NOTE,
    SACCTMGR,
)
from .accounting_sh import accounting_sh
from .apply_sh import apply_sh
from .commands import (  # noqa: F401  (re-exported)
    EMPTY,
    add_account,
    add_qos,
    add_user,
    changes,
    delete_account,
    delete_qos,
    delete_user,
    modify_qos,
    set_default_account,
)
from .conf import RETENTION_CONF, governance_conf, partitions_conf, retention_conf
from .model import desired
from .posix_sh import posix_sh


def files(plan: Plan) -> dict[str, str]:
    """Every Slurm file of a Slurm-orchestrated plan, by path relative to the synth output's ``slurm/``."""
    sp = plan.slurm
    if sp is None:
        raise ValueError("the plan is not of a Slurm-orchestrated cluster (cluster.orchestrator: slurm)")
    state = desired(plan)
    out = {
        "accounting.sh": accounting_sh(sp, state),
        "apply.sh": apply_sh(sp, state),
        "posix.sh": posix_sh(sp, state),
        "slurm.conf.d/governance.conf": governance_conf(sp, state.conf),
    }
    retention = retention_conf(sp)
    if retention is not None:
        out[RETENTION_CONF] = retention
    if state.conf is not None and state.conf.partitions:
        out["slurm.conf.d/partitions.conf"] = partitions_conf(sp, state.conf)
    return dict(sorted(out.items()))
