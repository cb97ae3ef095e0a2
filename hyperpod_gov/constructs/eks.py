"""The EKS cluster that orchestrates HyperPod: private API, KMS-encrypted secrets, every log type."""

from __future__ import annotations

from aws_cdk import Aws, RemovalPolicy, aws_ec2 as ec2, aws_eks_v2 as eks, aws_kms as kms
from constructs import Construct

from ..plan import ClusterPlan
from ..plan.addon_defaults import kubectl_layer as kubectl_layer_import
from ..plan.api_access import API_PORT, ApiSource
from ..plan.plan import AdminPlan
from ..plan.tables import ADMIN_ENTRY, cfn_kwargs
from ..plan.tables_access import with_partition
from ._nag import acknowledge, managed_policy, wildcard
from .network import Network

# Access entries only: the aws-auth ConfigMap would be a second way in, open to anyone who may edit it.
# API_AND_CONFIG_MAP only where the spec asks (cluster.authenticationMode).
AUTHENTICATION_MODE = "API"
ALL_LOG_TYPES = (
    eks.ClusterLoggingTypes.API,
    eks.ClusterLoggingTypes.AUDIT,
    eks.ClusterLoggingTypes.AUTHENTICATOR,
    eks.ClusterLoggingTypes.CONTROLLER_MANAGER,
    eks.ClusterLoggingTypes.SCHEDULER,
)


def kubectl_layer(scope: Construct, id: str, kubernetes_version: str) -> Construct:
    """The kubectl/helm Lambda layer built for the cluster's Kubernetes version (``addon_defaults.kubectl_layer``)."""
    import importlib

    module, layer = kubectl_layer_import(kubernetes_version)
    return getattr(importlib.import_module(module), layer)(scope, id)


class AdminAccessEntry(Construct):
    """A cluster admin's access entry: ``resource`` (``node.default_child``), its ``AWS::EKS::AccessEntry``, built
    from the ``ADMIN_ENTRY`` table's rows for ``admin`` (EKS's cluster-admin policy at cluster scope, its ARN in the
    partition the stack is deployed to)."""

    def __init__(self, scope: Construct, id: str, *, admin: AdminPlan, cluster_name: str) -> None:
        super().__init__(scope, id)
        props = cfn_kwargs(ADMIN_ENTRY, admin, {"clusterName": cluster_name})
        self.resource = eks.CfnAccessEntry(self, "Resource", **with_partition(props, Aws.PARTITION))


class EksCluster(Construct):
    """EKS cluster with access entries for the spec's admins only, and a kubectl handler inside the VPC."""

    def __init__(self, scope: Construct, id: str, *, cluster: ClusterPlan, network: Network,
                 authentication_mode: str = AUTHENTICATION_MODE) -> None:
        super().__init__(scope, id)
        c = cluster
        self.secrets_key = kms.Key(
            self,
            "SecretsKey",
            enable_key_rotation=True,
            description=f"Envelope encryption of Kubernetes secrets in {c.eks_name}",
            removal_policy=RemovalPolicy.RETAIN,
        )
        if c.endpoint_access == "private":
            endpoint = eks.EndpointAccess.PRIVATE
        else:
            endpoint = eks.EndpointAccess.PUBLIC_AND_PRIVATE.only_from(*c.admin_cidrs)

        self.kubectl_security_group = ec2.SecurityGroup(
            self, "KubectlSecurityGroup", vpc=network.vpc, allow_all_outbound=True,
            description="kubectl handler: reaches the private EKS API and the VPC endpoints",
        )
        self.cluster = eks.Cluster(
            self,
            "Resource",
            cluster_name=c.eks_name,
            version=eks.KubernetesVersion.of(c.kubernetes_version),
            vpc=network.vpc,
            vpc_subnets=[network.private_subnets],
            endpoint_access=endpoint,
            secrets_encryption_key=self.secrets_key,
            cluster_logging=list(ALL_LOG_TYPES),
            default_capacity=0,
            default_capacity_type=eks.DefaultCapacityType.NODEGROUP,
            bootstrap_cluster_creator_admin_permissions=False,
            kubectl_provider_options=eks.KubectlProviderOptions(
                kubectl_layer=kubectl_layer(self, "KubectlLayer", c.kubernetes_version),
                private_subnets=network.vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS).subnets,
                security_groups=[self.kubectl_security_group],
            ),
        )
        self.cfn_cluster: eks.CfnCluster = self.cluster.node.default_child  # type: ignore[assignment]
        self.cfn_cluster.add_property_override("AccessConfig.AuthenticationMode", authentication_mode)
        # The kubectl handler calls the private endpoint from inside the VPC.
        for sg in self.cluster.connections.security_groups:
            sg.add_ingress_rule(self.kubectl_security_group, ec2.Port.tcp(443), "kubectl handler")

        self.api_access = api_access_rules(self, "ApiAccess", sources=c.api_access,
                                           group_id=self.cluster.cluster_security_group_id)

        self.admins = [AdminAccessEntry(self, f"Admin{admin.key}", admin=admin, cluster_name=self.cluster.cluster_name)
                       for admin in c.admins]
        self._acknowledge(c)

    def _acknowledge(self, c: ClusterPlan) -> None:
        handler = "the kubectl handler that aws_eks_v2 runs inside the VPC"
        acknowledge(
            self.cluster,
            [
                (managed_policy("AmazonEKSClusterPolicy"),
                 "AmazonEKSClusterPolicy is the AWS-managed policy EKS requires on its cluster role."),
                (managed_policy("service-role/AWSLambdaBasicExecutionRole"),
                 f"Lets {handler} write its own logs; AWS-managed and limited to CloudWatch Logs."),
                (managed_policy("service-role/AWSLambdaVPCAccessExecutionRole"),
                 f"Lets {handler} attach to the private subnets so it reaches the private EKS endpoint."),
                (managed_policy("AmazonEC2ContainerRegistryReadOnly"),
                 f"Lets {handler} pull Helm charts stored as OCI artifacts in ECR (HyperPod dependencies)."),
                ('AwsSolutions-IAM4[Policy::{"Fn::If":["EksKubectlProviderHandlerHasEcrPublicE0324BD4",'
                 '{"Fn::Join":["",["arn:",{"Ref":"AWS::Partition"},":iam::aws:policy/'
                 'AmazonElasticContainerRegistryPublicReadOnly"]]},{"Ref":"AWS::NoValue"}]}]',
                 f"Only in regions with ECR Public: lets {handler} pull public OCI charts such as Kueue's."),
                ("AwsSolutions-L1", f"The runtime of {handler} is pinned by aws-cdk-lib to the Python version "
                 "its bundled kubectl and helm layer is built for; it moves with aws-cdk-lib upgrades."),
                (wildcard("Resource", "<EksKubectlProviderHandlerFCD70AA3.Arn>:*"),
                 "The provider framework invokes any version of its own kubectl handler function, nothing else."),
            ],
        )
        if c.endpoint_access == "public-and-private":
            acknowledge(
                self.cluster,
                [("AwsSolutions-EKS1", "The spec asks for a public endpoint; it is restricted to "
                  f"cluster.adminCidrs ({', '.join(c.admin_cidrs)}), which the spec rules accept only when "
                  "together they cover at most a /8 of public addresses.")],
            )



def api_access_rules(scope: Construct, id: str, *, sources: tuple[ApiSource, ...],
                     group_id: str) -> list[ec2.CfnSecurityGroupIngress]:
    """``cluster.apiAccess``: one ingress rule on TCP 443 of the EKS cluster security group per network, keyed by
    the network (reordering the spec's lists replaces nothing).

    The EKS cluster security group (``ClusterSecurityGroupId``) is the group EKS puts on the private endpoint's
    network interfaces, so a rule there admits the network to the API and to nothing else on it.
    """
    if not sources:
        return []
    parent = Construct(scope, id)
    rules = []
    for s in sources:
        source = ({"cidr_ip": s.value} if s.kind == "cidr" else
                  {"source_security_group_id": s.value} if s.kind == "security-group" else
                  {"source_prefix_list_id": s.value})
        rules.append(ec2.CfnSecurityGroupIngress(
            parent, s.key, group_id=group_id, ip_protocol="tcp", from_port=API_PORT, to_port=API_PORT,
            description=s.description, **source))
    return rules
