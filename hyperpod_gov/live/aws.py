"""boto3 clients and calls: standard retries, pagination, and every failure as a ``LiveError`` naming the call.

Only ``describe_*``, ``list_*`` and their paginators are called from this package: drift and
import never change anything in the account.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
)

# Throttling is retried with backoff by botocore itself (standard mode: 3 attempts).
RETRY_CONFIG = Config(retries={"mode": "standard"})

# A factory returns the client of one service ("sagemaker" or "eks"). Tests pass Stubber-wrapped clients.
ClientFactory = Callable[[str], Any]

ACCESS_DENIED = {"AccessDeniedException", "AccessDenied", "UnauthorizedOperation", "UnauthorizedException"}
NOT_FOUND = {"ResourceNotFound", "ResourceNotFoundException", "InvalidSubnetID.NotFound", "InvalidGroup.NotFound"}
THROTTLED = {"ThrottlingException", "Throttling", "TooManyRequestsException", "RequestLimitExceeded"}
BAD_CREDENTIALS = {"UnrecognizedClientException", "InvalidClientTokenId", "ExpiredTokenException",
                   "ExpiredToken", "InvalidSignatureException", "SignatureDoesNotMatch"}


class LiveError(Exception):
    """The live state could not be read. Commands print it and exit 2."""

    def __init__(self, call: str, problem: str, fix: str):
        self.call = call
        self.problem = problem
        self.fix = fix
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.call}: {self.problem}; {self.fix}"


class NotFound(LiveError):
    """The named resource does not exist (e.g. no HyperPod cluster of that name in the region)."""


class AccessDenied(LiveError):
    """The identity may not make the call (a read a command can do without catches it)."""


def boto3_clients(*, profile: Optional[str] = None, region: Optional[str] = None,
                  config: Config = RETRY_CONFIG) -> ClientFactory:
    """The default factory: the default credential chain (or ``profile``), boto3's standard retry mode.

    ``AWS_ENDPOINT_URL_SAGEMAKER`` / ``AWS_ENDPOINT_URL_EKS`` are honoured by boto3 itself.
    """
    import boto3

    try:
        session = boto3.Session(profile_name=profile, region_name=region)
    except ProfileNotFound:
        raise LiveError("(credentials)", f"the AWS profile {profile!r} is not configured",
                        "check the name with `aws configure list-profiles`, or drop --profile") from None
    made: dict[str, Any] = {}

    def factory(service: str) -> Any:
        if service not in made:
            try:
                made[service] = session.client(service, config=config)
            except NoRegionError:
                raise LiveError(f"{service} client", "no AWS region is configured",
                                "pass --region (e.g. --region us-east-1) or set AWS_REGION") from None
        return made[service]

    return factory


@dataclass(frozen=True)
class Caller:
    """Calls one service's read-only operations and turns every botocore failure into a ``LiveError``."""

    client: Any
    service: str  # the IAM prefix: "sagemaker" or "eks"

    def action(self, method: str) -> str:
        """The IAM action of a client method: ``describe_cluster`` -> ``sagemaker:DescribeCluster``."""
        return f"{self.service}:{self.client.meta.method_to_api_mapping.get(method, method)}"

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        _check_read_only(method)
        with _translated(self.action(method)):
            return getattr(self.client, method)(**params)

    def pages(self, method: str, key: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Every item of ``key`` over all pages: the paginator where botocore has one, else a NextToken loop."""
        _check_read_only(method)
        action = self.action(method)
        with _translated(action):
            if self.client.can_paginate(method):
                for page in self.client.get_paginator(method).paginate(**params):
                    yield from page.get(key, [])
                return
            token_key = "nextToken" if self.service == "eks" else "NextToken"  # each API's own spelling
            token: Optional[str] = None
            while True:
                page = getattr(self.client, method)(**params, **({token_key: token} if token else {}))
                yield from page.get(key, [])
                token = page.get(token_key)
                if not token:
                    return


def _check_read_only(method: str) -> None:
    if not method.startswith(("describe_", "list_")):  # pragma: no cover - a programming error, not input
        raise AssertionError(f"{method} is not a read-only call; drift and import only read")


class _translated:
    """Context manager: botocore exceptions -> ``LiveError`` with the call, the IAM action and a fix."""

    def __init__(self, action: str):
        self.action = action

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if isinstance(exc, (BotoCoreError, ClientError)):
            raise _as_live_error(self.action, exc) from None
        return False  # no error, a LiveError already, or a bug: let it through unchanged


def _as_live_error(action: str, exc: BaseException) -> LiveError:
    call = action.split(":", 1)[1]
    if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
        return LiveError(call, "no AWS credentials were found",
                         "sign in (e.g. `aws sso login --profile P`, then --profile P) or set AWS_PROFILE or "
                         "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY")
    if isinstance(exc, NoRegionError):
        return LiveError(call, "no AWS region is configured", "pass --region (e.g. --region us-east-1)")
    if isinstance(exc, EndpointConnectionError):
        return LiveError(call, f"the endpoint could not be reached ({exc})",
                         "check the network, the region, and AWS_ENDPOINT_URL_* if set")
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        message = str(error.get("Message", "")).strip()
        detail = f" ({code}: {message})" if message else f" ({code})"
        if code in ACCESS_DENIED:
            return AccessDenied(call, f"access denied{detail}",
                             f"grant {action} to the identity you run as (docs/live.md: the read-only "
                             "permissions drift and import need)")
        if code in BAD_CREDENTIALS:
            return LiveError(call, f"the AWS credentials were rejected{detail}",
                             "refresh them (e.g. `aws sso login`) or check AWS_PROFILE")
        if code in THROTTLED:
            return LiveError(call, f"still throttled after boto3's standard retries{detail}",
                             "run again later, or raise AWS_MAX_ATTEMPTS")
        if code in NOT_FOUND:
            return NotFound(call, f"not found{detail}", "check the name, the account (--profile) and --region")
        return LiveError(call, f"failed{detail}", "run again; if it persists, check the AWS service health")
    return LiveError(call, f"failed ({exc})", "check the AWS configuration (profile, region, endpoint)")
