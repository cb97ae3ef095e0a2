"""The MultiKueue credential functions (assets/multikueue_credential/index.py with live/kube_credential.py beside it,
as the stacks bundle them): the minter and the copier against a loopback HTTP server that answers as the Kubernetes
API and as CloudFormation's response URL, AWS through botocore's Stubber. No AWS, no kubernetes client."""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3
import pytest
from botocore.stub import ANY, Stubber

from hyperpod_gov.constructs.multikueue_function import handler_dir
from hyperpod_gov.live import kube_credential

ACCOUNT = "111111111111"
WORKER_SECRET = "hyperpod-gov/multikueue/acme-usw2-train/kubeconfig"
MINT_ENV = {"WORKER": "usw2-train", "EKS_CLUSTER": "acme-usw2-train-eks", "SECRET_ID": WORKER_SECRET,
            "NAMESPACE": "kueue-system", "SERVICE_ACCOUNT": "hyperpod-gov-multikueue"}


def _workers(*names):
    return json.dumps([{"worker": n, "region": "us-west-2", "kubeconfigSecret": f"{n}-kubeconfig",
                        "secretArn": f"arn:aws:secretsmanager:us-west-2:{ACCOUNT}:secret:hyperpod-gov/multikueue/"
                                     f"acme-{n}/kubeconfig"} for n in names])


@pytest.fixture(scope="module")
def index():
    """The handler as bundled: index.py importing the kube_credential copied beside it."""
    folder = handler_dir()
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location("multikueue_credential_index", folder / "index.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(folder))
    return module


class Api:
    """A loopback server: the Kubernetes API (answers queued per method) and CloudFormation's response URL."""

    def __init__(self):
        self.requests, self.answers, self.responses = [], {"POST": [], "PATCH": []}, []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.startswith("/cfn"):
                    api.responses.append(json.loads(body))
                    status, answer = 200, {}
                else:
                    api.requests.append((self.command, self.path, dict(self.headers), json.loads(body or b"{}")))
                    status, answer = api.answers[self.command].pop(0)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_PATCH = do_PUT = _serve

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def event(self, request_type):
        return {"RequestType": request_type, "ResponseURL": f"{self.url}/cfn/response", "StackId": "stack",
                "RequestId": "req", "LogicalResourceId": "RunAtDeploy"}


@pytest.fixture
def api():
    server = Api()
    yield server
    server.server.shutdown()


class Aws:
    """Stubbed clients by service and region; sts unstubbed (the EKS token is presigned locally)."""

    def __init__(self, api):
        kw = dict(aws_access_key_id="AKIAEXAMPLE", aws_secret_access_key="secret")
        self.clients = {("eks", None): boto3.client("eks", region_name="us-east-1", **kw),
                        ("sts", None): boto3.client("sts", region_name="us-east-1", **kw),
                        ("secretsmanager", None): boto3.client("secretsmanager", region_name="us-west-2", **kw),
                        ("secretsmanager", "us-west-2"): boto3.client("secretsmanager", region_name="us-west-2",
                                                                      **kw)}
        self.stubs = {k: Stubber(c) for k, c in self.clients.items() if k[0] != "sts"}
        for stub in self.stubs.values():
            stub.activate()
        self.stubs[("eks", None)].add_response("describe_cluster", {"cluster": {
            "name": "acme-usw2-train-eks", "endpoint": api.url, "certificateAuthority": {"data": "Q0E="}}})

    def __call__(self, service, region=None):
        return self.clients[(service, region)]

    def secrets(self, region=None):
        return self.stubs[("secretsmanager", region)]


def _connect(index):
    """The handler's own connect, but over plain http to the loopback server (no CA for it)."""
    return lambda cluster, sts: kube_credential.HttpKube(cluster["endpoint"], index.steps.eks_token(sts, cluster["name"]))


def test_the_handler_carries_no_import_beyond_the_standard_library_and_boto3():
    allowed = {"boto3", "botocore", "kube_credential"} | set(sys.stdlib_module_names)
    for name in ("index.py", "kube_credential.py"):
        tree = ast.parse((handler_dir() / name).read_text())
        imported = {n.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for n in node.names}
        imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
        assert imported - {"yaml"} <= allowed, (name, imported - allowed)  # yaml: optional, guarded
    assert (handler_dir() / "kube_credential.py").read_bytes() == kube_credential.__loader__.get_data(
        kube_credential.__file__)  # the one implementation, copied


@pytest.fixture
def wired(index, api, monkeypatch):
    """The entry points wired to the stubbed clients and the loopback API."""
    aws = Aws(api)
    monkeypatch.setattr(index, "CLIENTS", aws)
    monkeypatch.setattr(index, "CONNECT", _connect(index))
    return aws


def _published(token="eyJ.minted"):
    return kube_credential.worker_kubeconfig("usw2-train", "https://w.example", "Q0E=", token, "u")


def test_the_minter_requests_a_bounded_token_as_its_role_and_publishes_the_kubeconfig(index, api, wired):
    api.answers["POST"].append((201, {"status": {"token": "eyJ.minted", "expirationTimestamp": "2026-12-08T08:00:00Z"}}))
    wired.secrets().add_response("put_secret_value", {"VersionId": "v" * 32},
                                 {"SecretId": WORKER_SECRET, "SecretString": ANY})
    result = index.run_mint(MINT_ENV)
    method, path, headers, body = api.requests[0]
    assert (method, path) == ("POST", "/api/v1/namespaces/kueue-system/serviceaccounts/hyperpod-gov-multikueue/token")
    assert body == {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                    "spec": {"expirationSeconds": kube_credential.TOKEN_SECONDS}}
    assert headers["Authorization"].startswith("Bearer k8s-aws-v1.")  # the role's EKS token, presigned locally
    assert result == {"worker": "usw2-train", "versionId": "v" * 32, "expires": "2026-12-08T08:00:00Z"}
    wired.secrets().assert_no_pending_responses()


def test_the_first_mint_at_deploy_answers_cloudformation(index, api, wired, monkeypatch):
    monkeypatch.setattr(index.os, "environ", MINT_ENV)
    api.answers["POST"].append((201, {"status": {"token": "eyJ.minted", "expirationTimestamp": "x"}}))
    wired.secrets().add_response("put_secret_value", {"VersionId": "v" * 32},
                                 {"SecretId": WORKER_SECRET, "SecretString": ANY})
    index.mint(api.event("Create"))
    (response,) = api.responses
    assert (response["Status"], response["Data"]["worker"]) == ("SUCCESS", "usw2-train")
    assert response["PhysicalResourceId"] == "RunAtDeploy" and response["RequestId"] == "req"


def test_a_refused_token_request_fails_the_deploy_with_the_reason(index, api, wired, monkeypatch):
    monkeypatch.setattr(index.os, "environ", MINT_ENV)
    api.answers["POST"].append((403, {"message": "serviceaccounts \"x\" is forbidden"}))
    index.mint(api.event("Create"))
    (response,) = api.responses
    assert response["Status"] == "FAILED"
    assert "HTTP 403" in response["Reason"] and "forbidden" in response["Reason"]


def test_the_copier_applies_each_workers_kubeconfig_as_the_secret_kueue_reads(index, api, wired):
    text = _published()
    for name in ("usw2-train", "use1-train"):
        wired.secrets("us-west-2").add_response(
            "get_secret_value", {"SecretString": text},
            {"SecretId": f"arn:aws:secretsmanager:us-west-2:{ACCOUNT}:secret:hyperpod-gov/multikueue/acme-{name}/kubeconfig"})
        api.answers["PATCH"].append((201, {"kind": "Secret"}))
    env = {"EKS_CLUSTER": "acme-use1-mgr-eks", "NAMESPACE": "kueue-system", "KUBECONFIG_KEY": "kubeconfig",
           "WORKERS": _workers("usw2-train", "use1-train")}
    assert index.run_copy(env) == {"installed": ["usw2-train", "use1-train"], "waiting": []}
    method, path, headers, body = api.requests[0]
    assert (method, path) == ("PATCH", "/api/v1/namespaces/kueue-system/secrets/usw2-train-kubeconfig"
                                       "?fieldManager=hyperpod-gov-multikueue&force=true")
    assert headers["Content-Type"] == "application/apply-patch+yaml"
    assert body["stringData"] == {"kubeconfig": text}
    assert api.requests[1][1].startswith("/api/v1/namespaces/kueue-system/secrets/use1-train-kubeconfig?")


COPY_ENV = {"EKS_CLUSTER": "acme-use1-mgr-eks", "NAMESPACE": "kueue-system", "KUBECONFIG_KEY": "kubeconfig",
            "WORKERS": _workers("usw2-train", "use1-train")}


def _one_missing(wired, api):
    """usw2-train's secret not there yet (another account: AccessDenied), use1-train's published."""
    wired.secrets("us-west-2").add_client_error("get_secret_value", "AccessDeniedException", "not authorized")
    wired.secrets("us-west-2").add_response("get_secret_value", {"SecretString": _published()})
    api.answers["PATCH"].append((201, {"kind": "Secret"}))


def test_the_copy_at_deploy_leaves_a_secret_not_there_yet_to_the_schedule(index, api, wired, monkeypatch):
    monkeypatch.setattr(index.os, "environ", COPY_ENV)
    _one_missing(wired, api)
    index.copy(api.event("Create"))
    (response,) = api.responses
    assert response["Status"] == "SUCCESS"
    assert "usw2-train" in response["Reason"] and "AccessDeniedException" in response["Reason"]
    assert response["Data"]["installed"] == "use1-train"
    assert [r[1].split("?")[0] for r in api.requests] == ["/api/v1/namespaces/kueue-system/secrets/use1-train-kubeconfig"]


def test_the_scheduled_copy_fails_on_a_missing_secret_after_trying_every_worker(index, api, wired, monkeypatch):
    monkeypatch.setattr(index.os, "environ", COPY_ENV)
    _one_missing(wired, api)
    with pytest.raises(RuntimeError, match="usw2-train.*AccessDeniedException"):
        index.copy({"source": "scheduler"})
    assert len(api.requests) == 1  # use1-train was still installed


def test_the_copy_at_deploy_fails_on_a_kubeconfig_kueue_would_refuse(index, api, wired, monkeypatch):
    monkeypatch.setattr(index.os, "environ", {**COPY_ENV, "WORKERS": _workers("usw2-train")})
    refused = json.loads(_published())
    refused["users"][0]["user"] = {"exec": {"command": "aws"}}
    wired.secrets("us-west-2").add_response("get_secret_value", {"SecretString": json.dumps(refused)})
    index.copy(api.event("Update"))
    (response,) = api.responses
    assert response["Status"] == "FAILED" and "exec plugins are not allowed" in response["Reason"]
    assert api.requests == []


def test_deleting_the_run_at_deploy_touches_nothing(index, api, wired):
    index.mint(api.event("Delete"))
    index.copy(api.event("Delete"))
    assert [r["Status"] for r in api.responses] == ["SUCCESS", "SUCCESS"]
    assert api.requests == []


def test_the_https_client_trusts_only_the_clusters_ca():
    with pytest.raises(kube_credential.KubeRequestError, match="not an https URL"):
        kube_credential.HttpKube("ftp://x", "t")
    client = kube_credential.HttpKube("https://example.invalid", "t", "")
    assert client.context.verify_mode.name == "CERT_REQUIRED" and client.context.check_hostname
