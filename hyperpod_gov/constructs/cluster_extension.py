"""A HyperPod cluster extension (SageMaker CreateClusterExtension) as a CloudFormation custom resource.

The pinned toolchain has no resource type for it (cfn-lint 1.58.0's schemas and aws-cdk-lib 2.275.0 know no
``AWS::SageMaker::Extension``; aws-cdk-lib 2.278.0 documents ``CfnExtension``), so ``ClusterExtension`` is a
``Custom::ClusterExtension`` backed by ``ClusterExtensionProvider``: a Python handler bundled with the boto3 and
botocore the tests ran (``handler_bundle``), under the CDK provider framework's waiter, as
``task_governance_provider`` is. The handler may manage extensions of one HyperPod cluster and nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from aws_cdk import CustomResource, Duration, Stack, aws_iam as iam
from constructs import Construct

from ..plan.slurm_observability import ExtensionPlan, configuration_text
from ..plan.tables_prometheus import CLUSTER_EXTENSION
from ..plan.fields import emit
from ._nag import acknowledge, wildcard
from .bundled_provider import BundledProvider, HandlerPlacement, nag_arn_prefix

HANDLER_DIR = Path(__file__).resolve().parents[1] / "assets" / "cluster_extension_provider"
HANDLER_SERVICES = ("sagemaker",)
RESOURCE_TYPE = "Custom::ClusterExtension"
# The extension is installed on every node; the provider framework's waiter allows up to two hours.
TOTAL_TIMEOUT = Duration.minutes(60)
# An extension's ARN: extension/(sagemaker|eks|pcs)-.../.../... (botocore's ExtensionArn pattern); HyperPod's own
# begin with sagemaker-. The segments after it are assigned by the service.
EXTENSION_RESOURCE = "extension/sagemaker-*"
MANAGE_VERBS = ("Describe", "Update", "Delete")
ACTIONS_UNKNOWN_TO_CFN_LINT = "W3037"


class ClusterExtensionProvider(BundledProvider):
    """The provider behind ``ClusterExtension`` on one HyperPod cluster: its handler may create extensions on
    ``cluster_arn``, describe, update and delete HyperPod's extensions of this account and region, and list the
    cluster's extensions (to adopt one of the same name). Its log groups are encrypted with a key of its own and
    kept when the stack goes, and with a ``placement`` its two functions run in the VPC, like the task governance
    handler's (docs/security.md)."""

    def __init__(self, scope: Construct, id: str, *, cluster_arn: str,
                 placement: Optional[HandlerPlacement] = None) -> None:
        stack = Stack.of(scope)
        extensions = stack.format_arn(service="sagemaker", resource=EXTENSION_RESOURCE.split("/")[0],
                                      resource_name=EXTENSION_RESOURCE.split("/", 1)[1])
        statements = [
            iam.PolicyStatement(sid="CreateOnTheCluster", actions=["sagemaker:CreateClusterExtension"],
                                resources=[cluster_arn, extensions]),
            iam.PolicyStatement(sid="ListOnTheCluster", actions=["sagemaker:ListClusterExtensions"],
                                resources=[cluster_arn]),
            iam.PolicyStatement(sid="ManageExtensions",
                                actions=[f"sagemaker:{verb}ClusterExtension" for verb in MANAGE_VERBS],
                                resources=[cluster_arn, extensions]),
        ]
        super().__init__(scope, id, what="cluster extension", handler_dir=HANDLER_DIR, services=HANDLER_SERVICES,
                         statements=statements, total_timeout=TOTAL_TIMEOUT, placement=placement)
        # cfn-lint 1.58.0's list of IAM actions (a snapshot of the Service Authorization Reference) predates the
        # cluster extension API; the actions are the API's operation names, SageMaker's convention. Only that check
        # is set aside, on this policy only (tests/stacks/test_slurm_prometheus.py lists what it would report).
        self.policy.node.default_child.add_metadata(  # type: ignore[union-attr]
            "cfn-lint", {"config": {"ignore_checks": [ACTIONS_UNKNOWN_TO_CFN_LINT]}})
        acknowledge(self.policy, [
            (wildcard("Resource", f"{nag_arn_prefix(stack)('sagemaker')}{EXTENSION_RESOURCE}"),
             f"SageMaker assigns an extension's ARN when {self.handler_name} creates it, so it is unknown before; "
             "scoped to HyperPod's extensions (extension/sagemaker-) of this account and region."),
        ])


class ClusterExtension(Construct):
    """``Custom::ClusterExtension``: ``extension`` installed on the cluster ``cluster_arn``, its settings naming
    ``remote_write_url`` (a deploy-time value). ``resource`` is the primary child; ``attr_arn`` the extension's
    ARN."""

    def __init__(self, scope: Construct, id: str, *, extension: ExtensionPlan, cluster_arn: str,
                 remote_write_url: str, provider: ClusterExtensionProvider) -> None:
        super().__init__(scope, id)
        properties = emit(CLUSTER_EXTENSION, extension, {
            "ClusterArn": cluster_arn,
            "ConfigurationValues": configuration_text(extension, remote_write_url)})
        self.resource = CustomResource(self, "Resource", service_token=provider.service_token,
                                       resource_type=RESOURCE_TYPE, properties=properties)
        self.attr_arn = self.resource.get_att_string("Arn")
