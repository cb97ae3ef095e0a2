"""What a plan creates that is billed, per CloudFormation type, from the same plan parts the stacks emit from.

``resource_counts(plan)`` follows the stacks (``stacks/capacity.py``, ``stacks/governance.py``): the capacity stack's
VPC, EKS and HyperPod clusters, buckets and keys; the monitoring stack's alarm key and platform topic; each team
stack's owner topics (``MonitoringPlan.owner_topics`` of its teams: an owner whose teams sit in two team stacks gets a
topic in each), alarms, dashboards, team buckets and the task-governance provider's key and log groups; the
Prometheus and Grafana workspaces and the evidence bucket where the spec asks for them. Tests
(tests/cost/test_inventory.py, test_inventory_monitoring.py) compare every type of ``BILLED_TYPES`` with the
synthesized templates of both examples and of a Prometheus and an evidence spec, and hold every other synthesized
type to ``UNBILLED_TYPES``: a new billed resource fails them until it is counted here.
"""

from __future__ import annotations

from collections import Counter

from ..plan import Plan
from ..plan.evidence import evidence_of
from ..plan.monitoring import PLATFORM_TOPIC

# Billed by the hour, by the month or by what they hold; `explain` and docs/cost.md report these.
BILLED_TYPES = (
    "AWS::APS::RuleGroupsNamespace",
    "AWS::APS::Workspace",
    "AWS::CloudWatch::Alarm",
    "AWS::CloudWatch::Dashboard",
    "AWS::EC2::EIP",
    "AWS::EC2::FlowLog",
    "AWS::EC2::NatGateway",
    "AWS::EC2::VPCEndpoint",
    "AWS::EKS::Cluster",
    "AWS::FSx::FileSystem",
    "AWS::Grafana::Workspace",
    "AWS::KMS::Key",
    "AWS::Logs::LogGroup",
    "AWS::S3::Bucket",
    "AWS::SNS::Subscription",
    "AWS::SNS::Topic",
    "AWS::SageMaker::Cluster",
)

# No charge of their own (IAM, routing, policies, access entries, add-ons, task governance objects, standard SSM
# parameters), or billed per request only (Lambda, the custom resources it backs, DataZone connections).
UNBILLED_TYPES = frozenset({
    "AWS::DataZone::Connection", "AWS::EC2::InternetGateway", "AWS::EC2::Route", "AWS::EC2::RouteTable",
    "AWS::EC2::SecurityGroup", "AWS::EC2::SecurityGroupEgress", "AWS::EC2::SecurityGroupIngress", "AWS::EC2::Subnet",
    "AWS::EC2::SubnetRouteTableAssociation", "AWS::EC2::VPC", "AWS::EC2::VPCGatewayAttachment",
    "AWS::EKS::AccessEntry", "AWS::EKS::Addon", "AWS::EKS::PodIdentityAssociation", "AWS::IAM::ManagedPolicy",
    "AWS::IAM::OIDCProvider", "AWS::IAM::Policy", "AWS::IAM::Role", "AWS::KMS::Alias", "AWS::Lambda::Function",
    "AWS::Lambda::LayerVersion", "AWS::Lambda::Permission", "AWS::S3::BucketPolicy", "AWS::SNS::TopicPolicy",
    "AWS::SSM::Parameter", "AWS::SageMaker::ClusterSchedulerConfig", "AWS::SageMaker::ComputeQuota",
    "AWS::StepFunctions::StateMachine",
})


def resource_counts(plan: Plan) -> dict[str, int]:
    """How many resources of each ``BILLED_TYPES`` type the plan's stacks create (types with none left out)."""
    n: Counter[str] = Counter()
    stacks = plan.stacks
    prometheus = plan.prometheus
    if stacks.capacity is not None:
        _capacity(plan, n)
    if stacks.monitoring is not None:
        monitoring = plan.monitoring
        n["AWS::KMS::Key"] += 1  # AlarmTopics' key: every alarm topic is encrypted with it
        platform = [t for t in monitoring.topics if t.key == PLATFORM_TOPIC]
        n["AWS::SNS::Topic"] += len(platform)
        n["AWS::SNS::Subscription"] += sum(1 for t in platform if t.email)
        n["AWS::CloudWatch::Dashboard"] += len(monitoring.cluster_dashboards)  # page 1 here, the rest: their own
    _observability(plan, n)
    providers = 0
    if plan.slurm is not None and prometheus is not None:
        providers += 1  # the cluster extension's provider (constructs/cluster_extension.py), built like this one
    if plan.task_governance_backend == "custom-resource" and stacks.governance is not None:
        providers += 1  # the cluster policy's provider, in the governance stack
    for shard in stacks.teams:
        teams = [plan.team(name) for name in shard.members]
        topics = plan.monitoring.owner_topics(t.monitoring for t in teams)
        n["AWS::SNS::Topic"] += len(topics)
        n["AWS::SNS::Subscription"] += sum(1 for t in topics if t.email)
        for team in teams:
            if prometheus is None or not prometheus.alerts_in_prometheus:  # else rules in the workspace
                n["AWS::CloudWatch::Alarm"] += len(team.monitoring.alarms)
            n["AWS::CloudWatch::Dashboard"] += 1 if team.monitoring.dashboard else 0
            if team.storage is not None:  # TeamStorage: its key, its bucket and the bucket's access logs
                n["AWS::KMS::Key"] += 1
                n["AWS::S3::Bucket"] += 2
        if plan.task_governance_backend == "custom-resource":
            providers += 1  # each team stack's own provider (GovernedCluster.provider)
    # TaskGovernanceProvider, ClusterExtensionProvider: a logs key, the handlers' and the framework's log groups
    n["AWS::KMS::Key"] += providers
    n["AWS::Logs::LogGroup"] += 2 * providers
    return {t: n[t] for t in BILLED_TYPES if n[t]}


def _observability(plan: Plan, n: Counter[str]) -> None:
    """monitoring.prometheus, monitoring.grafana (constructs/prometheus.py) and monitoring.evidence
    (constructs/evidence.py)."""
    prometheus = plan.prometheus
    if prometheus is not None:
        if prometheus.creates:  # the workspace, its key, one rule groups namespace per team with rules
            n["AWS::APS::Workspace"] += 1
            n["AWS::KMS::Key"] += 1
            n["AWS::APS::RuleGroupsNamespace"] += len(prometheus.rules)
        if prometheus.grafana is not None:
            n["AWS::Grafana::Workspace"] += 1
    evidence = evidence_of(plan)
    if evidence is not None:  # always created when asked for: the bucket, its key and its access logs' bucket
        n["AWS::S3::Bucket"] += 2
        n["AWS::KMS::Key"] += 1


def _capacity(plan: Plan, n: Counter[str]) -> None:
    """The capacity stack: network, clusters, lifecycle bucket, operators' TLS bucket, shared file system."""
    network = plan.network
    if network.creates_vpc:
        n["AWS::EC2::NatGateway"] += 1  # constructs/network.py: nat_gateways=1
        n["AWS::EC2::EIP"] += 1  # the NAT gateway's public address
    if network.flow_logs:  # flow logs: their key, their log group
        n["AWS::EC2::FlowLog"] += 1
        n["AWS::KMS::Key"] += 1
        n["AWS::Logs::LogGroup"] += 1
    if network.interface_endpoints:
        n["AWS::EC2::VPCEndpoint"] += len(network.interface_endpoints) + (1 if network.gateway_endpoint else 0)
    n["AWS::SageMaker::Cluster"] += 1
    n["AWS::S3::Bucket"] += 2  # LifecycleScripts: the scripts' bucket and its access logs
    if plan.slurm is None:
        n["AWS::EKS::Cluster"] += 1
        n["AWS::KMS::Key"] += 1  # EksCluster: the secrets key
        if any(a.inference for a in plan.operator_addons):
            n["AWS::S3::Bucket"] += 2  # Operators: the inference operator's TLS bucket and its access logs
    storage = plan.shared_storage
    if storage is not None and storage.file_system.created:
        n["AWS::FSx::FileSystem"] += 1
        n["AWS::KMS::Key"] += 1  # SharedFileSystem: the file system's own key
