"""Value types shared by the spec models: names, ids, ARNs, CIDRs, instance types."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from .. import catalog
from ._base import IAM_PRINCIPAL_ARN, check_account_id, check_ipv4_cidr, check_region, spec_error

MAX_NAME = 40  # team and priority-class names (HyperPod TeamName pattern allows 40)
MAX_PREFIX = 20  # spec.name prefixes IAM role and bucket names, which have tight limits
MIN_KUBERNETES = (1, 30)
# Versions with a kubectl Lambda layer (aws-cdk.lambda-layer-kubectl-vNN) for the kubectl handler.
KUBERNETES_VERSIONS = ("1.30", "1.31", "1.32", "1.33", "1.34")
DEFAULT_BORROW_LIMIT_PERCENT = 50


def _check_principal(arn: str) -> str:
    if not IAM_PRINCIPAL_ARN.match(arn):
        raise spec_error(
            "is not an IAM role or user ARN",
            "use arn:aws:iam::ACCOUNT:role/NAME (a group or a wildcard cannot be mapped to Kubernetes)",
        )
    return arn


IamPrincipal = Annotated[str, AfterValidator(_check_principal)]
InstanceTypeName = Annotated[str, AfterValidator(lambda v: _check_instance_type(v))]
AccountId = Annotated[str, AfterValidator(check_account_id)]
Region = Annotated[str, AfterValidator(check_region)]
AdminCidr = Annotated[str, AfterValidator(lambda v: check_ipv4_cidr(v, allow_any=False))]
Port = Annotated[int, Field(ge=1, le=65535)]


def _check_instance_type(value: str) -> str:
    if value not in catalog.CATALOG:
        family = value.rsplit(".", 1)[0]
        near = [t for t in catalog.known_types() if t.startswith(family + ".")]
        hint = ", ".join(near) if near else "see hyperpod_gov/catalog.py for the supported types"
        raise spec_error("is not a HyperPod instance type this library knows", f"use one of: {hint}")
    return value
