"""HPG-S016: managed Prometheus on a Slurm cluster goes through HyperPod's ``sagemaker-observability`` cluster
extension (SageMaker CreateClusterExtension), which AWS offers only on a Slurm cluster with ``NodeProvisioningMode:
Continuous`` (the API reference, botocore 1.44.8's model); the EKS add-on's pin and the extension's pin each belong
to their orchestrator (docs/observability.md, "Slurm")."""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from ..errors import NO_VALUE, SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule

# The cluster extension's precondition, said by the rule and by explain.
EXTENSION_NEEDS = ("the sagemaker-observability cluster extension that writes a Slurm cluster's metrics to the "
                   "workspace installs only on a cluster with NodeProvisioningMode Continuous (SageMaker "
                   "CreateClusterExtension)")


@rule("HPG-S016", "error", "monitoring.prometheus on a Slurm cluster needs cluster.nodeProvisioningMode: Continuous "
      "(the sagemaker-observability cluster extension's condition); cluster.addonVersions.observabilityExtension pins "
      "that extension and applies to a Slurm cluster only.")
def slurm_prometheus_needs_the_extension(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    if c.orchestrator != "slurm":
        if "observability_extension" in c.addon_versions.model_fields_set:
            yield SpecIssue("cluster.addonVersions.observabilityExtension", "pins the Slurm cluster extension on an "
                            "EKS-orchestrated cluster, where the HyperPod observability add-on writes to the workspace",
                            c.addon_versions.observability_extension, "remove observabilityExtension (the EKS add-on's "
                            "pin is cluster.addonVersions.hyperpodObservability)")
        return
    if spec.monitoring.prometheus is not None and c.node_provisioning_mode != "Continuous":
        yield SpecIssue("monitoring.prometheus", f"is set on a Slurm cluster without continuous provisioning; "
                        f"{EXTENSION_NEEDS}", NO_VALUE if c.node_provisioning_mode is None
                        else c.node_provisioning_mode,
                        "set cluster.nodeProvisioningMode: Continuous (new clusters only: AWS cannot migrate a "
                        "cluster to it), or remove monitoring.prometheus and monitoring.grafana")
