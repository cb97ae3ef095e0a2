"""An EKS cluster that runs already (governance-only mode), imported with a kubectl handler of its own.

The governance stack holds the handler: a Lambda function in the spec's subnets with the spec's security group,
its role given a cluster-admin access entry on the existing cluster, behind a provider whose function has a fixed
name. Every other stack imports the cluster by name and reaches the provider by that function's ARN, a plain
string: no stack exports anything, so each deploys on its own (after the governance stack). Whoever may invoke or
change that function or the handler behind it acts as cluster admin, and the name is known before the function
exists: docs/security.md ("The existing cluster's kubectl provider") gives the service control policy to deny that
to all but the deploying principals.
"""

from __future__ import annotations

from aws_cdk import Annotations, Fn, Stack, aws_ec2 as ec2, aws_eks_v2 as eks, aws_lambda as lambda_
from constructs import Construct

from ..plan.plan import AdminPlan, ClusterPlan, ExistingClusterPlan
from ._nag import acknowledge, managed_policy, wildcard
from .eks import AdminAccessEntry, kubectl_layer


def _existing(cluster: ClusterPlan) -> ExistingClusterPlan:
    if cluster.existing is None:
        raise ValueError(f"cluster {cluster.name} is not an existing cluster (cluster.existing is not set)")
    return cluster.existing


def imported_cluster(scope: Construct, id: str, *, cluster: ClusterPlan, service_token: str) -> eks.ICluster:
    """The existing EKS cluster, its Kubernetes objects applied through the provider at ``service_token``."""
    provider = eks.KubectlProvider.from_kubectl_provider_attributes(scope, f"{id}KubectlProvider",
                                                                   service_token=service_token)
    return eks.Cluster.from_cluster_attributes(scope, id, cluster_name=cluster.eks_name, kubectl_provider=provider)


class ExistingClusterKubectl(Construct):
    """The kubectl handler of an existing EKS cluster. ``cluster`` is the imported cluster to apply objects on;
    ``access_entry`` must exist before anything is applied (callers depend on it)."""

    def __init__(self, scope: Construct, id: str, *, cluster: ClusterPlan, function_name: str) -> None:
        super().__init__(scope, id)
        e = _existing(cluster)
        # Only the subnets and the security group reach the function's VpcConfig: no lookup, and the zones are
        # never read (CDK wants a list; the region's, unresolved, is never emitted).
        vpc = ec2.Vpc.from_vpc_attributes(self, "Vpc", vpc_id=e.vpc_id, availability_zones=Fn.get_azs())
        Annotations.of(vpc).acknowledge_warning(
            "@aws-cdk/aws-ec2:vpcAttributeIsListTokenavailabilityZones",
            "only the kubectl handler uses the imported VPC, with explicit subnets: no subnet is selected by zone")
        subnets = [ec2.Subnet.from_subnet_id(self, f"Subnet-{s}", s) for s in e.subnet_ids]
        for subnet in subnets:
            Annotations.of(subnet).acknowledge_warning(
                "@aws-cdk/aws-ec2:noSubnetRouteTableId",
                "the subnet only places the kubectl handler; nothing here reads or adds routes")
        security_group = ec2.SecurityGroup.from_security_group_id(self, "SecurityGroup", e.security_group_id,
                                                                  mutable=False)
        bare = eks.Cluster.from_cluster_attributes(self, "Target", cluster_name=cluster.eks_name, vpc=vpc)
        self.provider = eks.KubectlProvider(
            self, "Provider",
            cluster=bare,
            kubectl_layer=kubectl_layer(self, "KubectlLayer", cluster.kubernetes_version),
            private_subnets=subnets,
            security_groups=[security_group],
        )
        framework = self.provider.node.find_child("Provider").node.find_child("framework-onEvent")
        self.function: lambda_.Function = framework  # type: ignore[assignment]
        cfn_function: lambda_.CfnFunction = framework.node.default_child  # type: ignore[assignment]
        cfn_function.add_property_override("FunctionName", function_name)
        # The handler's role is a cluster admin, as the spec's admins are: the same table emits its entry.
        handler_admin = AdminPlan(self.provider.role.role_arn, "AccessEntry",  # type: ignore[union-attr]
                                  path="cluster.existing")
        self.access_entry = AdminAccessEntry(self, "AccessEntry", admin=handler_admin, cluster_name=bare.cluster_name)
        self.cluster = eks.Cluster.from_cluster_attributes(self, "Cluster", cluster_name=cluster.eks_name, vpc=vpc,
                                                           kubectl_provider=self.provider)
        self._acknowledge(cluster.eks_name)

    def _acknowledge(self, eks_name: str) -> None:
        handler = f"the kubectl handler of the existing cluster {eks_name}"
        handler_arn = Stack.of(self).get_logical_id(
            self.provider.node.find_child("Handler").node.default_child)  # type: ignore[arg-type]
        acknowledge(self.provider, [
            (managed_policy("service-role/AWSLambdaBasicExecutionRole"),
             f"Lets {handler} and its provider write their own logs; AWS-managed and limited to CloudWatch Logs."),
            (managed_policy("service-role/AWSLambdaVPCAccessExecutionRole"),
             f"Lets {handler} attach to cluster.existing.subnetIds so that it reaches a private EKS endpoint."),
            (managed_policy("AmazonEC2ContainerRegistryReadOnly"),
             f"Lets {handler} pull Helm charts stored as OCI artifacts in ECR."),
            ('AwsSolutions-IAM4[Policy::{"Fn::If":["KubectlProviderHandlerHasEcrPublicF3AC66B7",'
             '{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":iam::aws:policy/'
             'AmazonElasticContainerRegistryPublicReadOnly"]]},{"Ref":"AWS::NoValue"}]}]',
             f"Only in regions with ECR Public: lets {handler} pull public OCI charts such as Kueue's."),
            ("AwsSolutions-L1", f"The runtime of {handler} is pinned by aws-cdk-lib to the Python version its "
             "bundled kubectl and helm layer is built for; it moves with aws-cdk-lib upgrades."),
            (wildcard("Resource", f"<{handler_arn}.Arn>:*"),
             "The provider framework invokes any version of its own kubectl handler function, nothing else."),
        ])
