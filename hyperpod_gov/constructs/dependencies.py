"""The HyperPod dependencies Helm chart (health-monitoring agent, device plugins), installed before the cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from aws_cdk import Duration, aws_eks_v2 as eks, aws_s3_assets as s3_assets
from constructs import Construct

from ..spec.models import HelmChart

DEPENDENCIES_RELEASE = "hyperpod-dependencies"


class DependenciesChart(Construct):
    """The HyperPod dependencies Helm chart (health-monitoring agent etc.), from the spec's location."""

    def __init__(self, scope: Construct, id: str, *, chart: HelmChart, directory: Optional[Path],
                 cluster: eks.ICluster) -> None:
        super().__init__(scope, id)
        common = dict(cluster=cluster, release=DEPENDENCIES_RELEASE, namespace="kube-system",
                      timeout=Duration.minutes(15))
        if chart.source == "directory":
            asset = s3_assets.Asset(self, "ChartAsset", path=str(directory))
            self.resource = eks.HelmChart(self, "Resource", chart_asset=asset, **common)
        elif chart.source == "oci":
            name = (chart.oci or "").rstrip("/").rsplit("/", 1)[-1]
            self.resource = eks.HelmChart(self, "Resource", chart=name, repository=chart.oci,
                                          version=chart.version, **common)
        else:
            self.resource = eks.HelmChart(self, "Resource", chart=chart.chart, repository=chart.repository,
                                          version=chart.version, **common)
