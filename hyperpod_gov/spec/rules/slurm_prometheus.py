"""HPG-S016: managed Prometheus on a Slurm cluster. The HyperPod observability add-on is an EKS add-on; for Slurm AWS
documents exporters its base lifecycle scripts install (sagemaker-hyperpod-cluster-observability-slurm-install-
exporters.md, ``enable_observability=True``) and a Prometheus the operator runs, which hyperpod-gov does not
generate: it refuses the key rather than create a workspace nothing writes to (docs/observability.md)."""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from ..errors import SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule

# What a Slurm cluster's governance is not observed by, said by the rule and by explain.
SLURM_NOT_OBSERVED = ("the HyperPod observability add-on (amazon-sagemaker-hyperpod-observability) is an EKS add-on: "
                      "a Slurm cluster's queue, partitions and GPUs reach no Prometheus workspace through "
                      "hyperpod-gov; AWS's Slurm path is the exporters of the base lifecycle scripts "
                      "(enable_observability=True) and a Prometheus you run")


@rule("HPG-S016", "error", "monitoring.prometheus and monitoring.grafana only on an EKS-orchestrated cluster: the "
      "HyperPod observability add-on that writes to the workspace is an EKS add-on, and no Slurm add-on exists.")
def slurm_refuses_managed_prometheus(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    if spec.cluster.orchestrator != "slurm":
        return
    m = spec.monitoring
    for key in ("prometheus", "grafana"):
        value = getattr(m, key)
        if value is not None:
            yield SpecIssue(f"monitoring.{key}", f"is set on a Slurm cluster; {SLURM_NOT_OBSERVED}",
                            value.model_dump(by_alias=True),
                            f"remove monitoring.{key} (the CloudWatch alarms and dashboards stay)")
