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

Both run again before the token expires (``REFRESH_SECONDS``). The steps themselves are ``live/kube_credential.py``
(standard library only), which the Lambda functions of the fleet's ``<member>-multikueue`` stacks run on a schedule
(docs/fleet.md, "What the stacks create"); this module runs them from the CLI, through the ``kubernetes`` client.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from ..plan.multikueue import KUBECONFIG_KEY, WORKER_ACCOUNT, kubeconfig_secret
from ..plan.operators import KUEUE_NAMESPACE
from . import kube_credential as steps
from .k8s import REQUEST_TIMEOUT, KubeApi, KubeUnavailable
from .kube_credential import (FIELD_MANAGER, REFRESH_SECONDS, REFUSED_CLUSTER_KEYS, REFUSED_USER_KEYS,  # noqa: F401
                              TOKEN_SECONDS, MintedKubeconfig, kubeconfig_problems, publish)


def worker_kubeconfig(worker: str, server: str, ca_data: str, token: str) -> str:
    """The kubeconfig Kueue accepts for a worker: its endpoint, inline CA data, an inline token (JSON is YAML)."""
    return steps.worker_kubeconfig(worker, server, ca_data, token, f"{worker}-{WORKER_ACCOUNT}")


def _request(api: KubeApi) -> steps.Request:
    """``api`` as a request of ``kube_credential``: JSON answers, ``KubeUnavailable`` on a status of 300 or more."""

    def request(method: str, path: str, body: Optional[dict], content_type: str,
                query: Optional[list] = None) -> dict:
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
            raise KubeUnavailable(f"{method} {path}: HTTP {status} ({steps.message_of(data)}) via {api.via}")
        return json.loads(data)

    return request


def mint_worker_kubeconfig(worker_api: KubeApi, worker: str, eks_cluster: dict[str, Any], *,
                           seconds: int = TOKEN_SECONDS, namespace: str = KUEUE_NAMESPACE,
                           service_account: str = WORKER_ACCOUNT) -> MintedKubeconfig:
    """Step 1, on the worker: a TokenRequest for the worker's service account (needs ``create`` on
    ``serviceaccounts/token`` there) and the kubeconfig around it; ``eks_cluster``: EKS DescribeCluster's
    ``cluster`` (endpoint, CA)."""
    try:
        return steps.mint(_request(worker_api), worker, eks_cluster, namespace=namespace,
                          service_account=service_account, seconds=seconds)
    except steps.KubeRequestError as exc:
        raise KubeUnavailable(str(exc)) from None


def secret_manifest(worker: str, kubeconfig: str, namespace: str = KUEUE_NAMESPACE) -> dict[str, Any]:
    """The manager's Secret of a worker's kubeconfig (key ``kubeconfig``, as Kueue reads it)."""
    return steps.secret_manifest(kubeconfig_secret(worker), KUBECONFIG_KEY, kubeconfig, namespace)


def install(secrets_client: Any, secret_id: str, manager_api: KubeApi, worker: str,
            namespace: str = KUEUE_NAMESPACE) -> dict[str, Any]:
    """Step 2, on the manager: the worker's published kubeconfig into ``<worker>-kubeconfig`` (server-side apply,
    so a re-run replaces the token and nothing else); refused if Kueue would refuse it."""
    text = steps.published(secrets_client, secret_id)
    return steps.apply_secret(_request(manager_api), secret_manifest(worker, text, namespace))
