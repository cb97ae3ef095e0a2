"""The HyperPod dependencies Helm chart (health-monitoring agent, device plugins), installed before the cluster."""

from __future__ import annotations


from aws_cdk import Duration, Stack, SymlinkFollowMode, aws_eks_v2 as eks, aws_s3_assets as s3_assets
from constructs import Construct

from ..plan.plan import ChartPlan
from ._nag import acknowledge, wildcard

DEPENDENCIES_RELEASE = "hyperpod-dependencies"


class DependenciesChart(Construct):
    """The HyperPod dependencies Helm chart (health-monitoring agent etc.), from the spec's location."""

    def __init__(self, scope: Construct, id: str, *, chart: ChartPlan, cluster: eks.ICluster) -> None:
        super().__init__(scope, id)
        common = dict(cluster=cluster, release=DEPENDENCIES_RELEASE, namespace="kube-system",
                      timeout=Duration.minutes(15))
        if chart.source == "directory":
            # Links stay links (the default, stated): the spec's check has refused every link leaving the folder.
            asset = s3_assets.Asset(self, "ChartAsset", path=str(chart.directory),
                                    follow_symlinks=SymlinkFollowMode.NEVER)
            # Reading the chart asset grants the kubectl handler read access to the CDK asset bucket.
            stack = Stack.of(self)
            bucket = f"arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-{stack.account}-{stack.region}/*"
            reason = ("The kubectl handler reads the dependencies chart, uploaded as a CDK asset, from the CDK "
                      "bootstrap asset bucket of this account and region")
            acknowledge(cluster, [
                (wildcard("Action", "s3:GetBucket*"), f"{reason}: it reads the bucket's location."),
                (wildcard("Action", "s3:GetObject*"), f"{reason}: it reads the chart archive and its versions."),
                (wildcard("Action", "s3:List*"), f"{reason}: it lists the asset's key."),
                (wildcard("Resource", bucket), f"{reason}: asset keys are content hashes, unknown in advance."),
            ])
            self.resource = eks.HelmChart(self, "Resource", chart_asset=asset, **common)
        else:  # a Helm repository or an OCI reference
            self.resource = eks.HelmChart(self, "Resource", chart=chart.chart, repository=chart.repository,
                                          version=chart.version, **common)
