"""Fixtures for drift and import: Stubber-wrapped clients and clusters built from the examples' plans."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from botocore.stub import Stubber

from hyperpod_gov.charts import render
from hyperpod_gov.live import configure_drift, configure_import, expected_state
from hyperpod_gov.live.k8s import connect_kubeconfig, kubernetes_drift
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import load_spec
from tests.conftest import EXAMPLES, TODAY

from .fake_aws import FakeCluster, clients, cluster_from_plan, stub_drift, stub_import
from .fake_k8s import FakeKubernetes, kubeconfig

ENTERPRISE = EXAMPLES / "enterprise.yaml"
STARTUP = EXAMPLES / "startup.yaml"


class Aws:
    """A SageMaker and an EKS client, each wrapped in a Stubber, and the operations they were asked for."""

    def __init__(self) -> None:
        self.sagemaker, self.eks, self.ec2 = clients()
        self.sm_stub, self.eks_stub, self.ec2_stub = Stubber(self.sagemaker), Stubber(self.eks), Stubber(self.ec2)
        self.operations: list[str] = []
        for client in (self.sagemaker, self.eks, self.ec2):
            client.meta.events.register("before-parameter-build", self._record)

    def _record(self, model: Any, **_: Any) -> None:
        self.operations.append(model.name)

    def factory(self, service: str) -> Any:
        return {"sagemaker": self.sagemaker, "eks": self.eks, "ec2": self.ec2}[service]

    def stubs(self) -> tuple[Stubber, ...]:
        return (self.sm_stub, self.eks_stub, self.ec2_stub)

    def __enter__(self) -> "Aws":
        for stub in self.stubs():
            stub.activate()
        return self

    def __exit__(self, *exc: Any) -> None:
        for stub in self.stubs():
            stub.deactivate()

    def assert_all_used(self) -> None:
        for stub in self.stubs():
            stub.assert_no_pending_responses()


@pytest.fixture
def aws() -> Iterator[Aws]:
    with Aws() as a:
        yield a


def spec_and_plan(path: Path):
    spec = load_spec(path, today=TODAY)
    return spec, build_plan(spec)


@pytest.fixture(scope="session")
def enterprise_live():
    spec, plan = spec_and_plan(EXAMPLES / "enterprise.yaml")
    return spec, plan, cluster_from_plan(plan)


def queue_drift(aws: Aws, spec: Any, plan: Any, fake: FakeCluster, page_size: int | None = None) -> None:
    expected = expected_state(plan)
    stub_drift(aws.sm_stub, aws.eks_stub, fake, page_size=page_size,
               described_addons=expected.described_addons,
               planned_service_accounts=tuple((i.namespace, i.service_account) for i in expected.pod_identities))


def queue_import(aws: Aws, fake: FakeCluster, *, existing: bool = False, **kw: Any) -> None:
    """What import reads; with ``existing``, governance-only mode's EC2 and add-on reads too."""
    stub_import(aws.sm_stub, aws.eks_stub, fake, ec2=aws.ec2_stub if existing else None, **kw)


def drift_args(*argv: str, kubernetes: bool = False) -> argparse.Namespace:
    """drift's arguments; the AWS-side tests add --no-kubernetes (tests/live/test_k8s.py covers that side)."""
    extra = [] if kubernetes else ["--no-kubernetes"]
    return configure_drift(argparse.ArgumentParser(prog="hyperpod-gov drift")).parse_args([*argv, *extra])


def import_args(*argv: str, existing: bool = False) -> argparse.Namespace:
    """import's arguments; without ``existing`` the spec is for a new cluster like the live one (--new-cluster)."""
    extra = [] if existing else ["--new-cluster"]
    return configure_import(argparse.ArgumentParser(prog="hyperpod-gov import")).parse_args([*argv, *extra])


# --- the Kubernetes side: the plan's manifests served by a local API server (fake_k8s.py) ---------------------


@pytest.fixture(scope="module")
def plans() -> dict[str, Any]:
    return {"enterprise": spec_and_plan(ENTERPRISE)[1], "startup": spec_and_plan(STARTUP)[1]}


@pytest.fixture
def served() -> Iterator[Callable[..., tuple[FakeKubernetes, str]]]:
    """serve(plan, tmp_path): the plan's rendered manifests on 127.0.0.1, and a kubeconfig that reaches them."""
    started: list[FakeKubernetes] = []

    def serve(plan: Any, tmp: Path, page_size: int = 3) -> tuple[FakeKubernetes, str]:
        fake = FakeKubernetes(render(plan).all(), page_size=page_size)
        url = fake.start()
        started.append(fake)
        path = tmp / "kubeconfig"
        path.write_text(kubeconfig(url))
        return fake, str(path)

    yield serve
    for fake in started:
        fake.stop()


def k8s_items(plan: Any, path: str) -> list[dict[str, Any]]:
    """The Kubernetes side of drift through the kubeconfig at ``path``, as JSON items."""
    side = kubernetes_drift(plan, lambda: connect_kubeconfig(path))
    assert side.checked, side.reason
    return [i.to_json() for i in side.items]
