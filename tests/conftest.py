"""Shared fixtures. CDK/jsii start-up is slow: synthesize once per session, not per test."""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TODAY = dt.date(2026, 11, 30)  # fixed, so contract review dates never make the tests flaky

BASE = {
    "name": "acme",
    "accounts": {
        "capacity": {"id": "111111111111", "region": "us-east-1"},
        "consumers": [{"name": "data", "id": "222222222222", "region": "us-east-1"}],
    },
    "cluster": {
        "name": "ml",
        "kubernetesVersion": "1.33",
        "admins": ["arn:aws:iam::111111111111:role/Admin"],
        "instanceGroups": [
            {"name": "gpu", "instanceType": "ml.p5.48xlarge", "count": 2},
            {"name": "small", "instanceType": "ml.g5.8xlarge", "count": 4},
        ],
    },
    "scheduler": {"priorityClasses": [{"name": "training", "weight": 80}]},
    "teams": [
        {
            "name": "team-a",
            "quota": [{"instanceType": "ml.p5.48xlarge", "accelerators": 8}],
            "sharing": {"strategy": "LendAndBorrow", "borrowLimitPercent": 50},
            "access": {"submitters": ["arn:aws:iam::111111111111:role/A"]},
            "workloadIdentities": [
                {"serviceAccount": "trainer", "targetRoleArn": "arn:aws:iam::222222222222:role/reader"}
            ],
        },
        {
            "name": "team-b",
            "quota": [{"instanceType": "ml.g5.8xlarge", "count": 2}],
            "sharing": {"strategy": "DontLend"},
        },
    ],
}


@pytest.fixture
def base() -> dict:
    """A small valid spec as loaded from YAML; tests mutate their own copy."""
    return copy.deepcopy(BASE)


@pytest.fixture(scope="session")
def today() -> dt.date:
    return TODAY


@pytest.fixture(scope="session")
def enterprise_spec():
    from hyperpod_gov.spec import load_spec

    return load_spec(EXAMPLES / "enterprise.yaml", today=TODAY)


@pytest.fixture(scope="session")
def startup_spec():
    from hyperpod_gov.spec import load_spec

    return load_spec(EXAMPLES / "startup.yaml", today=TODAY)


@pytest.fixture(scope="session")
def enterprise(enterprise_spec, tmp_path_factory):
    """The enterprise example synthesized once per session (cdk-nag runs as part of it)."""
    from tests.synth_helpers import synthesize

    return synthesize(enterprise_spec, tmp_path_factory.mktemp("enterprise"))


@pytest.fixture(scope="session")
def startup(startup_spec, tmp_path_factory):
    from tests.synth_helpers import synthesize

    return synthesize(startup_spec, tmp_path_factory.mktemp("startup"))


@pytest.fixture
def snapshot_json(snapshot):
    """syrupy snapshots stored as readable, sorted JSON (one file per test)."""
    from syrupy.extensions.json import JSONSnapshotExtension

    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.fixture(scope="session")
def pipeline(enterprise_spec, tmp_path_factory):
    """The enterprise pipeline app synthesized once (cdk-nag runs on it and on every stage)."""
    from tests.synth_helpers import build_pipeline_app_for

    out = tmp_path_factory.mktemp("pipeline")
    app = build_pipeline_app_for(enterprise_spec, spec_path="examples/enterprise.yaml", outdir=str(out))
    app.synth()
    return out


def as_existing(data: dict, eks_cluster_name: str = "shared-eks") -> dict:
    """``data`` (BASE-shaped) governing a cluster that runs already: ``cluster.existing`` set, and the keys of a
    created cluster it refuses (admins, a VPC to build) taken out. Returns ``data``."""
    data["cluster"]["existing"] = {
        "hyperPodClusterArn": "arn:aws:sagemaker:us-east-1:111111111111:cluster/abcd1234efgh",
        "eksClusterName": eks_cluster_name, "vpcId": "vpc-0123456789abcdef0",
        "subnetIds": ["subnet-0123456789abcdef0"], "securityGroupId": "sg-0123456789abcdef0"}
    data["cluster"].pop("admins", None)
    data["cluster"]["vpc"] = {"cidr": "10.0.0.0/16"}
    return data
