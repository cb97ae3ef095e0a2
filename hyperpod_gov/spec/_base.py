"""Shared pydantic configuration and reusable validators for the spec models."""

from __future__ import annotations

import ipaddress
import re

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
ACCOUNT_ID = re.compile(r"^[0-9]{12}$")
REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-[0-9]$")
IAM_PRINCIPAL_ARN = re.compile(r"^arn:aws[a-z-]*:iam::([0-9]{12}):(role|user)/[\w+=,.@/-]{1,512}$")
IAM_ROLE_ARN = re.compile(r"^arn:aws[a-z-]*:iam::([0-9]{12}):role/[\w+=,.@/-]{1,512}$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")


class SpecModel(BaseModel):
    """Base of every spec model: frozen, unknown keys rejected, camelCase in YAML."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=True,
        str_strip_whitespace=False,
    )


def spec_error(problem: str, fix: str) -> PydanticCustomError:
    """A validation error that carries its fix, rendered by ``spec.loader``."""
    return PydanticCustomError("spec_rule", problem.replace("{", "(").replace("}", ")"), {"fix": fix})


def suggest_label(value: str) -> str:
    cleaned = re.sub(r"[^a-z0-9-]+", "-", value.lower()).strip("-")
    return cleaned or "team-a"


def check_label(value: str, *, what: str, max_len: int) -> str:
    if not DNS_LABEL.match(value):
        raise spec_error(
            f"{what} is not a DNS-1123 label",
            f"use lowercase letters, digits and '-', starting and ending with a letter or digit "
            f"(e.g. '{suggest_label(value)[:max_len]}')",
        )
    if len(value) > max_len:
        raise spec_error(
            f"{what} is {len(value)} characters long",
            f"use at most {max_len} characters (e.g. '{value[:max_len].rstrip('-')}')",
        )
    return value


def check_account_id(value: str) -> str:
    if not ACCOUNT_ID.match(value):
        raise spec_error(
            "is not a 12-digit AWS account id",
            'write all 12 digits, quoted in YAML so leading zeros survive (e.g. "012345678901")',
        )
    return value


def check_region(value: str) -> str:
    if not REGION.match(value):
        raise spec_error("is not an AWS region name", "use a region code such as 'us-west-2'")
    return value


def check_ipv4_cidr(value: str, *, allow_any: bool) -> str:
    try:
        network = ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        raise spec_error(
            f"is not an IPv4 CIDR block ({exc})",
            "write a network address and prefix length, e.g. '10.50.0.0/16'",
        ) from None
    if not allow_any and network.prefixlen == 0:
        raise spec_error(
            "opens the range to the whole internet",
            "name the administrators' networks instead, e.g. '203.0.113.0/24'",
        )
    return value
