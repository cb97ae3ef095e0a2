"""The monitoring view (``views.py``): alarm thresholds, who hears the platform's alarms, team dashboards.

``monitoring.*`` and ``teams[].alarms`` reach CloudWatch alarms, topics and dashboards (``monitoring.py`` builds
the ``MonitoringPlan`` from ``Plan.alerting`` and each team's overrides), so ``diff`` shows their changes here.
The view's ``name`` is ``cluster``: the settings are the cluster's, one object with the empty key, and
``schemas/diff.json`` names the kinds of governed object a change may have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..spec.monitoring import AlarmOverrides, Monitoring
from .model import Plan
from .quotas import TeamPlan
from .views_base import Row, View, _on_off

# (attribute, spec key, label, unit): one per threshold, in the order the alarms are built (alarms.py).
_THRESHOLDS: tuple[tuple[str, str, str, str], ...] = (
    ("quota_not_honoured_minutes", "quotaNotHonouredMinutes", "alarm quota-not-honoured after", " min"),
    ("idle_percent", "idlePercent", "alarm idle-capacity threshold", "%"),
    ("idle_hours", "idleHours", "alarm idle-capacity after", " h"),
    ("preemptions_per_hour", "preemptionsPerHour", "alarm preempted threshold", " per hour"),
    ("low_utilisation_percent", "lowUtilisationPercent", "alarm low-utilisation threshold", "%"),
    ("low_utilisation_minutes", "lowUtilisationMinutes", "alarm low-utilisation after", " min"),
)

NO_PLATFORM_EMAIL = "none"


@dataclass(frozen=True)
class MonitoringPart:
    """What the monitoring view reads: the spec's ``monitoring`` settings and the teams (their ``teams[].alarms``).
    Its attributes are named as the plan's (``Plan.alerting``, ``Plan.teams``): the rows' ``plan_fields``."""

    alerting: Monitoring
    teams: tuple[TeamPlan, ...]


def _threshold(attr: str, unit: str) -> Callable[[MonitoringPart], str]:
    return lambda part: f"{getattr(part.alerting.alarms, attr)}{unit}"


def _platform_email(part: MonitoringPart) -> str:
    return part.alerting.platform_email or NO_PLATFORM_EMAIL


def _platform_email_lines(title: str, old: str, new: str) -> list[str]:
    line = f"platform alarms email: {old} -> {new}"
    if new == NO_PLATFORM_EMAIL:
        return [f"{line}: the platform topic keeps no subscriber, so the alarms of teams without a contract "
                "go to nobody"]
    return [line]


def _override_words(team: str, overrides: Optional[AlarmOverrides]) -> list[str]:
    if overrides is None:
        return []
    return [f"team {team} {label} {getattr(overrides, attr)}{unit}" for attr, _, label, unit in _THRESHOLDS
            if getattr(overrides, attr) is not None]


def _overrides(part: MonitoringPart) -> tuple[str, ...]:
    """Each team's own thresholds (``teams[].alarms``), one member per key it sets."""
    return tuple(sorted(w for t in part.teams for w in _override_words(t.name, t.alarms)))


def _thresholds_rows() -> tuple[Row, ...]:
    return tuple(Row(label, f"monitoring.alarms.{key}", _threshold(attr, unit), ("alerting",))
                 for attr, key, label, unit in _THRESHOLDS)


def _prometheus(part: MonitoringPart) -> str:
    p = part.alerting.prometheus
    if p is None:
        return "off (CloudWatch only)"
    if p.creates:
        return "workspace of this spec; the teams' alarms are its alerting rules, routed to the same owners"
    return f"workspace {p.workspace}; alarms stay in CloudWatch"


def _grafana_admins(part: MonitoringPart) -> tuple[str, ...]:
    g = part.alerting.grafana
    return () if g is None else tuple(f"Grafana admin {a}" for a in g.admins)


def _evidence_bucket(part: MonitoringPart) -> str:
    e = part.alerting.evidence
    return "none" if e is None else f"{e.bucket} (S3 Object Lock, governance mode)"


def _auditor_widens(old: object, new: object) -> Optional[str]:
    return "may read every evidence record"


# monitoring.evidence (plan/evidence.py, constructs/evidence.py): the bucket the pipeline keeps its records in
_EVIDENCE_ROWS = (
    Row("evidence bucket", "monitoring.evidence.bucket", _evidence_bucket, ("alerting",)),
    Row("evidence retention", "monitoring.evidence.retentionDays",
        lambda p: "-" if p.alerting.evidence is None else f"{p.alerting.evidence.retention_days} days", ("alerting",)),
    Row("evidence auditors", "monitoring.evidence.auditors",
        lambda p: () if p.alerting.evidence is None else p.alerting.evidence.auditors, ("alerting",), members=True,
        privilege=_auditor_widens),
)


def _objects(plan: Plan) -> dict[str, MonitoringPart]:
    return {"": MonitoringPart(plan.alerting, plan.teams)}


MONITORING = View(
    name="cluster",
    spec="monitoring",
    objects=_objects,
    title=lambda key: "",
    rows=_thresholds_rows() + (
        Row("team alarm thresholds", "teams[].alarms", _overrides, ("teams",), members=True),
        Row("platform alarms email", "monitoring.platformEmail", _platform_email, ("alerting",),
            lines=_platform_email_lines),
        Row("team dashboards", "monitoring.teamDashboards", lambda p: _on_off(p.alerting.team_dashboards),
            ("alerting",)),
        Row("managed Prometheus", "monitoring.prometheus", _prometheus, ("alerting",)),
        Row("managed Grafana", "monitoring.grafana", lambda p: _on_off(p.alerting.grafana is not None),
            ("alerting",)),
        # A Grafana admin may edit every team's folder: a widening of privilege.
        Row("Grafana admins", "monitoring.grafana", _grafana_admins, ("alerting",), members=True,
            privilege=lambda _key, member: f"{member} may edit every team's Grafana dashboards"),
        *_EVIDENCE_ROWS,
    ),
)
