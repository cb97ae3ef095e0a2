"""The alarms of one team's watch: their signals, thresholds, owners, responses and topics. Pure (no CDK)."""

from __future__ import annotations

from typing import Mapping, Optional

from .watches import FIVE_MINUTES, HOUR, MAX_ALARM_METRICS, AlarmPlan, FlavorWatch, TeamWatch


def alarm_name(spec_name: str, team: str, kind: str) -> str:
    """``<spec>/<team>/<kind>``: '/' is in no DNS label, so no two (team, kind) pairs share a name."""
    return f"{spec_name}/{team}/{kind}"


def _owner_line(email: Optional[str], role: str) -> str:
    return f"Owner: {email} ({role})." if email else "Owner: the platform team (the team has no contract)."


def _amounts(flavors: tuple[FlavorWatch, ...]) -> str:
    return ", ".join(f"{f.nominal} {f.unit} on {f.instance_type}" for f in flavors)


def _alarms(spec_name: str, w: TeamWatch, topic_of: Mapping[Optional[str], str]) -> tuple[AlarmPlan, ...]:
    if not w.flavors or w.is_shared_pool:
        return ()
    th = w.thresholds
    ops, cost = w.operations_owner, w.cost_owner
    ops_topic, cost_topic = topic_of[ops], topic_of[cost]
    out = []

    # Guaranteed quota not honoured: work pending while below nominal on EVERY owned type. Kueue's pending count
    # has no flavor (the CloudWatch agent scrapes kueue_pending_workloads per queue and status), so "below on some
    # type" paged normal queueing: a team using all of type A with A-work waiting, its type B idle. Below on every
    # type means that whichever type the waiting work asks for, the team runs below its quota of it. The price: a
    # team below quota on A but full on B is not paged for A (docs/observability.md says so).
    watched = sorted(w.flavors, key=lambda f: (-f.nominal, f.instance_type))[: MAX_ALARM_METRICS - 1]
    metrics = [("pending", w.pending)] + [(f"u{i}", f.usage) for i, f in enumerate(watched)]
    below = " AND ".join(f"u{i} < {f.nominal}" for i, f in enumerate(watched))
    n = th.quota_not_honoured_minutes // 5
    out.append(AlarmPlan(
        team=w.team, kind="quota-not-honoured", name=alarm_name(spec_name, w.team, "quota-not-honoured"),
        description=(
            f"Guaranteed quota not honoured: team {w.team} has had workloads pending for "
            f"{th.quota_not_honoured_minutes} min while running below its nominal quota "
            f"({_amounts(tuple(watched))}). {_owner_line(ops, 'operations owner')} "
            f"Response: look at why the workloads wait (kubectl describe clusterqueue {w.cluster_queue}; "
            "workloads that ask for more than quota plus borrow limit, or for another instance type, never fit); if "
            "lenders do not reclaim lent capacity, escalate to the platform team."),
        owner=ops, topic=ops_topic, metrics=tuple(metrics),
        expression=f"IF(pending > 0 AND ({below}), 1, 0)", threshold=1, comparison="GreaterThanOrEqualToThreshold",
        period=FIVE_MINUTES, evaluation_periods=n, datapoints_to_alarm=n,
    ))

    # Reserved capacity idle for a day.
    main = sorted(w.main_flavors, key=lambda f: (-f.nominal, f.instance_type))[:MAX_ALARM_METRICS]
    total = sum(f.nominal for f in main)
    response = (
        "set sharing.strategy to Lend (or LendAndBorrow) so other teams can use it while idle; the team reclaims it "
        "when its work returns" if w.strategy == "DontLend" else
        "it is lent to the other teams while idle; if it stays idle, move quota to teams that wait "
        "(hyperpod-gov report proposes a patch)"
    )
    out.append(AlarmPlan(
        team=w.team, kind="idle-capacity", name=alarm_name(spec_name, w.team, "idle-capacity"),
        description=(
            f"Reserved capacity idle: team {w.team} used less than {th.idle_percent}% of its nominal quota "
            f"({_amounts(tuple(main))}) for {th.idle_hours} h. {_owner_line(cost, 'cost owner')} "
            f"Response: {response}."),
        owner=cost, topic=cost_topic, metrics=tuple((f"u{i}", f.usage) for i, f in enumerate(main)),
        expression=f"100 * ({' + '.join(f'u{i}' for i in range(len(main)))}) / {total}",
        threshold=th.idle_percent, comparison="LessThanThreshold",
        period=HOUR, evaluation_periods=th.idle_hours, datapoints_to_alarm=th.idle_hours,
    ))

    # Repeated preemption.
    out.append(AlarmPlan(
        team=w.team, kind="preempted", name=alarm_name(spec_name, w.team, "preempted"),
        description=(
            f"Repeated preemption: {th.preemptions_per_hour} or more workloads of team {w.team} were preempted within "
            f"an hour. {_owner_line(ops, 'operations owner')} Response: give urgent work a higher priority class, "
            "keep long jobs within the nominal quota (borrowed capacity is reclaimed first), checkpoint "
            "more often, or ask for more quota."),
        owner=ops, topic=ops_topic, metrics=(("preempted", w.preemptions),), expression=None,
        threshold=th.preemptions_per_hour, comparison="GreaterThanOrEqualToThreshold",
        period=HOUR, evaluation_periods=1, datapoints_to_alarm=1,
    ))

    # Accelerators admitted but barely used.
    if w.utilisation is not None:
        n = th.low_utilisation_minutes // 5
        out.append(AlarmPlan(
            team=w.team, kind="low-utilisation", name=alarm_name(spec_name, w.team, "low-utilisation"),
            description=(
                f"Low accelerator utilisation: team {w.team}'s pods used less than {th.low_utilisation_percent}% of "
                f"their accelerators for {th.low_utilisation_minutes} min while workloads were admitted. "
                f"{_owner_line(ops, 'operations owner')} Response: check the running jobs (input pipeline, stuck "
                "processes, idle notebooks) and stop what does not use its accelerators; admitted capacity is not "
                "lent to anyone."),
            owner=ops, topic=ops_topic, metrics=(("admitted", w.admitted), ("util", w.utilisation)),
            expression=f"IF(admitted > 0 AND util < {th.low_utilisation_percent}, 1, 0)", threshold=1,
            comparison="GreaterThanOrEqualToThreshold", period=FIVE_MINUTES, evaluation_periods=n,
            datapoints_to_alarm=n,
        ))
    return tuple(out)
