"""The Kubernetes side of drift: the objects hyperpod-gov owns, read with the official ``kubernetes`` client.

Only GET requests (list and get): drift never changes the cluster. The API is reached either with a kubeconfig
(``--kubeconfig``, or the usual ``KUBECONFIG`` / ``~/.kube/config`` when its context points at the spec's EKS
cluster) or with a token made the way ``aws eks get-token`` makes it: a presigned STS ``GetCallerIdentity`` URL
carrying the ``x-k8s-aws-id`` header (EKS user guide, "Grant IAM users access to Kubernetes with EKS access
entries" / aws-iam-authenticator's token format), with the endpoint and CA from EKS ``DescribeCluster``.

What is compared, and how, is ``live/k8s_compare.py``'s: every object the charts render for the plan, on the whole
body hyperpod-gov owns (every top-level member but ``apiVersion``, ``kind``, ``metadata``, ``status``, a mapping
such as ``spec`` member by member, and the labels and annotations the charts set), with the team objects' governed
members of ``charts/fields.py``'s ``TEAM_OBJECTS`` reported under their own paths. This module reads: the kinds
(``KINDS``), the client, the ways to reach the API, and ``kubernetes_drift``, which puts them together.
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from ..plan import Plan
from .aws import Caller, ClientFactory, LiveError
from .drift import DriftItem
from .k8s_compare import LiveKubernetes, PlannedObject, compare_kubernetes, planned_kubernetes
from .kube_credential import K8S_AWS_ID_HEADER, TOKEN_PREFIX, eks_token  # noqa: F401 (one implementation)

PAGE_LIMIT = 500
REQUEST_TIMEOUT = 15  # seconds per request; an unreachable private endpoint should not hang drift

# kind -> (plural, namespaced): every kind the charts emit. A test renders both examples and checks that each
# rendered kind is here, so a new kind cannot be emitted without drift reading it.
KINDS: dict[str, tuple[str, bool]] = {
    "Namespace": ("namespaces", False),
    "ServiceAccount": ("serviceaccounts", True),
    "Role": ("roles", True),
    "RoleBinding": ("rolebindings", True),
    "ClusterRole": ("clusterroles", False),
    "ClusterRoleBinding": ("clusterrolebindings", False),
    "NetworkPolicy": ("networkpolicies", True),
    "ValidatingAdmissionPolicy": ("validatingadmissionpolicies", False),
    "ValidatingAdmissionPolicyBinding": ("validatingadmissionpolicybindings", False),
    "ResourceFlavor": ("resourceflavors", False),
    "Topology": ("topologies", False),  # scheduler.topology (kueue mode)
    "WorkloadPriorityClass": ("workloadpriorityclasses", False),
    "ClusterQueue": ("clusterqueues", False),
    "LocalQueue": ("localqueues", True),
    # Per-team workload limits (charts/admission.py, charts/tenant.py): the parameters and default requests.
    "ConfigMap": ("configmaps", True),
    "LimitRange": ("limitranges", True),
    # cluster.sharedStorage: each team's volume and claim.
    "PersistentVolume": ("persistentvolumes", False),
    "PersistentVolumeClaim": ("persistentvolumeclaims", True),
    # instanceGroups[].autoscale (charts/karpenter.py): HyperPod-managed Karpenter's objects.
    "HyperpodNodeClass": ("hyperpodnodeclasses", False),
    "NodePool": ("nodepools", False),
    # A fleet member's MultiKueue objects (charts/multikueue.py; the manager of fleet.dispatch).
    "MultiKueueCluster": ("multikueueclusters", False),
    "MultiKueueConfig": ("multikueueconfigs", False),
    "AdmissionCheck": ("admissionchecks", False),
}
# The API group of each kind, for listing a kind the plan has no object of (an unexpected one may still exist).
API_VERSIONS: dict[str, str] = {
    "Namespace": "v1", "ServiceAccount": "v1",
    "Role": "rbac.authorization.k8s.io/v1", "RoleBinding": "rbac.authorization.k8s.io/v1",
    "ClusterRole": "rbac.authorization.k8s.io/v1", "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
    "NetworkPolicy": "networking.k8s.io/v1",
    "ValidatingAdmissionPolicy": "admissionregistration.k8s.io/v1",
    "ValidatingAdmissionPolicyBinding": "admissionregistration.k8s.io/v1",
    "ConfigMap": "v1", "LimitRange": "v1",
}
KUEUE_KINDS = ("Topology", "ResourceFlavor", "WorkloadPriorityClass", "ClusterQueue", "LocalQueue")


class KubeUnavailable(Exception):
    """The Kubernetes API could not be reached or read; ``reason`` says why and what to do."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


# --- which kinds drift reads -------------------------------------------------------------------


def kinds_to_read(plan: Plan, planned: tuple[PlannedObject, ...]) -> dict[str, str]:
    """kind -> apiVersion of every kind drift lists: the planned kinds, and those the mode could own."""
    kinds = {k: v for k, v in API_VERSIONS.items() if k != "Namespace" or plan.owns_namespaces}
    if plan.emits_kueue_objects:
        from ..plan.kueue import KUEUE_API

        kinds.update({k: KUEUE_API for k in KUEUE_KINDS})
    if plan.cluster.auto_scaling is not None:  # a pool of a group that no longer autoscales is still listed
        from ..charts.karpenter import NODE_CLASS_API, NODE_CLASS_KIND, NODE_POOL_API, NODE_POOL_KIND

        kinds.update({NODE_CLASS_KIND: NODE_CLASS_API, NODE_POOL_KIND: NODE_POOL_API})
    for p in planned:
        kinds[p.kind] = p.api_version
    return dict(sorted(kinds.items()))


# --- reading the API ---------------------------------------------------------------------------


def _path(api_version: str, kind: str, namespace: str = "", name: str = "") -> str:
    plural, namespaced = KINDS[kind]
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    ns = f"/namespaces/{namespace}" if namespaced and namespace else ""
    return f"{base}{ns}/{plural}" + (f"/{name}" if name else "")


class KubeApi:
    """GET-only access to the Kubernetes API through the official client's ``ApiClient`` (auth, TLS, proxy)."""

    def __init__(self, api_client: Any, via: str):
        self.api_client = api_client
        self.via = via  # how it was reached, for the report

    def get_json(self, path: str, query: Optional[list[tuple[str, Any]]] = None) -> Optional[dict[str, Any]]:
        """The JSON at ``path``; None on 404. Raises ``KubeUnavailable`` with the request and a fix."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        api = self.api_client
        try:
            # The raw response (no model deserialization): the drift compares the API's own JSON.
            response = api.call_api(path, "GET", query_params=query or [],
                                    header_params={"Accept": "application/json"}, auth_settings=["BearerToken"],
                                    _return_http_data_only=True, _preload_content=False,
                                    _request_timeout=REQUEST_TIMEOUT)
            status, data = response.status, response.data
        except ApiException as exc:
            status, data = exc.status, (exc.body or b"")
        except (HTTPError, OSError) as exc:
            raise KubeUnavailable(f"GET {path}: the Kubernetes API at {api.configuration.host} could not be "
                                  f"reached ({type(exc).__name__}: {exc}); check the network path to the "
                                  "endpoint (a private endpoint needs a VPN or a host in the VPC)") from None
        if status == 404:
            return None
        if status in (401, 403):
            verb = "authenticate" if status == 401 else "authorize"
            raise KubeUnavailable(f"GET {path}: the API server did not {verb} the request (HTTP {status}: "
                                  f"{_message(data)}); drift needs get and list on this resource (e.g. the "
                                  "view ClusterRole plus read on RBAC and admission policies), through an EKS "
                                  "access entry for the identity you run as")
        if status >= 300:
            raise KubeUnavailable(f"GET {path}: HTTP {status} ({_message(data)}); run again, or check the API "
                                  "server's health")
        try:
            return json.loads(data)
        except ValueError:
            raise KubeUnavailable(f"GET {path}: the answer is not JSON; is {api.configuration.host} a Kubernetes "
                                  "API server?") from None

    def list(self, api_version: str, kind: str) -> list[dict[str, Any]]:
        """Every object of ``kind`` in every namespace (paged with limit/continue); [] if the API lacks the kind."""
        path, items, token = _path(api_version, kind), [], None
        while True:
            query: list[tuple[str, Any]] = [("limit", PAGE_LIMIT)] + ([("continue", token)] if token else [])
            page = self.get_json(path, query)
            if page is None:  # the resource type is not served (e.g. Kueue's CRDs not installed)
                return []
            items += page.get("items") or []
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items

    def get(self, api_version: str, kind: str, name: str, namespace: str = "") -> Optional[dict[str, Any]]:
        return self.get_json(_path(api_version, kind, namespace, name))


def _message(data: Any) -> str:
    try:
        return str(json.loads(data).get("message") or "").strip() or "no message"
    except (ValueError, AttributeError):
        return "no message"


def _client_from_configuration(configuration: Any) -> Any:
    from kubernetes.client import ApiClient

    return ApiClient(configuration)


def connect_kubeconfig(path: str, context: Optional[str] = None) -> KubeApi:
    """The API as the kubeconfig's (current or named) context reaches it. Raises ``KubeUnavailable``."""
    from kubernetes import config as kube_config
    from kubernetes.client import Configuration

    configuration = Configuration()
    try:
        kube_config.load_kube_config(config_file=path, context=context, client_configuration=configuration,
                                     persist_config=False)
    except (kube_config.ConfigException, OSError, ValueError, TypeError) as exc:
        raise KubeUnavailable(f"the kubeconfig {path} could not be used ({exc}); check the file and --context, "
                              "or run `aws eks update-kubeconfig --name <EKS cluster>`") from None
    label = f"kubeconfig {path}" + (f" (context {context})" if context else "")
    return KubeApi(_client_from_configuration(configuration), label)


def kubeconfig_server(path: str, context: Optional[str] = None) -> Optional[str]:
    """The API server URL of the kubeconfig's context, or None if the file cannot say."""
    try:
        from kubernetes import config as kube_config

        contexts, current = kube_config.list_kube_config_contexts(config_file=path)
        chosen = next((c for c in contexts if c["name"] == context), None) if context else current
        if not chosen:
            return None
        import yaml

        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        cluster = chosen["context"].get("cluster")
        for c in loaded.get("clusters") or []:
            if c.get("name") == cluster:
                return str((c.get("cluster") or {}).get("server") or "") or None
    except Exception:  # an unreadable default kubeconfig only means: use the EKS token instead
        return None
    return None


def default_kubeconfig() -> Optional[str]:
    """``KUBECONFIG``'s first file, else ``~/.kube/config``, if it exists (the kubectl default)."""
    env = os.environ.get("KUBECONFIG", "")
    candidates = [p for p in env.split(os.pathsep) if p] or [str(Path.home() / ".kube" / "config")]
    return next((p for p in candidates if Path(p).is_file()), None)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def connect_eks(eks_cluster: dict[str, Any], sts_client: Any) -> KubeApi:
    """The API at the EKS cluster's endpoint, with its CA and a token from STS. Raises ``KubeUnavailable``."""
    from botocore.exceptions import BotoCoreError, ClientError
    from kubernetes.client import Configuration

    name = eks_cluster.get("name", "")
    endpoint = eks_cluster.get("endpoint")
    if not endpoint:
        raise KubeUnavailable(f"EKS DescribeCluster gives cluster {name} no endpoint (status "
                              f"{eks_cluster.get('status', 'unknown')}); wait until it is ACTIVE")
    try:
        token = eks_token(sts_client, name)
    except (BotoCoreError, ClientError) as exc:
        raise KubeUnavailable(f"no EKS token could be made ({exc}); check the AWS credentials") from None
    configuration = Configuration()
    configuration.host = endpoint
    # The client's BearerToken auth setting reads the key named "authorization" (kubernetes <= 36) or
    # "BearerToken" (37 and later): set both.
    configuration.api_key = {"authorization": token, "BearerToken": token}
    configuration.api_key_prefix = {"authorization": "Bearer", "BearerToken": "Bearer"}
    ca = (eks_cluster.get("certificateAuthority") or {}).get("data")
    if ca:
        handle, ca_path = tempfile.mkstemp(prefix="hpg-eks-ca-", suffix=".pem")
        with os.fdopen(handle, "wb") as f:
            f.write(base64.b64decode(ca))
        atexit.register(_remove, ca_path)  # the client reads it when it opens connections, so keep it until exit
        configuration.ssl_ca_cert = ca_path
    return KubeApi(_client_from_configuration(configuration), f"EKS token for {name} at {endpoint}")


# --- reading every object ---------------------------------------------------------------------


def read_kubernetes(api: KubeApi, kinds: dict[str, str]) -> LiveKubernetes:
    """Every object of the kinds drift reads (one list per kind, across namespaces)."""
    objects: dict[tuple[str, str, str], dict[str, Any]] = {}
    for kind, api_version in kinds.items():
        namespaced = KINDS[kind][1]
        for obj in api.list(api_version, kind):
            meta = obj.get("metadata") or {}
            objects[(kind, meta.get("namespace", "") if namespaced else "", meta.get("name", ""))] = obj
    return LiveKubernetes(objects)


# --- the whole Kubernetes side -----------------------------------------------------------------


@dataclass(frozen=True)
class KubernetesSide:
    """What the Kubernetes side of drift did: checked (``via``) or not (``reason``), and what it found."""

    checked: bool
    via: str = ""
    reason: str = ""
    items: tuple[DriftItem, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"checked": True, "via": self.via} if self.checked else {"checked": False, "reason": self.reason}


Connector = Callable[[], KubeApi]


def kubernetes_drift(plan: Plan, connect: Connector, extra: tuple[dict[str, Any], ...] = ()) -> KubernetesSide:
    """Connect, read, compare. Never raises for an unreachable or unreadable API: says why it was not checked.
    ``extra``: cluster-wide objects planned beside the plan's own (a fleet member's MultiKueue objects)."""
    try:
        api = connect()
        planned = planned_kubernetes(plan, extra=extra)
        live = read_kubernetes(api, kinds_to_read(plan, planned))
    except KubeUnavailable as exc:
        return KubernetesSide(False, reason=exc.reason)
    except LiveError as exc:  # EKS DescribeCluster (for the endpoint) failed
        return KubernetesSide(False, reason=str(exc))
    return KubernetesSide(True, via=api.via, items=tuple(compare_kubernetes(planned, live)))


def connector(*, kubeconfig: Optional[str], context: Optional[str], clients: ClientFactory,
              eks_cluster_name: str) -> Connector:
    """How drift reaches the API: ``--kubeconfig`` if given; else the default kubeconfig when its context's
    server is the spec's EKS cluster's endpoint (so another cluster's context is never compared); else an EKS
    token from STS with the endpoint and CA of EKS ``DescribeCluster``."""

    def connect() -> KubeApi:
        if kubeconfig:
            return connect_kubeconfig(kubeconfig, context)
        described = Caller(clients("eks"), "eks").call("describe_cluster", name=eks_cluster_name).get("cluster") or {}
        default = default_kubeconfig()
        endpoint = (described.get("endpoint") or "").rstrip("/")
        if default and endpoint and (kubeconfig_server(default, context) or "").rstrip("/") == endpoint:
            return connect_kubeconfig(default, context)
        return connect_eks(described, clients("sts"))

    return connect

