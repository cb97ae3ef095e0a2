"""The MultiKueue worker credential's steps, standalone: the standard library and botocore clients given by the caller.

One implementation for both callers: ``live/multikueue_credential.py`` (the CLI, through the ``kubernetes``
client's ``KubeApi``) and the Lambda functions the fleet's stacks deploy (``assets/multikueue_credential``, which
carry a copy of this file and no ``kubernetes``, pydantic or CDK). Nothing here imports the package: the names of
the namespace, service account and Secret key come from the caller (``plan/multikueue.py`` holds them).

A request is ``request(method, path, body, content_type, query) -> dict``: the API's JSON answer, raising
``KubeRequestError`` (or the caller's own error) on an HTTP status of 300 or more. ``HttpKube`` is one, over
``http.client`` with the cluster's CA and a bearer token.
"""

from __future__ import annotations

import base64
import http.client
import json
import ssl
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Optional

TOKEN_SECONDS = 24 * 3600  # asked lifetime; the API server may shorten it (the answer's expirationTimestamp says)
REFRESH_SECONDS = 8 * 3600  # re-mint at least this often: two refreshes may fail before a token lapses
FIELD_MANAGER = "hyperpod-gov-multikueue"
REQUEST_TIMEOUT = 15  # seconds per request
K8S_AWS_ID_HEADER = "x-k8s-aws-id"
TOKEN_PREFIX = "k8s-aws-v1."
# Kubeconfig user keys Kueue refuses (multikueuecluster.go@v0.19.2 validateKubeconfig / validateRestConfig), with
# its reason; plus client certificate file paths, which Kueue does not name but its pod could not read.
REFUSED_USER_KEYS = {
    "tokenFile": "tokenFile is not allowed", "exec": "exec plugins are not allowed",
    "auth-provider": "auth providers are not allowed", "username": "basic auth is not allowed",
    "password": "basic auth is not allowed", "client-certificate": "use client-certificate-data",
    "client-key": "use client-key-data",
}
REFUSED_CLUSTER_KEYS = {
    "insecure-skip-tls-verify": "insecure-skip-tls-verify is not allowed",
    "certificate-authority": "use certificate-authority-data",
}

Request = Callable[[str, str, Optional[dict], str, Optional[list]], dict]


class KubeRequestError(Exception):
    """A Kubernetes API request failed: ``status`` (0 when the API was not reached) and what it said."""

    def __init__(self, message: str, status: int = 0):
        self.status = status
        super().__init__(message)


@dataclass(frozen=True)
class MintedKubeconfig:
    """A worker's kubeconfig with a bounded token, and when the token expires (RFC 3339, as the API says)."""

    worker: str
    kubeconfig: str
    expires: str


def message_of(data: Any) -> str:
    """The ``message`` of a Kubernetes ``Status`` answer, or ``no message``."""
    try:
        return str(json.loads(data).get("message") or "").strip() or "no message"
    except (ValueError, AttributeError, TypeError):
        return "no message"


def eks_token(sts_client: Any, eks_cluster_name: str, expires: int = 60) -> str:
    """A bearer token for the EKS API, as ``aws eks get-token`` makes it.

    A presigned STS ``GetCallerIdentity`` GET URL whose signed headers include ``x-k8s-aws-id: <cluster>``,
    base64url-encoded without padding, prefixed ``k8s-aws-v1.``. Presigning is local (no call is made); EKS
    calls STS with the URL to learn who the caller is.
    """

    def keep_cluster_id(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        if K8S_AWS_ID_HEADER in params:
            context[K8S_AWS_ID_HEADER] = params.pop(K8S_AWS_ID_HEADER)

    def add_cluster_header(request: Any, **_: Any) -> None:
        if K8S_AWS_ID_HEADER in request.context:
            request.headers[K8S_AWS_ID_HEADER] = request.context[K8S_AWS_ID_HEADER]

    events = sts_client.meta.events
    events.register("provide-client-params.sts.GetCallerIdentity", keep_cluster_id, unique_id="hpg-k8s-id-1")
    events.register("before-sign.sts.GetCallerIdentity", add_cluster_header, unique_id="hpg-k8s-id-2")
    url = sts_client.generate_presigned_url("get_caller_identity", Params={K8S_AWS_ID_HEADER: eks_cluster_name},
                                            ExpiresIn=expires, HttpMethod="GET")
    return TOKEN_PREFIX + base64.urlsafe_b64encode(url.encode("utf-8")).decode("ascii").rstrip("=")


class HttpKube:
    """Requests to one Kubernetes API server with a bearer token, trusting only ``ca_data`` (base64 PEM, as EKS
    ``DescribeCluster`` gives it) for an ``https`` server; ``http`` only for a loopback test server."""

    def __init__(self, server: str, token: str, ca_data: str = "", timeout: float = REQUEST_TIMEOUT):
        url = urllib.parse.urlsplit(server)
        if url.scheme not in ("https", "http") or not url.hostname:
            raise KubeRequestError(f"{server!r} is not an https URL of a Kubernetes API server")
        self.scheme, self.host, self.port = url.scheme, url.hostname, url.port
        self.server, self.token, self.timeout = server, token, timeout
        self.context: Optional[ssl.SSLContext] = None
        if url.scheme == "https":
            self.context = ssl.create_default_context(
                cadata=base64.b64decode(ca_data).decode("ascii") if ca_data else None)

    def __call__(self, method: str, path: str, body: Optional[dict] = None, content_type: str = "application/json",
                 query: Optional[list] = None) -> dict:
        target = path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        if self.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=self.context)
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        payload = None
        if body is not None:
            payload, headers["Content-Type"] = json.dumps(body).encode(), content_type
        try:
            conn.request(method, target, body=payload, headers=headers)
            response = conn.getresponse()
            status, data = response.status, response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise KubeRequestError(f"{method} {path}: the Kubernetes API at {self.server} could not be reached "
                                   f"({type(exc).__name__}: {exc}); check the network path to the endpoint") from None
        finally:
            conn.close()
        if status >= 300:
            raise KubeRequestError(f"{method} {path}: HTTP {status} ({message_of(data)}) at {self.server}", status)
        return json.loads(data)


def worker_kubeconfig(worker: str, server: str, ca_data: str, token: str, user: str) -> str:
    """The kubeconfig Kueue accepts for a worker: its endpoint, inline CA data, an inline token (JSON is YAML)."""
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": worker, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": worker, "context": {"cluster": worker, "user": user}}],
        "current-context": worker,
    }
    return json.dumps(config, indent=2)


def _load(text: str) -> Any:
    """A kubeconfig as data: JSON (what ``worker_kubeconfig`` writes), else YAML where PyYAML is installed."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        import yaml
    except ImportError:  # the Lambda functions carry no PyYAML: they only read what the minter wrote (JSON)
        raise ValueError("not JSON (this runtime reads the JSON kubeconfig the minter writes)") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"not YAML: {exc}") from None


def kubeconfig_problems(text: str) -> list[str]:
    """What Kueue v0.19.2 would refuse in the kubeconfig (reason ``InsecureKubeConfig``/``BadKubeConfig``)."""
    try:
        config = _load(text) or {}
    except ValueError as exc:
        return [str(exc)]
    if not isinstance(config, dict):
        return ["not a kubeconfig mapping"]
    problems = []
    for c in config.get("clusters") or []:
        cluster = c.get("cluster") or {}
        if not cluster.get("server"):
            problems.append(f"cluster {c.get('name')}: no server")
        problems += [f"cluster {c.get('name')}: {why}" for key, why in REFUSED_CLUSTER_KEYS.items() if cluster.get(key)]
    for u in config.get("users") or []:
        user = u.get("user") or {}
        problems += [f"user {u.get('name')}: {why}" for key, why in REFUSED_USER_KEYS.items() if user.get(key)]
        if not (user.get("token") or user.get("client-certificate-data")):
            problems.append(f"user {u.get('name')}: no inline token or client certificate")
    if not config.get("clusters") or not config.get("users"):
        problems.append("no cluster or no user")
    return problems


def mint(request: Request, worker: str, eks_cluster: dict[str, Any], *, namespace: str, service_account: str,
         seconds: int = TOKEN_SECONDS) -> MintedKubeconfig:
    """Step 1, on the worker: a TokenRequest for the worker's service account (needs ``create`` on
    ``serviceaccounts/token`` there) and the kubeconfig around it; ``eks_cluster``: EKS DescribeCluster's
    ``cluster`` (endpoint, CA). Raises ``ValueError`` for a kubeconfig Kueue would refuse."""
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token"
    answer = request("POST", path, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                    "spec": {"expirationSeconds": seconds}}, "application/json", None)
    status = answer.get("status") or {}
    if not status.get("token"):
        raise KubeRequestError(f"POST {path}: the answer holds no token")
    ca = (eks_cluster.get("certificateAuthority") or {}).get("data") or ""
    text = worker_kubeconfig(worker, eks_cluster.get("endpoint") or "", ca, status["token"],
                             f"{worker}-{service_account}")
    problems = kubeconfig_problems(text)
    if problems:
        raise ValueError(f"worker {worker}: Kueue would refuse the kubeconfig: {'; '.join(problems)}")
    return MintedKubeconfig(worker, text, str(status.get("expirationTimestamp") or ""))


def publish(secrets_client: Any, secret_id: str, minted: MintedKubeconfig) -> str:
    """Step 1, end: the kubeconfig as the secret's new current version (the worker account's Secrets Manager
    secret, which the manager's account may read). Returns the version id."""
    answer = secrets_client.put_secret_value(SecretId=secret_id, SecretString=minted.kubeconfig)
    return str(answer["VersionId"])


def published(secrets_client: Any, secret_id: str) -> str:
    """Step 2, start: the worker's published kubeconfig; ``ValueError`` if Kueue would refuse it."""
    text = secrets_client.get_secret_value(SecretId=secret_id)["SecretString"]
    problems = kubeconfig_problems(text)
    if problems:
        raise ValueError(f"{secret_id}: Kueue would refuse the kubeconfig: {'; '.join(problems)}")
    return text


def secret_manifest(name: str, key: str, kubeconfig: str, namespace: str) -> dict[str, Any]:
    """The manager's Secret of a worker's kubeconfig (key ``key``, as Kueue reads it)."""
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"app.kubernetes.io/managed-by": "hyperpod-gov"}},
            "stringData": {key: kubeconfig}}


def apply_secret(request: Request, body: dict[str, Any]) -> dict[str, Any]:
    """Step 2, end: server-side apply of the Secret (created if missing; a re-run replaces the token and nothing
    else). Kubernetes authorizes an apply that creates as ``create`` of that name as well as ``patch``."""
    meta = body["metadata"]
    path = f"/api/v1/namespaces/{meta['namespace']}/secrets/{meta['name']}"
    return request("PATCH", path, body, "application/apply-patch+yaml",
                   [("fieldManager", FIELD_MANAGER), ("force", "true")])
