"""The worker credential (live/multikueue_credential.py): a bounded token minted with the TokenRequest API on the
worker, published to Secrets Manager, applied on the manager as the Secret Kueue reads; never a kubeconfig Kueue
would refuse."""

from __future__ import annotations

import json
from types import SimpleNamespace

import boto3
import pytest
import yaml
from botocore.stub import Stubber

from hyperpod_gov.live.k8s import KubeApi, KubeUnavailable
from hyperpod_gov.live.multikueue_credential import (
    TOKEN_SECONDS, install, kubeconfig_problems, mint_worker_kubeconfig, publish, worker_kubeconfig,
)

EKS = {"name": "gpu-usw2-eks", "endpoint": "https://ABC.gr7.us-west-2.eks.amazonaws.com",
       "certificateAuthority": {"data": "LS0tQ0EtLS0="}}
SECRET = "arn:aws:secretsmanager:us-west-2:111111111111:secret:hyperpod-gov/multikueue/usw2-AbCdEf"


class FakeApiClient:
    """Records each request; answers with the next (status, body)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = []
        self.configuration = SimpleNamespace(host=EKS["endpoint"])

    def call_api(self, path, method, **kw):
        self.calls.append((method, path, kw))
        status, body = self.answers.pop(0)
        return SimpleNamespace(status=status, data=json.dumps(body).encode())


def minted_by(client):
    return mint_worker_kubeconfig(KubeApi(client, "test"), "usw2", EKS)


def test_the_worker_token_is_a_bounded_token_request_for_the_worker_service_account():
    client = FakeApiClient((201, {"status": {"token": "eyJ.minted", "expirationTimestamp": "2026-12-08T14:00:00Z"}}))
    minted = minted_by(client)
    method, path, kw = client.calls[0]
    assert (method, path) == ("POST", "/api/v1/namespaces/kueue-system/serviceaccounts/hyperpod-gov-multikueue/token")
    assert kw["body"] == {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                          "spec": {"expirationSeconds": TOKEN_SECONDS}}
    config = yaml.safe_load(minted.kubeconfig)
    assert config["users"][0]["user"] == {"token": "eyJ.minted"}
    assert config["clusters"][0]["cluster"] == {"server": EKS["endpoint"], "certificate-authority-data": "LS0tQ0EtLS0="}
    assert minted.expires == "2026-12-08T14:00:00Z"
    assert not kubeconfig_problems(minted.kubeconfig)


def test_a_refused_token_request_says_so():
    with pytest.raises(KubeUnavailable, match="HTTP 403"):
        minted_by(FakeApiClient((403, {"message": "forbidden"})))


@pytest.mark.parametrize("user, cluster, problem", [
    ({"exec": {"command": "aws", "args": ["eks", "get-token"]}}, {}, "exec plugins are not allowed"),
    ({"tokenFile": "/var/run/token"}, {}, "tokenFile is not allowed"),
    ({"token": "t"}, {"insecure-skip-tls-verify": True}, "insecure-skip-tls-verify"),
    ({"token": "t"}, {"certificate-authority": "/ca.pem"}, "use certificate-authority-data"),
    ({"username": "u", "password": "p"}, {}, "basic auth"),
    ({}, {}, "no inline token"),
    ({"token": "t"}, {"server": ""}, "no server"),
])
def test_a_kubeconfig_kueue_would_refuse_is_caught(user, cluster, problem):
    config = yaml.safe_load(worker_kubeconfig("usw2", EKS["endpoint"], "Q0E=", "t"))
    config["users"][0]["user"] = user
    config["clusters"][0]["cluster"].update(cluster)
    assert any(problem in p for p in kubeconfig_problems(json.dumps(config)))


def test_the_kubeconfig_is_published_then_applied_on_the_manager_as_the_secret_kueue_reads():
    minted = minted_by(FakeApiClient((201, {"status": {"token": "eyJ.minted", "expirationTimestamp": "x"}})))
    secrets = boto3.client("secretsmanager", region_name="us-west-2")
    with Stubber(secrets) as stub:
        stub.add_response("put_secret_value", {"VersionId": "v" * 32, "ARN": SECRET},
                          {"SecretId": SECRET, "SecretString": minted.kubeconfig})
        stub.add_response("get_secret_value", {"SecretString": minted.kubeconfig, "ARN": SECRET},
                          {"SecretId": SECRET})
        assert publish(secrets, SECRET, minted) == "v" * 32
        manager = FakeApiClient((200, {"kind": "Secret"}))
        install(secrets, SECRET, KubeApi(manager, "test"), "usw2")
    method, path, kw = manager.calls[0]
    assert (method, path) == ("PATCH", "/api/v1/namespaces/kueue-system/secrets/usw2-kubeconfig")
    assert kw["header_params"]["Content-Type"] == "application/apply-patch+yaml"
    assert ("fieldManager", "hyperpod-gov-multikueue") in kw["query_params"]
    assert kw["body"]["stringData"] == {"kubeconfig": minted.kubeconfig}  # the key Kueue reads


def test_the_manager_never_installs_a_kubeconfig_kueue_would_refuse():
    config = yaml.safe_load(worker_kubeconfig("usw2", EKS["endpoint"], "Q0E=", "t"))
    config["users"][0]["user"] = {"exec": {"command": "aws"}}
    secrets = boto3.client("secretsmanager", region_name="us-west-2")
    manager = FakeApiClient()
    with Stubber(secrets) as stub:
        stub.add_response("get_secret_value", {"SecretString": json.dumps(config)}, {"SecretId": SECRET})
        with pytest.raises(ValueError, match="exec plugins are not allowed"):
            install(secrets, SECRET, KubeApi(manager, "test"), "usw2")
    assert manager.calls == []
