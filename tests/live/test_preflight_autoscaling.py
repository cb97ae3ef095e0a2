"""preflight of a spec with cluster.autoScaling (issue 57): continuous provisioning and node recovery from
DescribeCluster (Stubber), the health-monitoring agent's version from its DaemonSets' image tag (a local Kubernetes
API speaking the API's JSON), and, for a cluster hyperpod-gov creates, the chart that installs the agent."""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest
import yaml

from hyperpod_gov.live.autoscaling import MIN_AGENT, agent_version
from hyperpod_gov.live.preflight import SOURCES, existing_checks, exit_code, run_preflight, to_text
from tests.conftest import EXAMPLES

from .fake_k8s import FakeKubernetes
from .test_preflight import Clients, Live, _args, _new_cluster_clients, _spec, kube  # noqa: F401 - kube: fixture

AGENT = "/apis/apps/v1/namespaces/aws-hyperpod/daemonsets/"
IMAGE = "767398015722.dkr.ecr.us-east-1.amazonaws.com/hyperpod-health-monitoring-agent"


def _daemonset(fake: FakeKubernetes, tag: str, name: str = "health-monitoring-agent") -> None:
    """The DaemonSet as the HyperPod dependencies chart installs it (its container and image), as the API returns
    it."""
    fake.raw[AGENT + name] = {
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "aws-hyperpod", "uid": "00000000-0000-0000-0000-000000000042",
                     "labels": {"app": name}},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {"serviceAccountName": "health-monitoring-agent",
                     "containers": [{"name": name, "image": f"{IMAGE}:{tag}", "imagePullPolicy": "IfNotPresent"}]}}},
        "status": {"desiredNumberScheduled": 3, "numberReady": 3}}


def _live(**members: Any) -> Live:
    """DescribeCluster of an autoscaled cluster; a member given as None is absent."""
    live = Live()
    given = {"NodeProvisioningMode": "Continuous", "NodeRecovery": "Automatic",
             "AutoScaling": {"Mode": "Enable", "AutoScalerType": "Karpenter", "Status": "InService"}, **members}
    live.cluster_members = {k: v for k, v in given.items() if v is not None}
    return live


def _autoscaled_spec() -> Any:
    spec = _spec()
    spec.cluster.auto_scaling = "karpenter"
    return spec


def _checks(live: Live, kube_connect: Any, spec: Any = None) -> dict[str, Any]:
    clients = Clients()
    clients.queue(live)
    checks = existing_checks(spec or _autoscaled_spec(), clients, kube_connect)
    clients.assert_all_used()
    return {c.id: c for c in checks}


def test_an_autoscaled_existing_cluster_that_meets_the_prerequisites_passes(kube):
    _daemonset(kube[0], "1.0.935.0_1.0.282.0")
    checks = _checks(_live(), kube[1])
    assert list(checks)[:2] == ["hyperpod-cluster", "continuous-provisioning"] and "health-agent" in checks
    assert {c.status for c in checks.values()} == {"pass"} and exit_code(list(checks.values())) == 0
    assert "health-monitoring-agent 1.0.935.0_1.0.282.0" in checks["health-agent"].detail
    assert all(c.source == SOURCES[c.id] for c in checks.values())
    assert {m for m, _, _ in kube[0].requests} == {"GET"}


def test_a_spec_without_autoscaling_makes_neither_check(kube):
    checks = _checks(_live(NodeProvisioningMode=None), kube[1], _spec())
    assert "continuous-provisioning" not in checks and "health-agent" not in checks


@pytest.mark.parametrize("members, fix", [
    ({"NodeProvisioningMode": None}, "--node-provisioning-mode Continuous"),
    ({"NodeRecovery": "None"}, "--node-recovery Automatic"),
], ids=["standard-provisioning", "no-node-recovery"])
def test_a_cluster_without_continuous_provisioning_or_node_recovery_is_a_fix(kube, members, fix):
    _daemonset(kube[0], MIN_AGENT)
    checks = _checks(_live(**members), kube[1])
    assert [c for c, v in checks.items() if v.status != "pass"] == ["continuous-provisioning"]
    check = checks["continuous-provisioning"]
    assert f"aws sagemaker update-cluster --cluster-name ml-cluster {fix}" in check.fix
    assert "AWS prerequisite" in check.detail and exit_code(list(checks.values())) == 1


@pytest.mark.parametrize("tag, status", [
    ("1.0.742.0_1.0.241.0", "pass"),  # the minimum itself
    ("1.0.1892.0_1.0.424.0", "pass"),  # the chart's default at aws/sagemaker-hyperpod-cli 011ca92
    ("1.1.0.0_1.0.0.0", "pass"),  # a newer agent: its own version decides
    ("1.0.741.9_1.0.999.0", "fix"),
    ("1.0.742.0_1.0.240.0", "fix"),  # the agent's version reached, its detector's not
    ("1.0.100.0_1.0.50.0", "fix"),
    ("latest", "not checked"),
], ids=["minimum", "chart-default", "newer-major", "older-agent", "older-detector", "old", "unversioned"])
def test_the_health_agent_version_is_read_from_the_daemonset_image_tag(kube, tag, status):
    _daemonset(kube[0], tag)
    check = _checks(_live(), kube[1])["health-agent"]
    assert check.status == status, check.detail
    if status == "fix":
        assert f"health-monitoring-agent runs {tag}" in check.detail and MIN_AGENT in check.fix
        assert "helm_chart/HyperPodHelmChart" in check.fix


def test_every_agent_daemonset_must_be_recent_enough(kube):
    _daemonset(kube[0], "1.0.935.0_1.0.282.0")
    _daemonset(kube[0], "1.0.600.0_1.0.200.0", name="health-monitoring-agent-non-nvidia")
    check = _checks(_live(), kube[1])["health-agent"]
    assert check.status == "fix" and "health-monitoring-agent-non-nvidia runs 1.0.600.0_1.0.200.0" in check.detail


def test_a_cluster_of_neuron_nodes_only_has_the_non_nvidia_agent(kube):
    _daemonset(kube[0], "1.0.935.0_1.0.282.0", name="health-monitoring-agent-non-nvidia")
    assert _checks(_live(), kube[1])["health-agent"].status == "pass"


def test_no_agent_is_a_fix_that_names_the_chart(kube):
    check = _checks(_live(), kube[1])["health-agent"]
    assert check.status == "fix" and "no health-monitoring agent runs" in check.detail
    assert "helm_chart/HyperPodHelmChart" in check.fix and MIN_AGENT in check.fix


def test_without_kubernetes_the_agent_check_is_skipped():
    checks = _checks(_live(), None)
    assert checks["health-agent"].status == "skipped" and exit_code(list(checks.values())) == 0
    assert "--  health-agent: not asked (--no-kubernetes)" in to_text(list(checks.values()))


def test_the_agent_version_reads_both_parts_in_order():
    assert agent_version(MIN_AGENT) == ((1, 0, 742, 0), (1, 0, 241, 0))
    assert agent_version("1.0.742.0") is None and agent_version("sha256-abc") is None
    assert agent_version("1.0.1000.0_1.0.0.0") > agent_version(MIN_AGENT)  # numbers, not text


# --- a cluster hyperpod-gov creates --------------------------------------------------------------------------------


def _elastic(tmp_path, chart: Optional[dict[str, str]]) -> str:
    data = yaml.safe_load((EXAMPLES / "elastic.yaml").read_text())
    data["cluster"]["name"] = "ml-cluster"  # the name _new_cluster_clients answers for
    data["cluster"].pop("dependenciesChart", None)
    if chart:
        data["cluster"]["dependenciesChart"] = chart
    path = tmp_path / "elastic.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


@pytest.mark.parametrize("chart, code, status", [
    (None, 1, "fix"),
    ({"oci": "oci://555555555555.dkr.ecr.us-east-1.amazonaws.com/hyperpod-dependencies", "version": "0.1.0"}, 0,
     "pass"),
], ids=["no-dependencies-chart", "dependencies-chart"])
def test_a_new_autoscaled_cluster_needs_the_chart_that_installs_the_agent(tmp_path, capsys, chart, code, status):
    clients = _new_cluster_clients(hyperpod_exists=False)
    assert run_preflight(_args(_elastic(tmp_path, chart), "--format", "json"), clients=clients) == code
    clients.assert_all_used()
    out = json.loads(capsys.readouterr().out)["checks"]
    assert [(c["check"], c["status"]) for c in out] == [("names-free", "pass"), ("autoscaling", status)]
    if status == "fix":
        assert "cluster.dependenciesChart" in out[1]["fix"] and MIN_AGENT in out[1]["fix"]
