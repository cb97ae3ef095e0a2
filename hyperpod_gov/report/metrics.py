"""Read the monitoring plan's metrics back with GetMetricData: batched, paginated, every failure named.

The queries are the ones the dashboards and alarms read (``plan/monitoring.py``), hourly.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..plan.monitoring import HOUR, MonitoringPlan, evictions_search

MAX_QUERIES_PER_CALL = 500  # GetMetricData limit
# A SEARCH returns one series per eviction reason seen; few per call keeps a response far below 500 series.
MAX_SEARCHES_PER_CALL = 50
CALL = "cloudwatch:GetMetricData"


class ReadError(Exception):
    """The metrics could not be read: which call failed and why (``report`` exits 2)."""

    def __init__(self, call: str, reason: str, fix: str):
        self.call, self.reason, self.fix = call, reason, fix
        super().__init__(f"{call}: {reason}; {fix}")


@dataclass(frozen=True)
class Query:
    """One GetMetricData query and what it measures."""

    id: str
    team: str
    what: str  # "usage-avg", "usage-max", "pending", "evictions", "utilisation"
    instance_type: str | None
    body: dict[str, Any]  # MetricDataQuery without the Id


@dataclass
class Series:
    """Values by hour (UTC, the hour's start) of one query result (one label for SEARCH results)."""

    label: str
    points: dict[dt.datetime, float] = field(default_factory=dict)


def queries(monitoring: MonitoringPlan) -> list[Query]:
    """Every query the report needs, with ids unique and stable (team index, then what)."""
    out: list[Query] = []
    for k, w in enumerate(monitoring.teams):
        for i, f in enumerate(w.flavors):
            for stat, what, tag in (("Average", "usage-avg", "avg"), ("Maximum", "usage-max", "max")):
                metric = f.usage.query(HOUR)
                metric["Stat"] = stat
                out.append(Query(f"t{k}_u{i}_{tag}", w.team, what, f.instance_type,
                                 {"MetricStat": metric, "ReturnData": True}))
        out.append(Query(f"t{k}_pending", w.team, "pending", None,
                         {"MetricStat": w.pending.query(HOUR), "ReturnData": True}))
        out.append(Query(f"t{k}_evictions", w.team, "evictions", None, {
            "Expression": evictions_search(monitoring.cluster_name, w.cluster_queue, HOUR),
            "Label": "${PROP('Dim.Reason')}", "Period": HOUR, "ReturnData": True}))
        if w.utilisation is not None:
            out.append(Query(f"t{k}_util", w.team, "utilisation", None,
                             {"MetricStat": w.utilisation.query(HOUR), "ReturnData": True}))
    return out


def _batches(items: list[Query], size: int) -> Iterator[list[Query]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _hour(ts: dt.datetime) -> dt.datetime:
    ts = ts.astimezone(dt.timezone.utc) if ts.tzinfo else ts.replace(tzinfo=dt.timezone.utc)
    return ts.replace(minute=0, second=0, microsecond=0)


def _client_error(exc: Any) -> ReadError:
    err = exc.response.get("Error", {})
    code, message = err.get("Code", "Unknown"), err.get("Message", str(exc))
    if code in ("AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnrecognizedClientException",
                "InvalidClientTokenId", "ExpiredToken", "ExpiredTokenException"):
        return ReadError(CALL, f"access denied ({code}: {message})",
                         "use credentials of the capacity account allowed cloudwatch:GetMetricData")
    if code in ("Throttling", "ThrottlingException", "LimitExceeded"):
        return ReadError(CALL, f"throttled after retries ({code}: {message})", "run the report again later")
    return ReadError(CALL, f"{code}: {message}", "check the region and the request in the message")


def read(client: Any, monitoring: MonitoringPlan, start: dt.datetime, end: dt.datetime
         ) -> tuple[list[Query], dict[str, list[Series]]]:
    """Run every query (500 per call, SEARCHes 50 per call, every page); results by query id, one ``Series`` per label."""
    from botocore.exceptions import BotoCoreError, ClientError

    all_queries = queries(monitoring)
    results: dict[str, dict[str, Series]] = {q.id: {} for q in all_queries}
    paginator = client.get_paginator("get_metric_data")
    plain = [q for q in all_queries if "Expression" not in q.body]
    searches = [q for q in all_queries if "Expression" in q.body]
    batches = [*_batches(plain, MAX_QUERIES_PER_CALL), *_batches(searches, MAX_SEARCHES_PER_CALL)]
    for batch in batches:
        request = {
            "MetricDataQueries": [{"Id": q.id, **q.body} for q in batch],
            "StartTime": start, "EndTime": end, "ScanBy": "TimestampAscending",
        }
        try:
            for page in paginator.paginate(**request):
                for r in page.get("MetricDataResults", []):
                    status = r.get("StatusCode", "Complete")
                    if status in ("InternalError", "Forbidden"):
                        detail = "; ".join(m.get("Value", "") for m in r.get("Messages", [])) or status
                        raise ReadError(CALL, f"query {r['Id']} returned {status} ({detail})",
                                        "check that the metrics are in this account and region")
                    label = r.get("Label", "")
                    series = results.setdefault(r["Id"], {}).setdefault(label, Series(label))
                    for ts, value in zip(r.get("Timestamps", []), r.get("Values", [])):
                        series.points[_hour(ts)] = float(value)
        except ClientError as exc:
            raise _client_error(exc) from None
        except BotoCoreError as exc:
            raise ReadError(CALL, f"{type(exc).__name__}: {exc}",
                            "check credentials (the default chain), the region and network access") from None
    return all_queries, {qid: list(by_label.values()) for qid, by_label in results.items()}
