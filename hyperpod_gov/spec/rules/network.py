"""HPG-E: network exposure: the API endpoint, administrator CIDRs, apiAccess, egress, availability zones."""

from __future__ import annotations

import datetime as dt
from typing import Iterator

from .._base import internet_wide, public_addresses
from ..errors import NO_VALUE, SpecIssue
from ..models import GovernanceSpec
from ..rulebook import rule


@rule("HPG-E001", "error", "adminCidrs are given exactly when the API endpoint is public-and-private (a public "
      "endpoint without them is open to every address).")
def endpoint_access_matches_cidrs(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    c = spec.cluster
    if c.existing is not None:  # the existing cluster's endpoint is not the spec's (HPG-D004)
        return
    if c.admin_cidrs and c.endpoint_access == "private":
        yield SpecIssue(
            "cluster.adminCidrs", "is only used with a public endpoint, but endpointAccess is private",
            list(c.admin_cidrs), "remove adminCidrs, or set endpointAccess: public-and-private",
        )
    if c.endpoint_access == "public-and-private" and not c.admin_cidrs:
        yield SpecIssue(
            "cluster.adminCidrs", "is empty, so the public endpoint would be open to every address",
            NO_VALUE, "list the administrators' CIDRs, or set endpointAccess: private",
        )


@rule("HPG-E004", "error", "The VPC's availability zones are in the capacity region.")
def availability_zones_are_in_the_region(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    region = spec.accounts.capacity.region
    for i, az in enumerate(spec.cluster.vpc.availability_zones):
        if az[:-1] != region:
            yield SpecIssue(f"cluster.vpc.availabilityZones[{i}]", f"is not in the capacity region {region}", az,
                            f"use zones of {region}, e.g. {region}a")


@rule("HPG-E003", "error", "A team's egress rules reach less than a /8 of public addresses, unless the team "
      "sets allowInternetEgress.")
def egress_stays_off_the_internet(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    """Egress rules that together reach the internet need ``allowInternetEgress``."""
    for ti, team in enumerate(spec.teams):
        cidrs = [e.cidr for e in team.egress]
        if cidrs and internet_wide(cidrs) and not team.allow_internet_egress:
            public = public_addresses(cidrs)
            yield SpecIssue(
                f"teams[{ti}].egress", f"together reach {public:,} public internet addresses (a /8 of public space "
                "or more): the team's pods could send its data anywhere", ", ".join(cidrs),
                "name the networks the team needs (e.g. 10.50.0.0/16), or set "
                f"teams[{ti}].allowInternetEgress: true if the team must reach the internet",
            )


@rule("HPG-E002", "error", "adminCidrs together open the public endpoint to less than a /8 of public addresses.")
def admin_cidrs_stay_off_the_internet(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cidrs = list(spec.cluster.admin_cidrs)
    if cidrs and internet_wide(cidrs):
        public = public_addresses(cidrs)
        yield SpecIssue(
            "cluster.adminCidrs", f"together open the public endpoint to {public:,} internet addresses (a /8 of "
            "public space or more), as good as 0.0.0.0/0", ", ".join(cidrs),
            "name the administrators' networks (e.g. 203.0.113.0/24), or set endpointAccess: private",
        )


# --- cluster.apiAccess -------------------------------------------------------------------------------------------
@rule("HPG-E005", "error", "apiAccess.cidrs together admit less than a /8 of public addresses to the private API "
      "endpoint.")
def api_access_stays_off_the_internet(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    cidrs = [c.cidr for c in spec.cluster.api_access.cidrs]
    if cidrs and internet_wide(cidrs):
        public = public_addresses(cidrs)
        yield SpecIssue(
            "cluster.apiAccess.cidrs", f"together admit {public:,} public internet addresses (a /8 or more) to the "
            "Kubernetes API, as good as 0.0.0.0/0 for any network routed to the VPC", ", ".join(cidrs),
            "name the networks people connect from (e.g. the VPN's 10.8.0.0/16), or a security group or prefix list "
            "(apiAccess.securityGroupIds, apiAccess.prefixListIds)",
        )


# --- governance-only mode: what enforces the NetworkPolicies -----------------------------------------------------
@rule("HPG-E006", "warning", "With cluster.existing, the spec says what enforces the teams' NetworkPolicies "
      "(existing.networkPolicyEnforcement): the vpc-cni add-on enforces none unless configured to, and hyperpod-gov "
      "does not configure the add-ons of a cluster it did not create.")
def existing_cluster_states_network_policy_enforcement(spec: GovernanceSpec, today: dt.date) -> Iterator[SpecIssue]:
    e = spec.cluster.existing
    if e is None or e.network_policy_enforcement is not None:
        return
    yield SpecIssue(
        "cluster.existing.networkPolicyEnforcement", "is not set: the teams' default-deny NetworkPolicies are "
        "emitted, but nothing says the cluster enforces them (the vpc-cni add-on's enableNetworkPolicy is off by "
        "default), so each team's pods may reach the others'", NO_VALUE,
        "run `hyperpod-gov preflight SPEC` (it reads the vpc-cni add-on's configuration), then set "
        "cluster.existing.networkPolicyEnforcement: {enforcer: vpc-cni}, or {enforcer: other, reason: ...} when "
        "another network plugin enforces them",
    )
