"""The cluster's VPC: private subnets across AZs, flow logs, and the endpoints a private cluster needs."""

from __future__ import annotations

from functools import partial
from typing import Optional

from aws_cdk import Aws, RemovalPolicy, aws_ec2 as ec2, aws_iam as iam, aws_kms as kms, aws_logs as logs
from constructs import Construct

from ..plan import NetworkPlan
from ..plan.endpoint_policies import endpoint_policy
from ._nag import acknowledge

# Interface endpoints by the plan's names (plan.plan.INTERFACE_ENDPOINTS), in the plan's order.
SERVICES: dict[str, ec2.InterfaceVpcEndpointAwsService] = {
    "EcrApi": ec2.InterfaceVpcEndpointAwsService.ECR,
    "EcrDkr": ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER,
    "Ec2": ec2.InterfaceVpcEndpointAwsService.EC2,
    "Sts": ec2.InterfaceVpcEndpointAwsService.STS,
    "Eks": ec2.InterfaceVpcEndpointAwsService.EKS,
    "EksAuth": ec2.InterfaceVpcEndpointAwsService.EKS_AUTH,
    "Logs": ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
    "Monitoring": ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING,
    "SageMakerApi": ec2.InterfaceVpcEndpointAwsService.SAGEMAKER_API,
    "Ssm": ec2.InterfaceVpcEndpointAwsService.SSM,
    "S3Interface": ec2.InterfaceVpcEndpointAwsService.S3,
    # Where the teams' workload identities name keys or secrets (plan.derive_cluster.data_endpoints).
    "Kms": ec2.InterfaceVpcEndpointAwsService.KMS,
    "SecretsManager": ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
}


def flow_log_trust_conditions() -> dict:
    return {
        "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
        "ArnLike": {"aws:SourceArn": f"arn:{Aws.PARTITION}:ec2:{Aws.REGION}:{Aws.ACCOUNT_ID}:vpc-flow-log/*"},
    }


class Network(Construct):
    """The cluster's VPC and what a private cluster needs in it.

    A new VPC: private subnets, one NAT gateway, encrypted flow logs, and VPC endpoints open to the VPC on 443.
    An existing VPC (``network.existing``): imported from the spec's ids without a lookup; endpoints and flow
    logs only where the spec asks, never a NAT gateway or subnets. ``vpc`` and ``private_subnets`` are what the
    EKS and HyperPod constructs use either way.
    """

    def __init__(self, scope: Construct, id: str, *, network: NetworkPlan, vpc: Optional[ec2.IVpc] = None) -> None:
        super().__init__(scope, id)
        self.flow_logs_key: Optional[kms.Key] = None
        self.flow_log: Optional[ec2.FlowLog] = None
        self.endpoint_security_group: Optional[ec2.SecurityGroup] = None
        self._from_app = vpc is not None  # the app's VPC: whatever is added to it is created here, in this stack
        existing = network.existing
        self.private_subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        if existing is None:
            self.vpc: ec2.IVpc = self._new_vpc(network)
        elif existing.vpc_id is None:  # cluster.vpc.fromApp: the app's VPC (HyperPodGovernance's vpc=)
            if vpc is None:
                raise ValueError("cluster.vpc.fromApp: the app gives the VPC (vpc=), and none was given")
            self.vpc = vpc
            if not vpc.private_subnets:  # a VPC without egress: its isolated subnets are its private ones
                self.private_subnets = ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
        else:
            self.vpc = ec2.Vpc.from_vpc_attributes(
                self, "Resource", vpc_id=existing.vpc_id, vpc_cidr_block=network.cidr,
                availability_zones=list(network.availability_zones),
                private_subnet_ids=list(existing.private_subnet_ids),
            )
        if network.flow_logs:
            # Under the new VPC's scope, as Vpc.add_flow_log puts it (its logical ids stay as they were).
            self._flow_logs(self.vpc if isinstance(self.vpc, ec2.Vpc) and not self._from_app else self)
        if network.interface_endpoints:
            self._endpoints(network)

    def _new_vpc(self, network: NetworkPlan) -> ec2.Vpc:
        vpc = ec2.Vpc(
            self,
            "Resource",
            ip_addresses=ec2.IpAddresses.cidr(network.cidr),
            availability_zones=list(network.availability_zones),
            nat_gateways=1,
            subnet_configuration=[
                ec2.SubnetConfiguration(name="Public", subnet_type=ec2.SubnetType.PUBLIC,
                                        cidr_mask=network.public_mask, map_public_ip_on_launch=False),
                ec2.SubnetConfiguration(name="Private", subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS,
                                        cidr_mask=network.private_mask),
            ],
            restrict_default_security_group=False,
        )
        # Explicit AZ names keep synth offline (no lookup); the CDK CLI's template check flags them.
        acknowledge(vpc, [("CloudFormation-Validate::W3010", "AZ names come from the spec (or the "
                           "region's a, b, ... by default) so that synth needs no AWS credentials.")])
        return vpc

    def _flow_logs(self, scope: Construct) -> None:
        # Flow logs name every peer of every pod: encrypted with a key of this account, usable by CloudWatch Logs
        # for this account's log groups only (the key policy AWS documents for encrypted log groups).
        self.flow_logs_key = kms.Key(
            self, "FlowLogsKey", enable_key_rotation=True, removal_policy=RemovalPolicy.RETAIN,
            description="Encrypts the VPC flow logs of the HyperPod cluster's VPC",
        )
        self.flow_logs_key.add_to_resource_policy(iam.PolicyStatement(
            sid="CloudWatchLogsOfThisAccount",
            principals=[iam.ServicePrincipal(f"logs.{Aws.REGION}.amazonaws.com")],
            actions=["kms:Decrypt*", "kms:Describe*", "kms:Encrypt*", "kms:GenerateDataKey*", "kms:ReEncrypt*"],
            resources=["*"],
            conditions={"ArnLike": {"kms:EncryptionContext:aws:logs:arn":
                                    f"arn:{Aws.PARTITION}:logs:{Aws.REGION}:{Aws.ACCOUNT_ID}:log-group:*"}},
        ))
        flow_log_group = logs.LogGroup(
            self, "FlowLogs", retention=logs.RetentionDays.ONE_YEAR, removal_policy=RemovalPolicy.RETAIN,
            encryption_key=self.flow_logs_key,
        )
        self.flow_log = ec2.FlowLog(
            scope, "FlowLog", resource_type=ec2.FlowLogResourceType.from_vpc(self.vpc),
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_log_group),
            traffic_type=ec2.FlowLogTrafficType.ALL,
        )
        # Confused deputy: the flow-logs service assumes the role only for flow logs of this account and region
        # (the conditions AWS documents for vpc-flow-logs.amazonaws.com).
        role: iam.CfnRole = self.flow_log.iam_role.node.default_child  # type: ignore[union-attr, assignment]
        role.add_property_override("AssumeRolePolicyDocument.Statement.0.Condition", flow_log_trust_conditions())

    def _endpoints(self, network: NetworkPlan) -> None:
        self.endpoint_security_group = ec2.SecurityGroup(
            self, "EndpointSecurityGroup", vpc=self.vpc, allow_all_outbound=False,
            description="VPC interface endpoints: HTTPS from inside the VPC only",
        )
        self.endpoint_security_group.add_ingress_rule(
            ec2.Peer.ipv4(network.cidr), ec2.Port.tcp(443), "HTTPS from the VPC"
        )
        # The gateway endpoint carries the nodes' S3 traffic at no cost; pods reach S3 through the interface
        # endpoint instead: its private DNS answers for every resolver in the VPC with VPC addresses, which the
        # teams' NetworkPolicies allow (S3's public addresses behind the gateway they do not).
        gateway = None
        if network.gateway_endpoint:
            gateway = self.vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)
            self._limit(gateway, network, "S3Gateway")
        for name in network.interface_endpoints:
            # "All resolvers" is an option of a VPC that has both S3 endpoints.
            both = name == "S3Interface" and gateway is not None
            # A VPC of this stack takes its endpoints as children (their logical ids stay as they were); the app's
            # VPC, from another stack, must not: they are created under this construct.
            add = (partial(ec2.InterfaceVpcEndpoint, self, name, vpc=self.vpc) if self._from_app
                   else partial(self.vpc.add_interface_endpoint, name))
            endpoint = add(
                service=SERVICES[name],
                private_dns_enabled=True,
                private_dns_only_for_inbound_resolver_endpoint=(
                    ec2.VpcEndpointPrivateDnsOnlyForInboundResolverEndpoint.ALL_RESOLVERS if both else None
                ),
                subnets=self.private_subnets,
                security_groups=[self.endpoint_security_group],
                open=False,
            )
            self._limit(endpoint, network, name)
            if both:
                endpoint.node.add_dependency(gateway)

    @staticmethod
    def _limit(endpoint: ec2.GatewayVpcEndpoint | ec2.InterfaceVpcEndpoint, network: NetworkPlan, name: str) -> None:
        """The endpoint's policy: the spec's accounts (plan.endpoint_policies), or none in a plan without them."""
        if network.perimeter is None:
            return
        for statement in endpoint_policy(network.perimeter, name)["Statement"]:
            endpoint.add_to_policy(iam.PolicyStatement.from_json(statement))
