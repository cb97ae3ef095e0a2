"""``slurm.conf.d/governance.conf`` and ``slurm.conf.d/partitions.conf``: the global settings and who may use each
compute partition, as apply.sh writes them into the slurm.conf HyperPod includes."""

from __future__ import annotations

from typing import Optional

from ..plan.slurm import ROOT_ACCOUNT, SlurmPlan
from ._common import _csv, _header
from .model import ConfState


def governance_conf(sp: SlurmPlan, conf: Optional[ConfState]) -> str:
    """The global slurm.conf lines, as apply.sh writes them between the markers."""
    lines = [f"{k}={v}" for k, v in (conf.settings if conf else ())]
    return _header(sp, "Slurm settings of the governance: priority, preemption, limits enforcement.") + \
        "\n".join(lines) + "\n"


def partitions_conf(sp: SlurmPlan, conf: ConfState) -> str:
    """Who may use each compute partition: the keys apply.sh sets on HyperPod's partition line of that name."""
    lines = [f"PartitionName={p.name} AllowAccounts={_csv(p.allow_accounts) or ROOT_ACCOUNT} "
             f"AllowQos={_csv(p.allow_qos)}" for p in conf.partitions]
    return _header(sp, "Partition access, set on HyperPod's partition lines by apply.sh (configStrategy Merge); not "
                   "a partition definition.") + "\n".join(lines) + "\n"


# What slurmdbd purges (slurmdbd.conf(5)): every record type it keeps, so that cluster.slurm.accountingRetentionDays
# bounds the whole task history (jobs, steps, usage rollups, events, reservations, suspensions, transactions).
PURGE_SETTINGS = ("PurgeEventAfter", "PurgeJobAfter", "PurgeResvAfter", "PurgeStepAfter", "PurgeSuspendAfter",
                  "PurgeTXNAfter", "PurgeUsageAfter")
RETENTION_CONF = "slurmdbd.conf.d/retention.conf"


def retention_conf(sp: SlurmPlan) -> Optional[str]:
    """The slurmdbd.conf lines apply.sh writes between the markers (None: the spec sets no retention)."""
    days = sp.accounting_retention_days
    if days is None:
        return None
    return _header(sp, f"slurmdbd's retention of the task history: {days} days (cluster.slurm.accountingRetention"
                   "Days).") + "\n".join(f"{k}={days}days" for k in PURGE_SETTINGS) + "\n"
