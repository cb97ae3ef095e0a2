"""Shared pydantic configuration and reusable validators for the spec models."""

from __future__ import annotations

import difflib
import functools
import ipaddress
import re
import unicodedata
from typing import Iterable

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

# Every pattern is matched whole (\A...\Z: `$` would accept a trailing newline) and ASCII-only (re.ASCII: `\w`
# and `\d` would accept Cyrillic letters and Arabic-Indic digits that no AWS or Kubernetes name allows).
DNS_LABEL = re.compile(r"\A[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z", re.ASCII)
ACCOUNT_ID = re.compile(r"\A[0-9]{12}\Z", re.ASCII)
REGION = re.compile(r"\A[a-z]{2}(-[a-z]+)+-[0-9]\Z", re.ASCII)
IAM_PRINCIPAL_ARN = re.compile(r"\Aarn:aws[a-z-]*:iam::([0-9]{12}):(role|user)/[\w+=,.@/-]{1,512}\Z", re.ASCII)
IAM_ROLE_ARN = re.compile(r"\Aarn:aws[a-z-]*:iam::([0-9]{12}):role/[\w+=,.@/-]{1,512}\Z", re.ASCII)
# An address as people and SNS write them: letters, digits and ._%+'- before the @, DNS labels after it. No
# markup ('[', '(', '<'), no quotes or spaces: the address is printed on pages and in Markdown (issue 55).
EMAIL = re.compile(r"\A[A-Za-z0-9._%+'-]{1,64}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}\Z",
                   re.ASCII)


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


# Unicode categories that change what a terminal, a Markdown page or an HTML page shows instead of showing
# themselves: controls (CR, ESC of ANSI sequences, NUL), format characters (bidirectional overrides, zero-width
# characters) and the line and paragraph separators.
INVISIBLE = ("Cc", "Cf", "Zl", "Zp")


def check_plain_text(value: str, *, multiline: bool = False) -> str:
    """Free text that ``review``, ``diff``, ``explain`` and the contract pages print: no control characters (a
    carriage return would start a new line of its own on the record page, an escape sequence would rewrite the
    terminal), and no '<' or '>' (HTML markup on a rendered page). ``multiline`` allows line feeds."""
    bad = sorted({c for c in value if unicodedata.category(c) in INVISIBLE and not (multiline and c == "\n")})
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in bad)
        raise spec_error(
            f"holds a control or invisible character ({shown}), which terminals and rendered pages do not show as "
            "written",
            "write plain text" + (" (line breaks are fine)" if multiline else " on one line") + " without escape "
            "sequences or carriage returns",
        )
    if "<" in value or ">" in value:
        raise spec_error("holds '<' or '>', which a rendered page reads as HTML markup",
                         "write it in words (e.g. 'less than a day') or without angle brackets")
    return value


def check_account_id(value: str) -> str:
    if not ACCOUNT_ID.match(value):
        raise spec_error(
            "is not a 12-digit AWS account id",
            'write all 12 digits, quoted in YAML so leading zeros survive (e.g. "012345678901")',
        )
    return value


# SageMaker's endpoint prefix in botocore's service model: its regions are that prefix's regional endpoints (tested)
SAGEMAKER_ENDPOINT_PREFIX = "api.sagemaker"


def botocore_data_path() -> list[str]:
    """The folders botocore's loader searches for its data, in its order: those of AWS_DATA_PATH, ~/.aws/models,
    then botocore's own ``data`` (found without importing botocore)."""
    import importlib.util
    import os

    extra = os.environ.get("AWS_DATA_PATH")
    folders = [os.path.expanduser(os.path.expandvars(p)) for p in extra.split(os.pathsep)] if extra else []
    spec = importlib.util.find_spec("botocore")  # botocore's BUILTIN_DATA_PATH: "data" beside its __init__.py
    builtin = [os.path.join(os.path.dirname(os.path.abspath(spec.origin)), "data")] if spec and spec.origin else []
    return [*folders, os.path.join(os.path.expanduser("~"), ".aws", "models"), *builtin]


@functools.lru_cache(maxsize=1)
def sagemaker_regions() -> dict[str, str]:
    """Every region where AWS offers SageMaker, with its partition: what ``botocore.session.Session()``'s
    ``get_available_regions("sagemaker", partition)`` lists for every partition (botocore's endpoint data: no
    network).

    Read from the ``endpoints.json`` botocore's loader takes, not through a session: a session imports most of
    botocore and loads SageMaker's whole service model for its endpoint prefix, about 0.35 s of CPU on every
    validate and synth. (A ``data_path`` set in ~/.aws/config rather than AWS_DATA_PATH is not followed.)"""
    import gzip
    import json
    import os

    for folder in filter(os.path.isdir, botocore_data_path()):
        for name, opener in (("endpoints.json", open), ("endpoints.json.gz", gzip.open)):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                with opener(path, "rb") as f:
                    data = json.loads(f.read().decode("utf-8"))
                return {endpoint: partition["partition"] for partition in data["partitions"]
                        for endpoint in partition["services"].get(SAGEMAKER_ENDPOINT_PREFIX, {}).get("endpoints", {})
                        if endpoint in partition["regions"]}
    raise RuntimeError(f"botocore's endpoint data (endpoints.json) is in none of {botocore_data_path()}: "
                       "reinstall botocore")


def check_region(value: str) -> str:
    if not REGION.match(value):
        raise spec_error("is not an AWS region name", "use a region code such as 'us-west-2'")
    known = sagemaker_regions()
    if value not in known:
        near = difflib.get_close_matches(value, sorted(known), n=3)
        raise spec_error(
            "is not a region where AWS offers SageMaker (botocore's endpoint data)",
            f"use one of {', '.join(near)}" if near else "use a region code such as 'us-west-2'",
        )
    return value


def check_ipv4_cidr(value: str, *, allow_any: bool) -> str:
    if not re.fullmatch(r"[0-9./]+", value, re.ASCII):
        raise spec_error(
            "is not an IPv4 CIDR block (only digits, '.' and '/' may appear)",
            "write a network address and prefix length, e.g. '10.50.0.0/16'",
        )
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


# Address space that is not the internet (RFC 6890 special-purpose blocks): private, shared, loopback,
# link-local, documentation, benchmarking, multicast and reserved.
NOT_INTERNET = tuple(ipaddress.IPv4Network(c) for c in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
    "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/3",
))
LINK_LOCAL = ipaddress.IPv4Network("169.254.0.0/16")
# A /8 of public addresses is no longer "a network someone owns": it is (a slice of) the internet.
INTERNET_WIDE = 2 ** 24
INTERNET_WIDE_PREFIX = 8


def public_addresses(cidrs: Iterable[str]) -> int:
    """How many public internet addresses the union of ``cidrs`` covers (overlaps counted once)."""
    nets = list(ipaddress.collapse_addresses(ipaddress.IPv4Network(c) for c in cidrs))
    total = 0
    for net in nets:
        total += net.num_addresses
        for special in NOT_INTERNET:
            if special.subnet_of(net):
                total -= special.num_addresses
            elif net.subnet_of(special):
                total -= net.num_addresses
    return total


def internet_wide(cidrs: Iterable[str]) -> bool:
    """Whether the union of ``cidrs`` reaches a /8 of public space or more: a /8 (or a shorter prefix) that holds
    any public address, or at least 2**24 public addresses in all. The prefix test matters on its own: a public /8
    that holds a special-purpose block (203.0.0.0/8 holds 203.0.113.0/24) has a few addresses less than 2**24."""
    nets = list(ipaddress.collapse_addresses(ipaddress.IPv4Network(c) for c in cidrs))
    if any(n.prefixlen <= INTERNET_WIDE_PREFIX and public_addresses([str(n)]) > 0 for n in nets):
        return True
    return public_addresses([str(n) for n in nets]) >= INTERNET_WIDE


def is_link_local(cidr: str) -> bool:
    """Inside 169.254.0.0/16: the instance metadata service, the Pod Identity agent, the node's own services."""
    return ipaddress.IPv4Network(cidr).subnet_of(LINK_LOCAL)


def contains_link_local(cidr: str) -> bool:
    return LINK_LOCAL.subnet_of(ipaddress.IPv4Network(cidr))


def partition_of(region: str) -> str:
    """The AWS partition of a region (aws, aws-cn, aws-us-gov, ...)."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    if region.startswith("us-isob-"):
        return "aws-iso-b"
    if region.startswith("us-isof-"):
        return "aws-iso-f"
    if region.startswith("us-iso-"):
        return "aws-iso"
    if region.startswith("eu-isoe-"):
        return "aws-iso-e"
    if region.startswith("eusc-"):
        return "aws-eusc"
    return "aws"
