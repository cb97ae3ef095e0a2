"""GetMetricData responses in the shape CloudWatch returns them, built from hourly values per query id."""

from __future__ import annotations

import datetime as dt
from typing import Callable, Iterable, Optional

import boto3
from botocore.stub import ANY, Stubber

END = dt.datetime(2026, 11, 30, 0, 0, tzinfo=dt.timezone.utc)
NOW = END + dt.timedelta(minutes=37)
DAYS = 30
HOURS = [END - dt.timedelta(hours=h) for h in range(DAYS * 24, 0, -1)]  # ascending, the window's hour starts

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


def expected(next_token: Optional[str] = None) -> dict:
    params = {"MetricDataQueries": ANY, "StartTime": END - dt.timedelta(days=DAYS), "EndTime": END,
              "ScanBy": "TimestampAscending"}
    if next_token:
        params["NextToken"] = next_token
    return params


def stub_pages(stubber: Stubber, pages: list[list[dict]]) -> None:
    """One response per page; every page but the last carries a NextToken the next request must send."""
    for i, page in enumerate(pages):
        response = {"MetricDataResults": page, "Messages": []}
        if i + 1 < len(pages):
            response["NextToken"] = f"token-{i + 1}"
        stubber.add_response("get_metric_data", response, expected(f"token-{i}" if i else None))
