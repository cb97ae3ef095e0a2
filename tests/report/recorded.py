"""GetMetricData requests and responses in the shape CloudWatch takes and returns them.

The expected requests are written out here by hand (namespace, metric name, dimensions, statistic, period), not
taken from ``report.metrics``: a Stubber fails a test whose report asks CloudWatch for anything else.
"""

from __future__ import annotations

import datetime as dt
from typing import Callable, Iterable, Optional

import boto3
from botocore.stub import Stubber

from hyperpod_gov.plan import Plan

END = dt.datetime(2026, 11, 30, 0, 0, tzinfo=dt.timezone.utc)
NOW = END + dt.timedelta(minutes=37)
DAYS = 30
HOURS = [END - dt.timedelta(hours=h) for h in range(DAYS * 24, 0, -1)]  # ascending, the window's hour starts

# What the CloudWatch agent publishes (aws/amazon-cloudwatch-agent, awsemf kueue.go and kubernetes.go).
KUEUE_NAMESPACE = "ContainerInsights/Prometheus"
USAGE_METRIC = "kueue_cluster_queue_resource_usage"
PENDING_METRIC = "kueue_pending_workloads"
EVICTED_METRIC = "kueue_evicted_workloads_total"
UTILISATION_METRIC = {"nvidia.com/gpu": "pod_gpu_utilization", "aws.amazon.com/neuron": "pod_neuroncore_utilization"}

Hourly = Callable[[dt.datetime], Optional[float]]  # None: no data point that hour


def result(qid: str, label: str, hourly: Hourly, hours: Iterable[dt.datetime] = HOURS) -> dict:
    stamps, values = [], []
    for h in hours:
        v = hourly(h)
        if v is not None:
            stamps.append(h)
            values.append(float(v))
    return {"Id": qid, "Label": label, "Timestamps": stamps, "Values": values, "StatusCode": "Complete"}


def client() -> tuple[object, Stubber]:
    c = boto3.client("cloudwatch", region_name="us-east-1", aws_access_key_id="testing",
                     aws_secret_access_key="testing")
    return c, Stubber(c)


def _stat(namespace: str, metric: str, dimensions: list[tuple[str, str]], stat: str) -> dict:
    return {"MetricStat": {"Metric": {"Namespace": namespace, "MetricName": metric,
                                      "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions]},
                           "Period": 3600, "Stat": stat},
            "ReturnData": True}


def expected_queries(plan: Plan) -> tuple[list[dict], list[dict]]:
    """The report's queries for a plan, hourly: (metric queries, SEARCH queries), each in the order sent."""
    cluster = plan.eks_cluster_name
    plain: list[dict] = []
    searches: list[dict] = []
    for k, team in enumerate(plan.teams):
        queue = team.cluster_queue
        for i, f in enumerate(team.owned):
            dims = [("ClusterName", cluster), ("ClusterQueue", queue), ("Flavor", plan.flavor(f.instance_type).name),
                    ("Resource", f.mig_resource or f.accelerator_kind or "cpu")]
            for stat, tag in (("Average", "avg"), ("Maximum", "max")):
                plain.append({"Id": f"t{k}_u{i}_{tag}", **_stat(KUEUE_NAMESPACE, USAGE_METRIC, dims, stat)})
        plain.append({"Id": f"t{k}_pending", **_stat(KUEUE_NAMESPACE, PENDING_METRIC,
                                                      [("ClusterName", cluster), ("ClusterQueue", queue)], "Maximum")})
        searches.append({
            "Id": f"t{k}_evictions",
            "Expression": f"SEARCH('{{{KUEUE_NAMESPACE},ClusterName,ClusterQueue,Reason}} MetricName="
                          f"\"{EVICTED_METRIC}\" ClusterName=\"{cluster}\" ClusterQueue=\"{queue}\"', 'Sum', 3600)",
            "Label": "${PROP('Dim.Reason')}", "Period": 3600, "ReturnData": True})
        kinds = sorted({f.accelerator_kind for f in team.owned if f.accelerator_kind})
        if kinds:
            metric = UTILISATION_METRIC["nvidia.com/gpu" if "nvidia.com/gpu" in kinds else kinds[0]]
            plain.append({"Id": f"t{k}_util", **_stat("ContainerInsights", metric,
                                                      [("ClusterName", cluster), ("Namespace", team.namespace)],
                                                      "Average")})
    return plain, searches


def expected_calls(plan: Plan) -> list[list[dict]]:
    """The ``MetricDataQueries`` of each call: metric queries 500 a call, then SEARCHes 50 a call."""
    plain, searches = expected_queries(plan)
    return [plain[i:i + 500] for i in range(0, len(plain), 500)] + \
        [searches[i:i + 50] for i in range(0, len(searches), 50)]


def expected(queries: list[dict], next_token: Optional[str] = None) -> dict:
    params = {"MetricDataQueries": queries, "StartTime": END - dt.timedelta(days=DAYS), "EndTime": END,
              "ScanBy": "TimestampAscending"}
    if next_token:
        params["NextToken"] = next_token
    return params


def stub_pages(stubber: Stubber, queries: list[dict], pages: list[list[dict]]) -> None:
    """One response per page of one call; every page but the last carries a NextToken the next request must send,
    and every request must carry exactly ``queries``."""
    for i, page in enumerate(pages):
        response = {"MetricDataResults": page, "Messages": []}
        if i + 1 < len(pages):
            response["NextToken"] = f"token-{i + 1}"
        stubber.add_response("get_metric_data", response, expected(queries, f"token-{i}" if i else None))
