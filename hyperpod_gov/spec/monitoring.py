"""Monitoring spec: alarm thresholds (cluster-wide, overridable per team) and who hears the platform's alarms.

Meant for two keys of the spec: ``monitoring`` (a ``Monitoring``) at the top level and ``alarms`` (an
``AlarmOverrides``) on each team. No CDK import.
"""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from ._base import EMAIL, IAM_ROLE_ARN, SpecModel, spec_error

DEFAULT_QUOTA_NOT_HONOURED_MINUTES = 30
DEFAULT_IDLE_PERCENT = 20
DEFAULT_IDLE_HOURS = 24
DEFAULT_PREEMPTIONS_PER_HOUR = 3
DEFAULT_LOW_UTILISATION_PERCENT = 20
DEFAULT_LOW_UTILISATION_MINUTES = 60
DEFAULT_EVIDENCE_RETENTION_DAYS = 400


def _check_five_minutes(v: Optional[int]) -> Optional[int]:
    if v is not None and v % 5:
        raise spec_error(
            "is not a whole number of 5-minute periods (the alarms evaluate 5-minute periods)",
            f"use a multiple of 5, e.g. {max(5, 5 * round(v / 5))}",
        )
    return v


class AlarmThresholds(SpecModel):
    """When a team's alarms fire. Every value has a default; a team may override any of them."""

    quota_not_honoured_minutes: int = Field(
        default=DEFAULT_QUOTA_NOT_HONOURED_MINUTES,
        ge=5,
        le=1440,
        description="Minutes a team may have pending workloads while it runs below its nominal quota before the "
        f"'quota not honoured' alarm fires (5..1440, a multiple of 5; default: "
        f"{DEFAULT_QUOTA_NOT_HONOURED_MINUTES}).",
    )
    idle_percent: int = Field(
        default=DEFAULT_IDLE_PERCENT,
        ge=1,
        le=99,
        description="Usage, in percent of the nominal quota, below which reserved capacity counts as idle "
        f"(1..99; default: {DEFAULT_IDLE_PERCENT}). Also the bar `report` uses to propose lending.",
    )
    idle_hours: int = Field(
        default=DEFAULT_IDLE_HOURS,
        ge=1,
        le=168,
        description=f"Hours the usage must stay below idlePercent before the idle-capacity alarm fires (1..168; "
        f"default: {DEFAULT_IDLE_HOURS}, a day).",
    )
    preemptions_per_hour: int = Field(
        default=DEFAULT_PREEMPTIONS_PER_HOUR,
        ge=1,
        le=1000,
        description="Workloads of the team preempted within one hour that make the repeated-preemption alarm fire "
        f"(1..1000; default: {DEFAULT_PREEMPTIONS_PER_HOUR}).",
    )
    low_utilisation_percent: int = Field(
        default=DEFAULT_LOW_UTILISATION_PERCENT,
        ge=1,
        le=99,
        description="Average GPU or NeuronCore utilisation of the team's namespace below which admitted work "
        f"counts as wasting accelerators (1..99; default: {DEFAULT_LOW_UTILISATION_PERCENT}).",
    )
    low_utilisation_minutes: int = Field(
        default=DEFAULT_LOW_UTILISATION_MINUTES,
        ge=5,
        le=1440,
        description="Minutes of low utilisation while workloads are admitted before the alarm fires (5..1440, a "
        f"multiple of 5; default: {DEFAULT_LOW_UTILISATION_MINUTES}).",
    )

    @field_validator("quota_not_honoured_minutes", "low_utilisation_minutes")
    @classmethod
    def _five_minutes(cls, v: int) -> int:
        return _check_five_minutes(v)

    def merged(self, overrides: Optional["AlarmOverrides"]) -> "AlarmThresholds":
        """These thresholds with a team's overrides applied (values it leaves out stay cluster-wide)."""
        if overrides is None:
            return self
        given = {k: v for k, v in overrides.model_dump().items() if v is not None}
        return self.model_copy(update=given)


class AlarmOverrides(SpecModel):
    """A team's own thresholds; every key left out keeps the cluster-wide value (monitoring.alarms)."""

    quota_not_honoured_minutes: Optional[int] = Field(default=None, ge=5, le=1440,
                                                      description="See monitoring.alarms.quotaNotHonouredMinutes.")
    idle_percent: Optional[int] = Field(default=None, ge=1, le=99, description="See monitoring.alarms.idlePercent.")
    idle_hours: Optional[int] = Field(default=None, ge=1, le=168, description="See monitoring.alarms.idleHours.")
    preemptions_per_hour: Optional[int] = Field(default=None, ge=1, le=1000,
                                                description="See monitoring.alarms.preemptionsPerHour.")
    low_utilisation_percent: Optional[int] = Field(default=None, ge=1, le=99,
                                                   description="See monitoring.alarms.lowUtilisationPercent.")
    low_utilisation_minutes: Optional[int] = Field(default=None, ge=5, le=1440,
                                                   description="See monitoring.alarms.lowUtilisationMinutes.")

    @field_validator("quota_not_honoured_minutes", "low_utilisation_minutes")
    @classmethod
    def _five_minutes(cls, v: Optional[int]) -> Optional[int]:
        return _check_five_minutes(v)


# An Amazon Managed Service for Prometheus workspace ARN (arn:aws:aps:REGION:ACCOUNT:workspace/ws-...).
APS_WORKSPACE_ARN = re.compile(r"\Aarn:aws[a-z-]*:aps:[a-z0-9-]+:[0-9]{12}:workspace/ws-[A-Za-z0-9-]{1,64}\Z", re.ASCII)
# An IAM Identity Center user or group, as group:ID or user:ID (the id: the directory's UUID, or the
# '<10 hex>-<UUID>' form of an identity store), the two kinds Grafana's UpdatePermissions takes (SSO_GROUP, SSO_USER).
IDENTITY_CENTER_ID = re.compile(
    r"\A(?:group|user):(?:[0-9a-f]{10}-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z", re.ASCII)


class Prometheus(SpecModel):
    """Metrics in Amazon Managed Service for Prometheus, written by the HyperPod observability add-on."""

    workspace: str = Field(
        description="create: a workspace of this spec (its alert manager routes the teams' alerts to their owners' "
        "topics, docs/observability.md); or the ARN of a workspace that exists (the add-on writes to it; alerting "
        "stays in CloudWatch, since the alert manager of a workspace hyperpod-gov does not own is not its own).",
    )

    @field_validator("workspace")
    @classmethod
    def _workspace(cls, v: str) -> str:
        if v != "create" and not APS_WORKSPACE_ARN.match(v):
            raise spec_error("is neither 'create' nor an Amazon Managed Service for Prometheus workspace ARN",
                             "write create, or arn:aws:aps:REGION:ACCOUNT:workspace/ws-ID")
        return v

    @property
    def creates(self) -> bool:
        return self.workspace == "create"


class Grafana(SpecModel):
    """An Amazon Managed Grafana workspace reading the Prometheus workspace, one folder per team."""

    workspace: str = Field(description="create: a workspace of this spec (the only value for now).")
    admins: tuple[str, ...] = Field(
        default=(),
        description="IAM Identity Center groups and users made Grafana admins of the workspace, as group:ID or "
        "user:ID (default: none). CloudFormation cannot grant them: `python -m hyperpod_gov.grafana_export` writes "
        "the UpdatePermissions call to run once after deploy (docs/observability.md).",
    )

    @field_validator("workspace")
    @classmethod
    def _create(cls, v: str) -> str:
        if v != "create":
            raise spec_error("is not 'create'", "write create (an existing Grafana workspace is not supported yet)")
        return v

    @field_validator("admins")
    @classmethod
    def _admins(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for entry in v:
            if not IDENTITY_CENTER_ID.match(entry):
                raise spec_error(f"{entry!r} is not an IAM Identity Center user or group id",
                                 "write group:ID or user:ID with the id Identity Center shows, e.g. "
                                 "group:94f1e5b1-2c5e-4b8e-9f3a-1b2c3d4e5f60")
        return tuple(sorted(set(v)))


class Evidence(SpecModel):
    """Where the evidence records of changes (``hyperpod-gov evidence``) are kept: an S3 bucket with Object Lock."""

    bucket: Literal["create"] = Field(
        description="create: an S3 bucket in the capacity account (monitoring stack) with Object Lock in governance "
        "mode, versioning, its own KMS key, TLS only, access logs and every public access blocked; the pipeline's "
        "post-deploy step uploads the record of what it deployed (docs/evidence.md).",
    )
    retention_days: int = Field(
        default=DEFAULT_EVIDENCE_RETENTION_DAYS,
        ge=1,
        le=36500,
        description="Days each record is locked (Object Lock default retention, governance mode: nobody without "
        f"s3:BypassGovernanceRetention can delete or overwrite it before; 1..36500, default: "
        f"{DEFAULT_EVIDENCE_RETENTION_DAYS}, over a year so that one annual audit finds the last one's records).",
    )
    auditors: tuple[str, ...] = Field(
        default=(),
        description="IAM role ARNs that may read the records (s3:GetObject, list, retention; kms:Decrypt) and "
        "nothing else (default: none; the pipeline's deploy role may only write).",
    )

    @field_validator("auditors")
    @classmethod
    def _auditors(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [a for a in v if not IAM_ROLE_ARN.match(a)]
        if bad:
            raise spec_error(f"{bad[0]!r} is not an IAM role ARN",
                             "use role ARNs, e.g. arn:aws:iam::111122223333:role/auditor")
        if len(set(v)) != len(v):
            raise spec_error("lists a role twice", "list each auditor role once")
        return tuple(sorted(v))


class Monitoring(SpecModel):
    """Dashboards and alarms that close the governance loop: every signal has an owner and a response."""

    alarms: AlarmThresholds = Field(
        default_factory=AlarmThresholds, description="Cluster-wide alarm thresholds (each team may override them)."
    )
    platform_email: Optional[str] = Field(
        default=None,
        description="Email subscribed to the platform topic, which receives the alarms of teams without a "
        "contract (default: none, the topic exists without a subscriber).",
    )
    team_dashboards: bool = Field(
        default=True,
        description="One CloudWatch dashboard per team besides the cluster dashboard (default: true; each "
        "dashboard beyond the first three of an account is billed).",
    )
    evidence: Optional[Evidence] = Field(
        default=None,
        description="A bucket for the evidence records of changes (default: none; the records are written only "
        "where `hyperpod-gov evidence --out` puts them).",
    )

    prometheus: Optional[Prometheus] = Field(
        default=None,
        description="{workspace: create | <workspace ARN>}: install the HyperPod observability add-on, writing to "
        "an Amazon Managed Service for Prometheus workspace; with create, the teams' alarms become alerting rules "
        "routed to the same owners' topics instead of CloudWatch alarms (default: none, CloudWatch only). On a Slurm "
        "cluster (nodeProvisioningMode: Continuous, HPG-S016) the sagemaker-observability cluster extension writes "
        "to the workspace instead, without rules.",
    )
    grafana: Optional[Grafana] = Field(
        default=None,
        description="{workspace: create, admins: [Identity Center ids]}: an Amazon Managed Grafana workspace "
        "reading the Prometheus workspace, with one dashboard per team that queries only the team's namespace "
        "(default: none). Needs monitoring.prometheus.",
    )

    @field_validator("platform_email")
    @classmethod
    def _email(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not EMAIL.match(v):
            raise spec_error("is not an email address", "use an address such as platform@example.com")
        return v

    @model_validator(mode="after")
    def _grafana_reads_prometheus(self) -> "Monitoring":
        if self.grafana is not None and self.prometheus is None:
            raise spec_error("sets grafana without prometheus: the Grafana workspace reads the Prometheus one",
                             "add prometheus: {workspace: create}, or remove grafana")
        return self
