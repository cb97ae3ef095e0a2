"""The HyperPod observability extension of a Slurm cluster (``monitoring.prometheus`` on ``cluster.orchestrator:
slurm``), as plain data: its name, pinned version and configuration, and what it observes. Pure (no CDK).

Sources (docs/observability.md, "Slurm", links them):

- SageMaker API reference, CreateClusterExtension (botocore 1.44.8's model): "Installs an extension, such as
  sagemaker-observability, on a SageMaker HyperPod cluster orchestrated by Slurm. The cluster must have
  NodeProvisioningMode set to Continuous"; ``ExtensionVersion`` is ``MAJOR.MINOR.PATCH`` (pattern
  ``[0-9]+\\.[0-9]+\\.[0-9]+``), the latest when omitted; ``ConfigurationValues`` a JSON object as a string, at most
  10240 characters, an unknown setting rejected. UpdateClusterExtension changes the version only upwards.
- SageMaker developer guide, "Observability extension configuration"
  (sagemaker-hyperpod-cluster-observability-slurm-extension-config.html): every setting is optional; without
  ``prometheus`` the metrics go to Amazon CloudWatch; ``prometheus.remoteWriteUrl`` is the workspace's
  ``.../workspaces/ws-.../api/v1/remote_write``; the default metric categories are node, accelerated compute,
  network, job and cluster metrics (NCCL metrics off).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Optional

EXTENSION = "sagemaker-observability"
# The extension's version format (botocore's ExtensionVersion pattern).
EXTENSION_VERSION = re.compile(r"\A[0-9]+\.[0-9]+\.[0-9]+\Z", re.ASCII)
REMOTE_WRITE_PATH = "api/v1/remote_write"  # after the workspace's Prometheus endpoint (".../workspaces/ws-ID/")
MAX_CONFIGURATION = 10240  # botocore's ExtensionConfigurationValues max
# What the extension observes by default (the configuration page's default categories), and what a Slurm cluster
# does not give it: Kueue's per-team signals, which the dashboards, the alarms and their rules read on EKS.
OBSERVED = ("node", "accelerated compute (GPU, Neuron)", "network (EFA)", "Slurm job", "Slurm cluster")
NOT_OBSERVED = ("per-team usage against quota, borrowing, pending and preempted work (Kueue's metrics, which a Slurm "
                "cluster does not have)")


@dataclass(frozen=True)
class ExtensionPlan:
    """The ``sagemaker-observability`` extension of one Slurm cluster, writing to one Prometheus workspace."""

    name: str  # EXTENSION
    version: str  # pinned (cluster.addonVersions.observabilityExtension)

    def configuration(self, remote_write_url: str) -> dict[str, object]:
        """The extension's settings: the workspace to remote-write to; every other setting keeps the extension's
        default (the configuration page: HyperPod writes the defaults into the stored configuration)."""
        return {"prometheus": {"remoteWriteUrl": remote_write_url}}


def remote_write_url(endpoint: str) -> str:
    """The remote-write URL of a workspace whose Prometheus endpoint is ``endpoint``
    (``https://aps-workspaces.REGION.amazonaws.com/workspaces/ws-ID/``, as AWS::APS::Workspace's PrometheusEndpoint
    gives it)."""
    return endpoint + REMOTE_WRITE_PATH


def configuration_text(plan: ExtensionPlan, url: str) -> str:
    """``ConfigurationValues`` as the API takes it (keys sorted, so an unchanged plan sends the same text)."""
    text = json.dumps(plan.configuration(url), sort_keys=True, separators=(",", ":"))
    if len(text) > MAX_CONFIGURATION:
        raise ValueError(f"the {plan.name} configuration takes {len(text)} characters, over {MAX_CONFIGURATION}")
    return text


def extension_plan(version: Optional[str]) -> ExtensionPlan:
    """The extension at ``version`` (the spec's pin)."""
    if version is None or not EXTENSION_VERSION.match(version):
        raise ValueError(f"the {EXTENSION} extension needs a MAJOR.MINOR.PATCH version, not {version!r}")
    return ExtensionPlan(EXTENSION, version)


def observed(extension: Optional[ExtensionPlan], workspace: str) -> tuple[str, str]:
    """What managed Prometheus observes of a Slurm cluster, and what it does not, in words (explain)."""
    if extension is None:
        return ("none: monitoring.prometheus is not set",
                "not observed: nothing of the cluster reaches a Prometheus workspace through hyperpod-gov (set "
                "monitoring.prometheus and cluster.nodeProvisioningMode: Continuous for the sagemaker-observability "
                "extension); the per-team CloudWatch alarms and dashboards are EKS-only")
    return (f"the {extension.name} extension {extension.version} writes {', '.join(OBSERVED)} metrics to "
            f"{workspace}",
            f"approximate: not observed: {NOT_OBSERVED}; the teams' alarms are neither alerting rules nor CloudWatch "
            "alarms on a Slurm cluster, and Grafana gets no per-team dashboards")
