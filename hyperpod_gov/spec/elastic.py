"""Elastic capacity of an instance group (issue 57): its node image and the window HyperPod patches it in.

The service fields (``AWS::SageMaker::Cluster`` ``ClusterInstanceGroup`` and botocore's ``CreateCluster``):
``ImageId``, ``ImageReleaseVersion``, ``ScheduledUpdateConfig`` {``ScheduleExpression``, ``DeploymentConfig``
{``RollingUpdatePolicy.MaximumBatchSize`` {Type, Value}, ``WaitIntervalInSeconds``,
``AutoRollbackConfiguration`` [{AlarmName}]}} and ``AutoPatchConfig`` {``PatchingStrategy``, ``DeploymentConfig``}.
``MinInstanceCount``, ``CapacityRequirements`` and ``InstanceRequirements`` are plain members of the group
(``instance_groups.py``). ``tests/spec/test_elastic_fields.py`` holds the patterns below to cfn-lint's schema.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Iterable, Literal, Optional

from pydantic import Field, field_validator, model_validator

from ._base import SpecModel, spec_error

# ImageId: a HyperPod public or custom AMI, or "default" (the service's pattern, anchored).
IMAGE_ID = re.compile(r"\A(ami-[0-9a-fA-F]{8,17}|default)\Z", re.ASCII)
RELEASE_VERSION = re.compile(r"\A[0-9]+\.[0-9]+\.[0-9]+\Z", re.ASCII)
# ScheduleExpression as CloudFormation's pattern accepts it: cron(minute hour day month weekday year).
CRON = re.compile(
    r"\Acron\((?:[0-5][0-9]|[0-9]|) (?:[01][0-9]|2[0-3]|[0-9]) (?:[1-9]|0[1-9]|[12][0-9]|3[01]|\?) "
    r"(?:[1-9]|0[1-9]|1[0-2]|\*|\*/(?:[1-9]|1[0-2])|) (?:MON|TUE|WED|THU|FRI|SAT|SUN|[1-7]|\?|L|(?:[1-7]#[1-5])|"
    r"(?:[1-7]L)) (?:20[2-9][0-9]|\*|)\)\Z", re.ASCII)
ALARM_NAME = re.compile(r"\A(?!\s*\Z)[^\x00-\x1f]{1,256}\Z")


class Image(SpecModel):
    """The HyperPod-managed AMI release of the group (ImageReleaseVersion)."""

    release_version: str = Field(description="HyperPod AMI release, MAJOR.MINOR.PATCH (e.g. 1.2.3); EKS only.")

    @field_validator("release_version")
    @classmethod
    def _version(cls, v: str) -> str:
        if not RELEASE_VERSION.match(v):
            raise spec_error("is not a HyperPod AMI release version", "write MAJOR.MINOR.PATCH, e.g. 1.2.3")
        return v


class Batch(SpecModel):
    """How many nodes HyperPod updates at once (RollingUpdatePolicy.MaximumBatchSize): a percentage or a count."""

    percent: Optional[int] = Field(default=None, ge=1, le=100,
                                   description="Percent of the group's nodes per batch (CAPACITY_PERCENTAGE).")
    count: Optional[int] = Field(default=None, ge=1, le=6758,
                                 description="Nodes per batch (INSTANCE_COUNT).")

    @model_validator(mode="after")
    def _one(self) -> "Batch":
        if (self.percent is None) == (self.count is None):
            raise spec_error("gives both or neither of percent and count",
                             "give one: {percent: 10} or {count: 2}")
        return self

    @property
    def service(self) -> dict[str, object]:
        if self.percent is not None:
            return {"Type": "CAPACITY_PERCENTAGE", "Value": self.percent}
        return {"Type": "INSTANCE_COUNT", "Value": self.count}


class Patching(SpecModel):
    """When and how HyperPod replaces the group's node image: a scheduled update (ScheduledUpdateConfig) at
    ``start`` (once) or on ``schedule`` (cron), and/or automatic security patches (AutoPatchConfig), both rolled
    out in batches that roll back when an alarm fires."""

    start: Optional[dt.datetime] = Field(
        default=None,
        description="One scheduled update at this UTC time, e.g. \"2027-01-10T02:00:00Z\" (ScheduleExpression "
        "cron(MM HH DD MM ? YYYY)).",
    )
    schedule: Optional[str] = Field(
        default=None,
        description="A recurring update, as the service writes it: cron(minute hour day month weekday year), e.g. "
        "cron(0 2 ? * SUN *).",
    )
    auto: Optional[Literal["whenIdle", "whenAllIdle"]] = Field(
        default=None,
        description="Apply HyperPod's security patch AMIs automatically (AutoPatchConfig.PatchingStrategy): "
        "whenIdle patches each node once it is idle, whenAllIdle when all are (default: no automatic patching).",
    )
    batch: Optional[Batch] = Field(
        default=None, description="{percent: N} or {count: N} nodes updated at once (default: the service's).")
    wait_seconds: Optional[int] = Field(
        default=None, ge=0, le=3600,
        description="Seconds between batches (WaitIntervalInSeconds; default: the service's).")
    rollback_alarms: tuple[str, ...] = Field(
        default=(), max_length=10,
        description="CloudWatch alarm names; while one is in ALARM the update rolls back "
        "(AutoRollbackConfiguration; default: none).",
    )

    @field_validator("start")
    @classmethod
    def _start(cls, v: Optional[dt.datetime]) -> Optional[dt.datetime]:
        if v is None:
            return v
        if v.tzinfo is None:
            raise spec_error("has no time zone", 'write it in UTC with a Z, e.g. "2027-01-10T02:00:00Z"')
        v = v.astimezone(dt.timezone.utc)
        if v.second or v.microsecond:
            raise spec_error("has seconds, and the service schedules by the minute",
                             'write a whole minute, e.g. "2027-01-10T02:00:00Z"')
        if not 2020 <= v.year <= 2099:
            raise spec_error("is outside the years the service's schedule accepts (2020-2099)",
                             "give a time in that range")
        return v

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not CRON.match(v):
            raise spec_error("is not a schedule expression the service accepts",
                             "write cron(minute hour day month weekday year) with ? for day or weekday, e.g. "
                             "cron(0 2 ? * SUN *)")
        return v

    @field_validator("rollback_alarms")
    @classmethod
    def _alarms(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for name in v:
            if not ALARM_NAME.match(name):
                raise spec_error(f"{name!r} is not a CloudWatch alarm name", "use the alarm's name, 1-256 characters")
        if len(set(v)) != len(v):
            raise spec_error("names an alarm twice", "name each alarm once")
        return tuple(sorted(v))

    @model_validator(mode="after")
    def _when(self) -> "Patching":
        if self.start is not None and self.schedule is not None:
            raise spec_error("gives both start and schedule", "give start (once) or schedule (recurring), not both")
        if self.start is None and self.schedule is None and self.auto is None:
            raise spec_error("says neither when nor how to patch",
                             "give start, schedule or auto (e.g. start: \"2027-01-10T02:00:00Z\")")
        return self

    @property
    def schedule_expression(self) -> Optional[str]:
        """ScheduleExpression: the recurring schedule, or the one-time start as cron(MM HH DD MM ? YYYY)."""
        if self.schedule is not None:
            return self.schedule
        if self.start is None:
            return None
        s = self.start
        return f"cron({s.minute:02d} {s.hour:02d} {s.day:02d} {s.month:02d} ? {s.year})"

    @property
    def deployment_config(self) -> Optional[dict[str, object]]:
        """DeploymentConfig shared by ScheduledUpdateConfig and AutoPatchConfig; None when the spec sets nothing."""
        out: dict[str, object] = {}
        if self.rollback_alarms:
            out["AutoRollbackConfiguration"] = [{"AlarmName": a} for a in self.rollback_alarms]
        if self.batch is not None:
            out["RollingUpdatePolicy"] = {"MaximumBatchSize": self.batch.service}
        if self.wait_seconds is not None:
            out["WaitIntervalInSeconds"] = self.wait_seconds
        return out or None


def guaranteed_instances(count: int, min_count: Optional[int], capacity: str, autoscaled: bool) -> int:
    """On-Demand instances a group keeps: none on Spot or where Karpenter scales it (from 0, as AWS requires);
    else minCount where set (the group is InService with that many, and continuous provisioning adds the rest),
    else count. The one definition: the plan's ``InstanceGroupPlan.guaranteed`` and the spec rules use it."""
    if capacity == "spot" or autoscaled:
        return 0
    return count if min_count is None else min_count


@dataclass(frozen=True)
class GroupCapacity:
    """A group's instances by kind, for the spec rules that weigh elastic capacity (HPG-K009, HPG-K010)."""

    name: str
    types: tuple[str, ...]
    guaranteed: int
    elastic: int
    interruptible: int


def group_capacities(cluster: object) -> tuple[GroupCapacity, ...]:
    """Each instance group of a spec's ``cluster`` by kind (a group autoscales with ``autoscale`` and
    ``cluster.autoScaling``)."""
    out = []
    for g in getattr(cluster, "instance_groups"):
        autoscaled = g.autoscale and getattr(cluster, "auto_scaling") is not None
        kept = guaranteed_instances(g.count, g.min_count, g.capacity, autoscaled)
        spot = g.count if g.capacity == "spot" else 0
        out.append(GroupCapacity(g.name, g.types, kept, g.count - kept - spot, spot))
    return tuple(out)


def guaranteed_by_type(groups: Iterable[object]) -> dict[str, int]:
    """Guaranteed instances per type, sorted by type: a flexible group's count toward none of its types alone (it
    may run them all as another of its types). Types whose groups guarantee nothing are listed with 0."""
    out: dict[str, int] = {}
    for g in groups:
        types = getattr(g, "types")
        for itype in types:
            out[itype] = out.get(itype, 0) + (getattr(g, "guaranteed") if len(types) == 1 else 0)
    return dict(sorted(out.items()))
