"""HPG-D010: the cluster a spec creates runs a Kubernetes version EKS still supports on the day it is validated.

Past the end of extended support, EKS creates no cluster on a version and upgrades existing control planes itself
(the EKS Kubernetes release calendar, ``hyperpod_gov/cost/support.py``): a spec naming such a version would validate
and then fail to deploy. An existing cluster's version is the one it runs (``cluster.existing``): not refused.
"""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from ..errors import SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule
from ._common import _slurm


@rule("HPG-D010", "error", "A cluster the spec creates runs a Kubernetes version still in EKS standard or extended "
      "support on the day the spec is validated (EKS creates no cluster on a version past the end of extended "
      "support).")
def kubernetes_version_is_supported(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    from ...cost.support import CALENDAR, support  # the calendar lives with the cost page that prices it

    c = spec.cluster
    if _slurm(spec) or c.existing is not None or c.kubernetes_version not in CALENDAR:
        return
    s = support(c.kubernetes_version, today)
    if s.tier == "ended":
        current = sorted((v for v in CALENDAR if support(v, today).tier != "ended"),
                         key=lambda v: tuple(map(int, v.split("."))))
        yield SpecIssue("cluster.kubernetesVersion", f"is past the end of EKS extended support (ended {s.until}): EKS "
                        "creates no cluster on it", c.kubernetes_version,
                        f"use a supported version: {', '.join(current)}")
