"""The cluster's network: its VPC (a new one, or an existing one by id) and the networks admitted to the private
EKS API endpoint (cluster.apiAccess)."""

from __future__ import annotations

import ipaddress
import re
from typing import Optional

from pydantic import Field, field_validator, model_validator

from ._base import SpecModel, check_ipv4_cidr, spec_error
from .types import AdminCidr


AVAILABILITY_ZONE = re.compile(r"\A[a-z]{2}(-[a-z]+)+-[0-9][a-z]\Z", re.ASCII)
# EC2 ids as EC2 shows them (8 or 17 hex digits); the VPC, the existing cluster and apiAccess check them.
VPC_ID = re.compile(r"\Avpc-(?:[0-9a-f]{8}|[0-9a-f]{17})\Z", re.ASCII)
SUBNET_ID = re.compile(r"\Asubnet-(?:[0-9a-f]{8}|[0-9a-f]{17})\Z", re.ASCII)
SECURITY_GROUP_ID = re.compile(r"\Asg-(?:[0-9a-f]{8}|[0-9a-f]{17})\Z", re.ASCII)


def check_subnet_ids(ids: tuple[str, ...]) -> tuple[str, ...]:
    for subnet in ids:
        if not SUBNET_ID.match(subnet):
            raise spec_error(f"{subnet!r} is not a subnet id", "write it as EC2 shows it, e.g. subnet-0123456789abcdef0")
    if len(set(ids)) != len(ids):
        raise spec_error("lists a subnet twice", "list each subnet once")
    return ids


class Vpc(SpecModel):
    """The cluster's VPC: a new one from a CIDR (default), or an existing one by id with its private subnets."""

    vpc_id: Optional[str] = Field(
        default=None,
        description="An existing VPC to use instead of creating one (with privateSubnetIds, cidr and "
        "createEndpoints); hyperpod-gov then creates no VPC, subnets or NAT gateway (default: a new VPC).",
    )
    from_app: bool = Field(
        default=False,
        description="The VPC comes from the CDK app: HyperPodGovernance(..., vpc=network.vpc) gives it (an "
        "ec2.IVpc of another stack) and the cluster uses its private subnets; with cidr (the VPC's) and "
        "createEndpoints, as for vpcId. hyperpod-gov synth, which has no app, refuses such a spec (default: false).",
    )
    private_subnet_ids: tuple[str, ...] = Field(
        default=(),
        max_length=16,
        description="With vpcId: the private subnets (at least two, in different AZs) the EKS cluster, the "
        "HyperPod nodes and the endpoints use; they reach the internet or the endpoints as the VPC routes them.",
    )
    create_endpoints: Optional[bool] = Field(
        default=None,
        description="With vpcId (required there): true creates the interface endpoints a private cluster needs "
        "in the private subnets (the VPC must not have them yet; S3 as an interface endpoint only: the route tables "
        "a gateway endpoint needs are not in the spec); false uses the VPC's own.",
    )
    create_flow_logs: bool = Field(
        default=False,
        description="With vpcId: also create encrypted flow logs of the VPC (default: false, the VPC's owner logs "
        "it). A new VPC always gets them.",
    )

    availability_zones: tuple[str, ...] = Field(
        default=(),
        description="AZ names for the subnets (default: the region's a, b, c... up to maxAzs). Given explicitly, "
        "synth needs no AWS lookup.",
    )

    cidr: str = Field(
        default="10.192.0.0/16",
        description="IPv4 CIDR of the VPC (default: 10.192.0.0/16). With vpcId, the existing VPC's CIDR "
        "(required: the teams' NetworkPolicies and the endpoints allow HTTPS from it).",
    )
    max_azs: int = Field(
        default=2, ge=2, le=6, description="Availability zones with private subnets (default: 2; EKS needs 2)."
    )

    @field_validator("availability_zones")
    @classmethod
    def _azs(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for az in v:
            if not AVAILABILITY_ZONE.match(az):
                raise spec_error(f"{az!r} is not an availability zone name",
                                 "write the region and a letter, e.g. us-east-1a")
        return v

    @field_validator("vpc_id")
    @classmethod
    def _vpc_id(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not VPC_ID.match(v):
            raise spec_error(f"{v!r} is not a VPC id", "write it as EC2 shows it, e.g. vpc-0123456789abcdef0")
        return v

    @field_validator("private_subnet_ids")
    @classmethod
    def _subnets(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return check_subnet_ids(v)

    @model_validator(mode="after")
    def _existing(self) -> "Vpc":
        given = self.model_fields_set
        if self.from_app:
            if self.vpc_id is not None or self.private_subnet_ids:
                raise spec_error("sets fromApp with vpcId or privateSubnetIds", "give the VPC once: fromApp (the "
                                 "app's ec2.IVpc) or vpcId with privateSubnetIds")
            missing = [alias for k, alias in (("cidr", "cidr"), ("create_endpoints", "createEndpoints"))
                       if k not in given]
            if missing:
                raise spec_error(f"sets fromApp but does not give {', '.join(missing)}",
                                 "add them: cidr: the app's VPC's CIDR, createEndpoints: true or false")
            return self
        if self.vpc_id is None:
            extra = [k for k, alias in (("private_subnet_ids", "privateSubnetIds"),
                                        ("create_endpoints", "createEndpoints"),
                                        ("create_flow_logs", "createFlowLogs")) if k in given]
            if extra:
                names = ", ".join(alias for k, alias in (("private_subnet_ids", "privateSubnetIds"),
                                                         ("create_endpoints", "createEndpoints"),
                                                         ("create_flow_logs", "createFlowLogs")) if k in extra)
                raise spec_error(f"sets {names} without vpcId", "add vpcId: vpc-... of the existing VPC, or remove "
                                 f"{names} to create a new VPC")
            return self
        missing = [alias for k, alias in (("cidr", "cidr"), ("create_endpoints", "createEndpoints")) if k not in given]
        if len(self.private_subnet_ids) < 2:
            missing.insert(0, "privateSubnetIds (at least two, in two AZs: EKS needs two)")
        if missing:
            raise spec_error(f"uses the existing VPC {self.vpc_id} but does not give {', '.join(missing)}",
                             "add them, e.g. privateSubnetIds: [subnet-..., subnet-...], cidr: the VPC's CIDR, "
                             "createEndpoints: false (nothing is looked up at synth)")
        if "max_azs" in given:
            raise spec_error("sets maxAzs for an existing VPC, whose subnets are given",
                             "remove maxAzs: the AZs are those of privateSubnetIds")
        if self.availability_zones and len(self.availability_zones) != len(self.private_subnet_ids):
            raise spec_error(f"lists {len(self.availability_zones)} availability zones for "
                             f"{len(self.private_subnet_ids)} private subnets",
                             "give each subnet's AZ, in the order of privateSubnetIds, or leave availabilityZones out")
        return self

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        check_ipv4_cidr(v, allow_any=False)
        special = next((b for b in NOT_A_VPC if ipaddress.IPv4Network(v).overlaps(b)), None)
        if special is not None:
            raise spec_error(
                f"overlaps {special}, special-purpose address space (link-local: the instance metadata service "
                "and the node's agents; loopback, documentation, benchmarking, multicast or reserved), which the "
                "teams' NetworkPolicies and the endpoints would then allow",
                "use private address space (RFC 1918), e.g. 10.192.0.0/16",
            )
        prefix = int(v.split("/")[1])
        if not 16 <= prefix <= 24:
            raise spec_error(
                f"a /{prefix} VPC is outside what a HyperPod cluster can use",
                "use a prefix between /16 and /24 (HyperPod nodes take many IPs; /16 is usual)",
            )
        return v


# Special-purpose space (RFC 6890) a VPC must not hold: "this network", loopback, link-local, IETF protocol
# assignments, documentation, benchmarking, multicast and reserved.
NOT_A_VPC = tuple(ipaddress.IPv4Network(c) for c in (
    "0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/3"))


# --- cluster.apiAccess: networks admitted to the private EKS endpoint ---------------------------------------------
PREFIX_LIST_ID = re.compile(r"\Apl-(?:[0-9a-f]{8}|[0-9a-f]{17})\Z", re.ASCII)
# What EC2 accepts in a security group rule's description (AuthorizeSecurityGroupIngress, IpRange.Description).
RULE_DESCRIPTION = re.compile(r"\A[A-Za-z0-9 ._\-:/()#,@\[\]+=&;{}!$*]{1,255}\Z", re.ASCII)
_DESCRIPTION = ("Who or what this network is, e.g. 'Corporate VPN' (the security group rule's description: at most "
                "255 letters, digits, spaces and ._-:/()#,@[]+=&;{}!$*).")


def _check_description(v: str) -> str:
    if not RULE_DESCRIPTION.match(v):
        raise spec_error("is not a security group rule description",
                         "use at most 255 letters, digits, spaces and ._-:/()#,@[]+=&;{}!$*, e.g. 'Corporate VPN'")
    return v


class ApiCidr(SpecModel):
    """An IPv4 network admitted to the private EKS API endpoint on TCP 443."""

    cidr: AdminCidr = Field(description="IPv4 CIDR, e.g. a VPN's or a peered VPC's (never 0.0.0.0/0).")
    description: str = Field(description=_DESCRIPTION)

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return _check_description(v)


class ApiSecurityGroup(SpecModel):
    """A security group whose members are admitted to the private EKS API endpoint on TCP 443."""

    id: str = Field(description="Security group id, sg-..., in the cluster's VPC or a peered one.")
    description: str = Field(description=_DESCRIPTION)

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return _check_description(v)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not SECURITY_GROUP_ID.match(v):
            raise spec_error("is not a security group id", "write it as EC2 shows it, e.g. sg-0123456789abcdef0")
        return v


class ApiPrefixList(SpecModel):
    """A managed prefix list whose networks are admitted to the private EKS API endpoint on TCP 443."""

    id: str = Field(description="Managed prefix list id, pl-... (each of its entries counts against the security "
                    "group's rule quota).")
    description: str = Field(description=_DESCRIPTION)

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return _check_description(v)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not PREFIX_LIST_ID.match(v):
            raise spec_error("is not a managed prefix list id",
                             "write it as `aws ec2 describe-managed-prefix-lists` shows it, e.g. pl-0123456789abcdef0")
        return v


class ApiAccess(SpecModel):
    """Networks admitted to the private EKS API endpoint: ingress on TCP 443 of the EKS cluster security group."""

    cidrs: tuple[ApiCidr, ...] = Field(
        default=(), max_length=50, description="IPv4 networks, [{cidr, description}] (default: none).")
    security_group_ids: tuple[ApiSecurityGroup, ...] = Field(
        default=(), max_length=50, description="Security groups, [{id, description}] (default: none).")
    prefix_list_ids: tuple[ApiPrefixList, ...] = Field(
        default=(), max_length=10, description="Managed prefix lists, [{id, description}] (default: none).")

    @model_validator(mode="after")
    def _once(self) -> "ApiAccess":
        for key, values in (("cidrs", [c.cidr for c in self.cidrs]),
                            ("securityGroupIds", [g.id for g in self.security_group_ids]),
                            ("prefixListIds", [p.id for p in self.prefix_list_ids])):
            repeated = sorted({v for v in values if values.count(v) > 1})
            if repeated:
                raise spec_error(f"{key} lists {', '.join(repeated)} twice", "list each network once")
        return self
