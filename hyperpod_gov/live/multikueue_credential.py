"""The MultiKueue worker credential: a bounded service-account token, minted on the worker and copied to the manager.

Kueue v0.19.2 reads a worker's kubeconfig from a Secret of its namespace on the manager (key ``kubeconfig``) and
refuses exec plugins, token files, certificate files, insecure TLS and basic auth in it (``validateKubeconfig`` in
``pkg/controller/admissionchecks/multikueue/multikueuecluster.go``): the kubeconfig must carry an inline token. So
no EKS ``aws eks get-token`` exec, and no long-lived token in the spec or the repository. Instead (docs/fleet.md,
"The worker credential"):

1. on the worker, with an identity that may create tokens for the worker's service account
   (plan/multikueue.py ``WORKER_ACCOUNT`` in ``kueue-system``), :func:`mint_worker_kubeconfig` asks the Kubernetes
   TokenRequest API for a token of bounded lifetime, builds the kubeconfig (endpoint and CA from EKS
   ``DescribeCluster``) and :func:`publish` writes it to a Secrets Manager secret in the worker's account;
2. on the manager, :func:`install` reads that secret (shared with the manager's account by a resource policy) and
   applies it as the ``<worker>-kubeconfig`` Secret (server-side apply); Kueue watches the Secret and reconnects
   with the new token without a restart.

Both run again before the token expires (``REFRESH_SECONDS``). This module is the code of both steps; what runs it
(a scheduled job in each account) is the documented part (docs/fleet.md says which).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

from ..plan.multikueue import KUBECONFIG_KEY, WORKER_ACCOUNT, kubeconfig_secret
from ..plan.operators import KUEUE_NAMESPACE
from .k8s import REQUEST_TIMEOUT, KubeApi, KubeUnavailable, _message

TOKEN_SECONDS = 24 * 3600  # asked lifetime; the API server may shorten it (the answer's expirationTimestamp says)
REFRESH_SECONDS = 8 * 3600  # re-mint at least this often: two refreshes may fail before a token lapses
FIELD_MANAGER = "hyperpod-gov-multikueue"
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


@dataclass(frozen=True)
class MintedKubeconfig:
    """A worker's kubeconfig with a bounded token, and when the token expires (RFC 3339, as the API says)."""

    worker: str
    kubeconfig: str
    expires: str


def worker_kubeconfig(worker: str, server: str, ca_data: str, token: str) -> str:
    """The kubeconfig Kueue accepts for a worker: its endpoint, inline CA data, an inline token (JSON is YAML)."""
    user = f"{worker}-{WORKER_ACCOUNT}"
    config = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": worker, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": worker, "context": {"cluster": worker, "user": user}}],
        "current-context": worker,
    }
    return json.dumps(config, indent=2)


def kubeconfig_problems(text: str) -> list[str]:
    """What Kueue v0.19.2 would refuse in the kubeconfig (reason ``InsecureKubeConfig``/``BadKubeConfig``)."""
    import yaml

    try:
        config = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        return [f"not YAML: {exc}"]
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


def _call(api: KubeApi, method: str, path: str, body: dict[str, Any], content_type: str,
          query: Optional[list[tuple[str, Any]]] = None) -> dict[str, Any]:
    from kubernetes.client.exceptions import ApiException

    try:
        response = api.api_client.call_api(
            path, method, query_params=query or [], body=body,
            header_params={"Accept": "application/json", "Content-Type": content_type},
            auth_settings=["BearerToken"], _return_http_data_only=True, _preload_content=False,
            _request_timeout=REQUEST_TIMEOUT)
        status, data = response.status, response.data
    except ApiException as exc:
        status, data = exc.status, (exc.body or b"")
    if status >= 300:
        raise KubeUnavailable(f"{method} {path}: HTTP {status} ({_message(data)}) via {api.via}")
    return json.loads(data)


def mint_worker_kubeconfig(worker_api: KubeApi, worker: str, eks_cluster: dict[str, Any], *,
                           seconds: int = TOKEN_SECONDS, namespace: str = KUEUE_NAMESPACE,
                           service_account: str = WORKER_ACCOUNT) -> MintedKubeconfig:
    """Step 1, on the worker: a TokenRequest for the worker's service account (needs ``create`` on
    ``serviceaccounts/token`` there) and the kubeconfig around it; ``eks_cluster``: EKS DescribeCluster's
    ``cluster`` (endpoint, CA)."""
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token"
    answer = _call(worker_api, "POST", path, {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                              "spec": {"expirationSeconds": seconds}}, "application/json")
    status = answer.get("status") or {}
    if not status.get("token"):
        raise KubeUnavailable(f"POST {path}: the answer holds no token")
    ca = (eks_cluster.get("certificateAuthority") or {}).get("data") or ""
    text = worker_kubeconfig(worker, eks_cluster.get("endpoint") or "", ca, status["token"])
    problems = kubeconfig_problems(text)
    if problems:
        raise ValueError(f"worker {worker}: Kueue would refuse the kubeconfig: {'; '.join(problems)}")
    return MintedKubeconfig(worker, text, str(status.get("expirationTimestamp") or ""))


def publish(secrets_client: Any, secret_id: str, minted: MintedKubeconfig) -> str:
    """Step 1, end: the kubeconfig as the secret's new current version (the worker account's Secrets Manager
    secret, which the manager's account may read). Returns the version id."""
    answer = secrets_client.put_secret_value(SecretId=secret_id, SecretString=minted.kubeconfig)
    return str(answer["VersionId"])


def secret_manifest(worker: str, kubeconfig: str, namespace: str = KUEUE_NAMESPACE) -> dict[str, Any]:
    """The manager's Secret of a worker's kubeconfig (key ``kubeconfig``, as Kueue reads it)."""
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": kubeconfig_secret(worker), "namespace": namespace,
                         "labels": {"app.kubernetes.io/managed-by": "hyperpod-gov"}},
            "stringData": {KUBECONFIG_KEY: kubeconfig}}


def install(secrets_client: Any, secret_id: str, manager_api: KubeApi, worker: str,
            namespace: str = KUEUE_NAMESPACE) -> dict[str, Any]:
    """Step 2, on the manager: the worker's published kubeconfig into ``<worker>-kubeconfig`` (server-side apply,
    so a re-run replaces the token and nothing else); refused if Kueue would refuse it."""
    text = secrets_client.get_secret_value(SecretId=secret_id)["SecretString"]
    problems = kubeconfig_problems(text)
    if problems:
        raise ValueError(f"{secret_id}: Kueue would refuse the kubeconfig: {'; '.join(problems)}")
    body = secret_manifest(worker, text, namespace)
    path = f"/api/v1/namespaces/{namespace}/secrets/{body['metadata']['name']}"
    return _call(manager_api, "PATCH", path, body, "application/apply-patch+yaml",
                 [("fieldManager", FIELD_MANAGER), ("force", "true")])
