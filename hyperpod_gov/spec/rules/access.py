"""HPG-A: accounts, access entries and workload identities."""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from .._base import IAM_PRINCIPAL_ARN, partition_of
from ..errors import SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule


@rule("HPG-A001", "error", "A workload identity's targetRoleArn is in a declared consumer account.")
def identities_target_declared_accounts(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    declared = {c.id for c in spec.accounts.consumers}
    for ti, team in enumerate(spec.teams):
        for wi, w in enumerate(team.workload_identities):
            account = w.target_account
            if account is not None and account not in declared:
                names = ", ".join(sorted(declared)) or "none declared"
                yield SpecIssue(
                    f"teams[{ti}].workloadIdentities[{wi}].targetRoleArn",
                    f"is in account {account}, which is not a declared consumer account",
                    w.target_role_arn,
                    f"add {account} under accounts.consumers, or use a role in one of: {names}",
                )


@rule("HPG-A002", "error", "A created target role is in a declared consumer account, and each created role is "
      "created for one service account only.")
def target_roles_are_in_declared_accounts(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    by_name = {c.name: c for c in spec.accounts.consumers}
    seen: dict[tuple[str, str], str] = {}
    for ti, team in enumerate(spec.teams):
        for wi, w in enumerate(team.workload_identities):
            target = w.target_role
            if target is None:
                continue
            path = f"teams[{ti}].workloadIdentities[{wi}].targetRole"
            if target.account not in by_name:
                names = ", ".join(sorted(by_name)) or "none declared"
                yield SpecIssue(
                    f"{path}.account", "is not a declared consumer account", target.account,
                    f"declare it under accounts.consumers (with its id and region), or use one of: {names}",
                )
                continue
            key = (by_name[target.account].id, target.name)
            if key in seen:
                yield SpecIssue(
                    f"{path}.name", f"is already created for {seen[key]}", target.name,
                    "give each created target role its own name (one role trusts exactly one service account)",
                )
            seen.setdefault(key, f"{team.name}/{w.service_account}")


# --- per-team data (HPG-A006) ---------------------------------------------------------------------------------


def _role_key(arn: str) -> tuple[str, str]:
    """(account, role name): a role's identity, whatever its path and partition."""
    m = IAM_PRINCIPAL_ARN.match(arn)
    return (m.group(1) if m else "", arn.rsplit("/", 1)[-1])


def _created_target_roles(spec: GovernanceSpec) -> dict[tuple[str, str], tuple[str, str]]:
    """(account, role name) -> (team, path) of every target role the spec has hyperpod-gov create."""
    consumers = {c.name: c.id for c in spec.accounts.consumers}
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for ti, team in enumerate(spec.teams):
        for wi, w in enumerate(team.workload_identities):
            if w.target_role is not None and w.target_role.account in consumers:
                out[(consumers[w.target_role.account], w.target_role.name)] = (
                    team.name, f"teams[{ti}].workloadIdentities[{wi}].targetRole")
    return out


@rule("HPG-A006", "error", "A workload identity's targetRoleArn is not in the capacity account (use grants) and is "
      "not a role created for another team's identity, unless the identity sets allowSameAccount or "
      "allowOtherTeamRole.")
def target_roles_stay_with_their_team(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    """A role of the capacity account has policies outside the spec (or another team's); another team's role
    reaches that team's data. Either is allowed only when the spec says so on the identity."""
    capacity = spec.accounts.capacity.id
    created = _created_target_roles(spec)
    # The source roles are named <spec>-<team>-<service account> (plan.names, which the spec package never
    # imports): a capacity-account role of that form may be another team's.
    generated = f"{spec.name}-"
    for ti, team in enumerate(spec.teams):
        for wi, w in enumerate(team.workload_identities):
            arn = w.target_role_arn
            if arn is None:
                continue
            path = f"teams[{ti}].workloadIdentities[{wi}]"
            account, name = _role_key(arn)
            owner = created.get((account, name))
            if owner is not None and owner[0] != team.name and not w.allow_other_team_role:
                yield SpecIssue(
                    f"{path}.targetRoleArn", f"is the role hyperpod-gov creates for team {owner[0]} ({owner[1]}): "
                    "this team's pods would reach that team's data", arn,
                    f"give this identity its own grants or targetRole, or set {path}.allowOtherTeamRole: true if "
                    f"team {owner[0]}'s owners agree",
                )
            elif account == capacity and name.startswith(generated) and not w.allow_other_team_role:
                yield SpecIssue(
                    f"{path}.targetRoleArn", f"is named like the Pod Identity source roles hyperpod-gov creates "
                    f"({spec.name}-<team>-<service account>): it may be another team's, which reaches that team's "
                    "data", arn,
                    f"give this identity its own grants, or set {path}.allowOtherTeamRole: true if that team's "
                    "owners agree",
                )
            elif owner is None and account == capacity and not w.allow_same_account:
                yield SpecIssue(
                    f"{path}.targetRoleArn", f"is in the capacity account {capacity}: the role's policies are not the "
                    "spec's, and diff shows none of what it reaches", arn,
                    f"name the data under {path}.grants instead, or set {path}.allowSameAccount: true",
                )


@rule("HPG-A010", "error", "An existing role (targetRoleArn) that workload identities of several teams name is "
      "allowed only on the identities that set allowOtherTeamRole.")
def existing_target_roles_stay_with_one_team(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    """Pods of every team naming the same role act as it: each team reaches what the others' pods write through it.
    Order does not matter: every identity of a shared role is reported, unless it says the sharing is agreed."""
    teams: dict[tuple[str, str], set[str]] = {}
    for team in spec.teams:
        for w in team.workload_identities:
            if w.target_role_arn is not None:
                teams.setdefault(_role_key(w.target_role_arn), set()).add(team.name)
    for ti, team in enumerate(spec.teams):
        for wi, w in enumerate(team.workload_identities):
            if w.target_role_arn is None or w.allow_other_team_role:
                continue
            others = sorted(teams[_role_key(w.target_role_arn)] - {team.name})
            if others:
                path = f"teams[{ti}].workloadIdentities[{wi}]"
                yield SpecIssue(
                    f"{path}.targetRoleArn", f"is also the target role of team {', '.join(others)}: the teams' pods "
                    "would act as the same role and reach each other's data", w.target_role_arn,
                    f"give each team a role of its own (or a targetRole hyperpod-gov creates), or set "
                    f"{path}.allowOtherTeamRole: true on every identity that shares it if the teams' owners agree",
                )


@rule("HPG-A003", "error", "A team's viewers and submitters are not cluster admins (EKS allows one access entry "
      "per principal).")
def team_principals_are_not_admins(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    admins = set(spec.cluster.admins)
    for ti, team in enumerate(spec.teams):
        for kind in ("viewers", "submitters"):
            for ai, arn in enumerate(getattr(team.access, kind)):
                if arn in admins:
                    yield SpecIssue(
                        f"teams[{ti}].access.{kind}[{ai}]", "is a cluster admin (cluster.admins), which already "
                        "sees and acts on everything; EKS allows one access entry per principal", arn,
                        "remove it from the team, or from cluster.admins",
                    )


def _principals(spec: GovernanceSpec) -> Iterator[tuple[str, str]]:
    """(path, ARN) of every IAM principal the spec grants cluster access to."""
    for ai, arn in enumerate(spec.cluster.admins):
        yield f"cluster.admins[{ai}]", arn
    for ai, arn in enumerate(spec.cluster.viewers):
        yield f"cluster.viewers[{ai}]", arn
    for ti, team in enumerate(spec.teams):
        for kind in ("viewers", "submitters"):
            for ai, arn in enumerate(getattr(team.access, kind)):
                yield f"teams[{ti}].access.{kind}[{ai}]", arn


@rule("HPG-A004", "error", "Cluster access goes to roles of the capacity account, unless accounts.trusted names "
      "another account or accepts IAM users.")
def principals_are_trusted(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    """Cluster access only for roles of the capacity account, unless the spec trusts another account.

    Whoever administers an account decides who may assume its roles; an IAM user signs in with long-term
    access keys that leak and are never rotated by themselves.
    """
    capacity = spec.accounts.capacity.id
    trusted = set(spec.accounts.trusted)
    for path, arn in _principals(spec):
        m = IAM_PRINCIPAL_ARN.match(arn)
        if m is None:
            continue
        account, kind = m.group(1), m.group(2)
        if account != capacity and account not in trusted:
            yield SpecIssue(
                path, f"is in account {account}, not the capacity account {capacity}: that account's "
                "administrators, not this spec, decide who may assume it and so who reaches the cluster", arn,
                f"use a role of account {capacity}, or list {account} under accounts.trusted if you trust whoever "
                "administers it",
            )
        elif kind == "user" and account not in trusted:
            yield SpecIssue(
                path, "is an IAM user: it signs in with long-term access keys, which leak and do not expire", arn,
                f"use an IAM role (assumed through SSO or federation), or list {account} under accounts.trusted "
                "to accept its users",
            )


@rule("HPG-A005", "error", "An existing HyperPod cluster is in the capacity account, region and partition.")
def existing_cluster_is_in_the_capacity_account(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    e = spec.cluster.existing
    if e is None:
        return
    partition, region, account = e.arn_parts
    cap = spec.accounts.capacity
    want = (partition_of(cap.region), cap.region, cap.id)
    for what, got, expected in zip(("partition", "region", "account"), (partition, region, account), want):
        if got != expected:
            yield SpecIssue("cluster.existing.hyperPodClusterArn", f"is in {what} {got}, but accounts.capacity is "
                            f"in {expected}", e.hyper_pod_cluster_arn,
                            f"set accounts.capacity to the cluster's account and region, or name a cluster of "
                            f"{expected}")


# cluster.viewers (HyperPod CLI/console access)
@rule("HPG-A007", "error", "A cluster viewer is not a cluster admin (EKS allows one access entry per principal, "
      "and an admin sees everything already).")
def cluster_viewers_are_not_admins(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    admins = set(spec.cluster.admins)
    for i, arn in enumerate(spec.cluster.viewers):
        if arn in admins:
            yield SpecIssue(f"cluster.viewers[{i}]", "is a cluster admin (cluster.admins), which already sees and "
                            "acts on everything; EKS allows one access entry per principal", arn,
                            "remove it from cluster.viewers, or from cluster.admins")


# security (issue 55): an unused consumer account still widens every VPC endpoint's policy
@rule("HPG-A008", "warning", "Every consumer account is used by a workload identity (a targetRole or targetRoleArn "
      "in it): each one is admitted by every VPC endpoint's policy.")
def consumer_accounts_are_used(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    """A consumer account that no workload identity reaches still joins the endpoints' perimeter: its principals may
    use the VPC endpoints, and the cluster's principals may reach its resources through them. A warning, not an
    error: a consumer may be declared ahead of its first identity (acknowledged, with the reason, by id);
    ``--strict`` refuses it otherwise, and ``diff`` marks the account's arrival as a privilege change."""
    used: set[str] = set()
    for team in spec.teams:
        if team.retiring:  # its identities are gone (plan.identity): they use no account
            continue
        for w in team.workload_identities:
            if w.target_role is not None:
                used.add(w.target_role.account)
            if w.target_account is not None:
                used.add(w.target_account)
    for i, c in enumerate(spec.accounts.consumers):
        if c.name not in used and c.id not in used:
            yield SpecIssue(
                f"accounts.consumers[{i}]", "is used by no workload identity (no targetRole names it, no "
                "targetRoleArn is in it), yet every VPC endpoint admits its principals and resources",
                f"{c.name} ({c.id})",
                f"remove it, or give a workload identity a targetRole (account: {c.name}) or a targetRoleArn in "
                f"{c.id}; declared ahead of its first identity, acknowledge HPG-A008 with the reason",
            )
