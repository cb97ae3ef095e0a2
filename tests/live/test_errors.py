"""When the commands cannot look: exit 2, the failing call and what to grant or fix, never a traceback."""

from __future__ import annotations

import json
from typing import Any

import boto3
import botocore.session
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from botocore.credentials import CredentialResolver

from hyperpod_gov.live import boto3_clients, run_drift, run_import
from hyperpod_gov.live.aws import Caller, LiveError
from hyperpod_gov.live.read import read_cluster
from tests.conftest import EXAMPLES

from .conftest import drift_args, import_args, queue_import
from .fake_aws import REGION, WHEN

ENTERPRISE = str(EXAMPLES / "enterprise.yaml")


def test_access_denied_names_the_call_and_the_iam_action(aws, enterprise_live, capsys):
    _, _, fake = enterprise_live
    aws.sm_stub.add_response("describe_cluster", fake.describe_cluster(), {"ClusterName": "ml-cluster"})
    aws.sm_stub.add_response("list_cluster_scheduler_configs", {"ClusterSchedulerConfigSummaries": []},
                             {"ClusterArn": fake.arn})
    aws.sm_stub.add_client_error("list_compute_quotas", service_error_code="AccessDeniedException",
                                 service_message="User: arn:aws:sts::111111111111:assumed-role/Dev/me is not "
                                 "authorized to perform: sagemaker:ListComputeQuotas", http_status_code=400)
    assert run_drift(drift_args(ENTERPRISE), clients=aws.factory) == 2
    err = capsys.readouterr().err
    assert "ListComputeQuotas: access denied (AccessDeniedException" in err
    assert "grant sagemaker:ListComputeQuotas to the identity you run as" in err
    assert "Traceback" not in err


def test_access_denied_on_eks_names_the_eks_action(aws, enterprise_live, capsys):
    _, _, fake = enterprise_live
    fake = fake.copy()
    fake.policies, fake.quotas = [], []
    aws.sm_stub.add_response("describe_cluster", fake.describe_cluster(), {"ClusterName": "ml-cluster"})
    aws.sm_stub.add_response("list_cluster_scheduler_configs", {"ClusterSchedulerConfigSummaries": []})
    aws.sm_stub.add_response("list_compute_quotas", {"ComputeQuotaSummaries": []})
    aws.eks_stub.add_client_error("list_access_entries", service_error_code="AccessDeniedException",
                                  http_status_code=403)
    assert run_drift(drift_args(ENTERPRISE), clients=aws.factory) == 2
    assert "grant eks:ListAccessEntries" in capsys.readouterr().err


def test_a_cluster_that_does_not_exist_cannot_be_checked(aws, capsys):
    aws.sm_stub.add_client_error("describe_cluster", service_error_code="ResourceNotFound",
                                 service_message="Cluster ml-cluster not found", http_status_code=400)
    assert run_drift(drift_args(ENTERPRISE), clients=aws.factory) == 2
    err = capsys.readouterr().err
    assert "DescribeCluster: no HyperPod cluster named 'ml-cluster' in us-east-1" in err
    assert "--profile" in err and "--region" in err


def test_throttling_that_outlasts_the_retries_cannot_be_checked(aws, capsys):
    aws.sm_stub.add_client_error("describe_cluster", service_error_code="ThrottlingException",
                                 service_message="Rate exceeded", http_status_code=400)
    assert run_import(import_args("--cluster-name", "ml-cluster"), clients=aws.factory) == 2
    assert "DescribeCluster: still throttled after boto3's standard retries" in capsys.readouterr().err


class _Body:
    def __init__(self, data: bytes):
        self.data = data

    def stream(self, **_: Any):
        yield self.data


def test_throttling_is_retried_by_the_standard_retry_mode():
    """Stubber answers before botocore's retry loop, so this one test answers at the HTTP layer instead."""
    client = boto3.client("sagemaker", region_name=REGION, aws_access_key_id="AKIDEXAMPLE",
                          aws_secret_access_key="secret", config=Config(retries={"mode": "standard"}))
    cluster = {
        "ClusterArn": "arn:aws:sagemaker:us-east-1:111111111111:cluster/a1b2c3d4e5f6", "ClusterName": "ml-cluster",
        "ClusterStatus": "InService", "CreationTime": WHEN.timestamp(),
        "InstanceGroups": [{"InstanceGroupName": "gpu", "InstanceType": "ml.p5.48xlarge", "TargetCount": 2}],
        "Orchestrator": {"Eks": {"ClusterArn": "arn:aws:eks:us-east-1:111111111111:cluster/ml-cluster-eks"}},
    }
    answers = [(400, {"__type": "ThrottlingException", "message": "Rate exceeded"}), (200, cluster)]
    sent: list[str] = []

    def send(request: Any, **_: Any) -> AWSResponse:
        sent.append(json.loads(request.body)["ClusterName"])
        status, body = answers.pop(0)
        return AWSResponse(request.url, status, {"Content-Type": "application/x-amz-json-1.1"},
                           _Body(json.dumps(body).encode()))

    client.meta.events.register("before-send.sagemaker.DescribeCluster", send)
    live = read_cluster(Caller(client, "sagemaker"), "ml-cluster")
    assert sent == ["ml-cluster", "ml-cluster"]
    assert (live.account, live.region, live.eks_cluster_name) == ("111111111111", "us-east-1", "ml-cluster-eks")


def _no_credentials(service: str) -> Any:
    session = botocore.session.Session()
    session.register_component("credential_provider", CredentialResolver(providers=[]))
    # Never reached: signing fails first. An unroutable endpoint keeps the test offline regardless.
    return boto3.Session(botocore_session=session, region_name=REGION).client(
        service, endpoint_url="http://127.0.0.1:9", config=Config(retries={"mode": "standard"}))


@pytest.mark.parametrize("command", ["drift", "import"])
def test_no_credentials_is_a_clear_message_and_exit_2(command, capsys):
    if command == "drift":
        code = run_drift(drift_args(ENTERPRISE), clients=_no_credentials)
    else:
        code = run_import(import_args("--cluster-name", "ml-cluster"), clients=_no_credentials)
    err = capsys.readouterr().err
    assert code == 2
    assert f"hyperpod-gov {command}: could not read the cluster: DescribeCluster: no AWS credentials were found" in err
    assert "Traceback" not in err


def test_an_unknown_profile_is_named(tmp_path, monkeypatch):
    (tmp_path / "config").write_text("[default]\nregion = us-east-1\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    with pytest.raises(LiveError, match="the AWS profile 'nobody' is not configured"):
        boto3_clients(profile="nobody", region="us-east-1")


def test_default_clients_use_standard_retries():
    factory = boto3_clients(region="us-east-1")
    client = factory("sagemaker")
    assert client.meta.config.retries["mode"] == "standard"
    assert factory("sagemaker") is client


def test_an_invalid_spec_cannot_be_checked(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: Bad_Name\n")
    assert run_drift(drift_args(str(bad)), clients=lambda s: pytest.fail("no AWS call for an invalid spec")) == 2
    err = capsys.readouterr().err
    assert "cannot check against an invalid spec" in err and "name:" in err


def test_import_out_to_an_unwritable_path_is_exit_2(aws, enterprise_live, tmp_path, capsys):
    _, _, fake = enterprise_live
    queue_import(aws, fake)
    target = tmp_path / "missing-dir" / "spec.yaml"
    assert run_import(import_args("--cluster-name", "ml-cluster", "--out", str(target)), clients=aws.factory) == 2
    assert "cannot write" in capsys.readouterr().err


def test_drift_reads_with_the_region_given(aws, capsys):
    aws.sm_stub.add_client_error("describe_cluster", service_error_code="ResourceNotFound", http_status_code=400)
    assert run_drift(drift_args(ENTERPRISE, "--region", "eu-west-1"), clients=aws.factory) == 2
    assert "in eu-west-1" in capsys.readouterr().err


def test_credentials_of_another_account_cannot_check(aws, enterprise_live, capsys):
    _, _, fake = enterprise_live
    fake = fake.copy()
    fake.account = "999999999999"
    aws.sm_stub.add_response("describe_cluster", fake.describe_cluster(), {"ClusterName": "ml-cluster"})
    assert run_drift(drift_args(ENTERPRISE), clients=aws.factory) == 2
    assert ("the credentials reach account 999999999999, but the spec's capacity account is 111111111111"
            in capsys.readouterr().err)


def test_import_of_a_missing_cluster_names_the_region(aws, capsys):
    aws.sm_stub.add_client_error("describe_cluster", service_error_code="ResourceNotFound", http_status_code=400)
    assert run_import(import_args("--cluster-name", "nope"), clients=aws.factory) == 2
    assert "DescribeCluster: no HyperPod cluster named 'nope' in us-east-1" in capsys.readouterr().err
