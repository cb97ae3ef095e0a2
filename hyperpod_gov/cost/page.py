"""The base platform's fixed monthly cost, computed from the plan's resource counts (``inventory.resource_counts``)
and the EKS support tier of the spec's Kubernetes version on a given day (``support.support``).

``cost_lines`` is what ``explain`` prints; ``cost_table`` is docs/cost.md's table (tests/cost/test_cost_page.py
writes it with ``HYPERPOD_GOV_UPDATE_DOCS=1``). List prices in us-east-1, 730 hours a month.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Optional

from ..plan import Plan
from .inventory import resource_counts
from .support import EXTENDED_PRICING_POST, HOURLY_USD, PRICING_SOURCE, Support, support

HOURS = 730  # a month, as AWS's pricing pages count it
NAT_HOURLY = 0.045  # per NAT gateway-hour, plus 0.045 a GB processed
IPV4_HOURLY = 0.005  # per public IPv4 address-hour
ENDPOINT_AZ_HOURLY = 0.01  # per interface endpoint per AZ-hour, plus 0.01 a GB
DASHBOARD_MONTHLY = 3.00  # per dashboard (3 free per account, not counted here)
ALARM_METRIC_MONTHLY = 0.10  # per metric a standard-resolution alarm reads
CUSTOM_METRIC_MONTHLY = 0.30  # per custom metric, the first 10,000
KMS_KEY_MONTHLY = 1.00  # per customer-managed key (+1 for each of the first two yearly rotations)

VPC_PRICING = "https://aws.amazon.com/vpc/pricing/"
PRIVATELINK_PRICING = "https://aws.amazon.com/privatelink/pricing/"
CLOUDWATCH_PRICING = "https://aws.amazon.com/cloudwatch/pricing/"
KMS_PRICING = "https://aws.amazon.com/kms/pricing/"


@dataclass(frozen=True)
class CostLine:
    """One row: what, how many (and of which CloudFormation type), the rate, USD a month (None: billed by use)."""

    item: str
    count: str
    rate: str
    monthly: Optional[float]
    source: str


def cost_lines(plan: Plan, today: dt.date) -> list[CostLine]:
    """The rows of the fixed monthly cost of what ``plan`` creates, the EKS control plane in the tier its
    Kubernetes version is in on ``today``."""
    n = resource_counts(plan)
    out: list[CostLine] = []
    eks = n.get("AWS::EKS::Cluster", 0)
    if eks:
        tier = support(plan.cluster.kubernetes_version, today)
        out.append(CostLine("EKS control plane", f"{eks} (AWS::EKS::Cluster), Kubernetes "
                            f"{plan.cluster.kubernetes_version}: {tier.tier} support on {today}",
                            f"USD {tier.hourly_usd:.2f} / cluster-hour ({HOURLY_USD['standard']:.2f} standard, "
                            f"{HOURLY_USD['extended']:.2f} extended)", eks * tier.hourly_usd * HOURS,
                            f"{PRICING_SOURCE}; {EXTENDED_PRICING_POST}"))
    nat = n.get("AWS::EC2::NatGateway", 0)
    if nat:
        out.append(CostLine("NAT gateway", f"{nat} (AWS::EC2::NatGateway)", f"USD {NAT_HOURLY} / hour + "
                            f"{NAT_HOURLY} / GB", nat * NAT_HOURLY * HOURS, VPC_PRICING))
    ips = n.get("AWS::EC2::EIP", 0)
    if ips:
        out.append(CostLine("its public IPv4 address", f"{ips} (AWS::EC2::EIP)", f"USD {IPV4_HOURLY} / hour",
                            ips * IPV4_HOURLY * HOURS, VPC_PRICING))
    gateways = 1 if plan.stacks.capacity is not None and plan.network.gateway_endpoint else 0
    interface = n.get("AWS::EC2::VPCEndpoint", 0) - gateways
    if interface:
        azs = len(plan.network.availability_zones)
        out.append(CostLine("interface endpoints", f"{interface} (AWS::EC2::VPCEndpoint) x {azs} AZs",
                            f"USD {ENDPOINT_AZ_HOURLY} / endpoint-AZ-hour + {ENDPOINT_AZ_HOURLY} / GB",
                            interface * azs * ENDPOINT_AZ_HOURLY * HOURS, PRIVATELINK_PRICING))
    if gateways:
        out.append(CostLine("S3 gateway endpoint", "1 (AWS::EC2::VPCEndpoint)", "free", 0.0, PRIVATELINK_PRICING))
    counts = plan.monitoring.counts
    dashboards = n.get("AWS::CloudWatch::Dashboard", 0)
    if dashboards:
        out.append(CostLine("CloudWatch dashboards", f"{dashboards} (AWS::CloudWatch::Dashboard)",
                            f"USD {DASHBOARD_MONTHLY:.2f} / dashboard (3 free per account)",
                            dashboards * DASHBOARD_MONTHLY, CLOUDWATCH_PRICING))
    alarms = n.get("AWS::CloudWatch::Alarm", 0)
    if alarms:
        out.append(CostLine("CloudWatch alarms", f"{alarms} (AWS::CloudWatch::Alarm), reading {counts.alarm_metrics} "
                            "metrics", f"USD {ALARM_METRIC_MONTHLY:.2f} / alarm metric",
                            counts.alarm_metrics * ALARM_METRIC_MONTHLY, CLOUDWATCH_PRICING))
    if eks and counts.kueue_metric_streams:
        out.append(CostLine("Kueue metrics (ContainerInsights/Prometheus)", f"at least {counts.kueue_metric_streams}",
                            f"USD {CUSTOM_METRIC_MONTHLY:.2f} / metric (first 10,000)",
                            counts.kueue_metric_streams * CUSTOM_METRIC_MONTHLY, CLOUDWATCH_PRICING))
    keys = n.get("AWS::KMS::Key", 0)
    if keys:
        out.append(CostLine("KMS keys, rotating yearly", f"{keys} (AWS::KMS::Key)", f"USD {KMS_KEY_MONTHLY:.2f} / "
                            "key, +1 for each of the first two rotations", keys * KMS_KEY_MONTHLY, KMS_PRICING))
    by_use = [f"{n[t]} {t}" for t in ("AWS::SNS::Topic", "AWS::SNS::Subscription", "AWS::Logs::LogGroup",
                                      "AWS::EC2::FlowLog", "AWS::S3::Bucket", "AWS::FSx::FileSystem",
                                      "AWS::SageMaker::Cluster", "AWS::APS::Workspace",
                                      "AWS::APS::RuleGroupsNamespace", "AWS::Grafana::Workspace") if n.get(t)]
    if by_use:
        observed = any(n.get(t) for t in ("AWS::APS::Workspace", "AWS::Grafana::Workspace"))
        out.append(CostLine("billed by use (messages, GB ingested and stored, file system capacity, "
                            "instance-hours" + (", samples and rule evaluations, Grafana users" if observed else "")
                            + ")", ", ".join(by_use), "by use", None,
                            "the services' pricing pages; HyperPod instances: aws.amazon.com/sagemaker/pricing/"))
    return out


def monthly_total(lines: list[CostLine]) -> float:
    return sum(line.monthly or 0.0 for line in lines)


def tier_of(plan: Plan, today: dt.date) -> Optional[Support]:
    """The support tier of the plan's EKS cluster on ``today`` (None: no EKS cluster is created)."""
    if plan.stacks.capacity is None or plan.slurm is not None:
        return None
    return support(plan.cluster.kubernetes_version, today)


def explain_cost(plan: Plan, today: dt.date) -> list[str]:
    """``explain``'s lines: the resources created per billed CloudFormation type, the support tier and the total."""
    n = resource_counts(plan)
    out = ["Resources created, billed ones (per CloudFormation type, as synthesized):",
           *(f"  {t}: {count}" for t, count in n.items())]
    lines = cost_lines(plan, today)
    tier = tier_of(plan, today)
    if tier is not None:
        out.append(f"  {tier.words()}")
    if lines:
        out.append(f"  fixed cost: about USD {monthly_total(lines):,.2f} a month before traffic, logs and instances "
                   "(us-east-1 list prices; docs/cost.md)")
    return out


def cost_table(lines: list[CostLine]) -> str:
    """docs/cost.md's table, with the total as its last row."""
    rows = ["| item | count | rate | per month | source |", "|---|---|---|---|---|"]
    for line in lines:
        money = "by use" if line.monthly is None else f"USD {line.monthly:,.2f}"
        rows.append(f"| {line.item} | {line.count} | {line.rate} | {money} | {line.source} |")
    rows.append(f"| **total** | | | **USD {monthly_total(lines):,.2f}** + traffic and logs | |")
    return "\n".join(rows)


def monitoring_lines(plan: Plan) -> list[str]:
    """``explain``'s CloudWatch lines: dashboards, alarms, the owners' topics as synthesized, the Kueue metrics."""
    counts, n = plan.monitoring.counts, resource_counts(plan)
    return [f"dashboards: {n.get('AWS::CloudWatch::Dashboard', 0)}",
            f"alarms: {n.get('AWS::CloudWatch::Alarm', 0)} (reading {counts.alarm_metrics} metrics)",
            f"SNS topics: {n.get('AWS::SNS::Topic', 0)} for {counts.topics} owner(s), one per owner in each stack "
            "holding its teams' alarms (KMS-encrypted, one key)",
            f"custom metrics: at least {counts.kueue_metric_streams} Kueue metric streams in "
            "ContainerInsights/Prometheus (plus one per eviction reason that occurs)"]


def calendar_table(today: dt.date) -> str:
    """Every Kubernetes version the spec accepts, its EKS support dates and its tier on ``today``."""
    from ..spec.types import KUBERNETES_VERSIONS
    from .support import CALENDAR

    rows = [f"| Kubernetes | end of standard support | end of extended support | tier on {today} |",
            "|---|---|---|---|"]
    for version in KUBERNETES_VERSIONS:
        standard_end, extended_end = CALENDAR[version]
        tier = support(version, today).tier
        rows.append(f"| {version} | {standard_end} | {extended_end} | "
                    f"{'past extended support (EKS upgrades it)' if tier == 'ended' else tier} |")
    return "\n".join(rows)


def cost_summary(plan: Plan, today: dt.date) -> str:
    """One sentence: the fixed monthly total on ``today`` and, when the tier differs, in the other tier."""
    lines = cost_lines(plan, today)
    tier = tier_of(plan, today)
    total = monthly_total(lines)
    if tier is None:
        return f"About **USD {total:,.0f} a month** before instances, traffic and logs."
    eks = resource_counts(plan).get("AWS::EKS::Cluster", 0)
    other = "standard" if tier.tier != "standard" else "extended"
    delta = eks * (HOURLY_USD[other] - tier.hourly_usd) * HOURS
    return (f"About **USD {total:,.0f} a month** before instances, traffic and logs on {today}, with Kubernetes "
            f"{tier.version} in EKS {'extended' if tier.tier != 'standard' else 'standard'} support "
            f"(USD {total + delta:,.0f} in {other} support)")
