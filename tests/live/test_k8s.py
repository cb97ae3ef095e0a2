"""The Kubernetes side of drift against a local API server (tests/live/fake_k8s.py) reached with the official
client: a kubeconfig, or an EKS token made from a presigned STS URL. The AWS side is served by botocore's Stubber."""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_gov.charts import render
from hyperpod_gov.live import run_drift
from hyperpod_gov.live.aws import RETRY_CONFIG
from hyperpod_gov.live.k8s import KINDS, TOKEN_PREFIX, connect_kubeconfig, eks_token, kubernetes_drift
from hyperpod_gov.live.k8s_compare import matches, planned_kubernetes
from hyperpod_gov.plan import names

from .conftest import ENTERPRISE, Aws, drift_args, k8s_items, queue_drift, spec_and_plan
from .fake_aws import cluster_from_plan
from .fake_k8s import kubeconfig

MANAGED = {"app.kubernetes.io/managed-by": "hyperpod-gov"}


def test_every_kind_the_charts_render_is_read(plans):
    for plan in plans.values():
        assert {m["kind"] for m in render(plan).all()} <= set(KINDS)


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_a_cluster_built_from_the_plan_shows_no_drift_and_drift_only_reads(plans, served, tmp_path, example):
    fake, path = served(plans[example], tmp_path)
    assert k8s_items(plans[example], path) == []
    assert {m for m, _, _ in fake.requests} == {"GET"}
    assert any("continue=" in p for _, p, _ in fake.requests)  # pages were followed (page size 3)
    assert all(auth == "Bearer test-token" for _, _, auth in fake.requests)


def _add_rule(obj: dict[str, Any]) -> None:
    obj["rules"].append({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]})


def _add_subject(obj: dict[str, Any]) -> None:
    obj["subjects"].append({"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "everyone"})


def _widen_egress(obj: dict[str, Any]) -> None:
    obj["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"] = "0.0.0.0/0"


# (example, kind, namespace, name, change, expected field)
SINGLE_CHANGES = [
    ("enterprise", "Role", "hyperpod-ns-speech", "submitter", _add_rule, "rules"),
    ("enterprise", "Role", "hyperpod-ns-speech", "viewer", _add_rule, "rules"),
    ("enterprise", "RoleBinding", "hyperpod-ns-speech", "submitters", _add_subject, "subjects"),
    ("enterprise", "NetworkPolicy", "hyperpod-ns-speech", "allow-vpc-https", _widen_egress, "spec.egress"),
    ("enterprise", "ClusterRoleBinding", "", "hyperpod-ns-speech-queue-reader", _add_subject, "subjects"),
    ("enterprise", "ValidatingAdmissionPolicyBinding", "", "hyperpod-gov-pod-security-baseline-speech",
     lambda o: o["spec"].update(policyName="hyperpod-gov-pod-security-privileged"), "spec.policyName"),
    ("enterprise", "ValidatingAdmissionPolicy", "", "hyperpod-gov-team-queue",
     lambda o: o["spec"]["validations"].pop(), "spec.validations"),
    ("startup", "ClusterQueue", "", "hyperpod-ns-chatbot-clusterqueue",
     lambda o: o["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(nominalQuota=999), "spec"),
    ("startup", "LocalQueue", "hyperpod-ns-chatbot", "hyperpod-ns-chatbot-localqueue",
     lambda o: o["spec"].update(clusterQueue="other"), "spec.clusterQueue"),
    ("startup", "NetworkPolicy", "hyperpod-ns-ml-engineering", "allow-team-egress",
     lambda o: o["spec"]["egress"].append({"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}), "spec.egress"),
    ("startup", "WorkloadPriorityClass", "", "training-priority", lambda o: o.update(value=1), "value"),
    ("startup", "Namespace", "", "hyperpod-ns-chatbot",
     lambda o: o["metadata"]["annotations"].update({next(iter(o["metadata"]["annotations"])): "changed"}),
     "metadata.annotations"),
]


@pytest.mark.parametrize("example,kind,namespace,name,change,field", SINGLE_CHANGES,
                         ids=[f"{c[1]}-{c[5]}-{c[3]}" for c in SINGLE_CHANGES])
def test_each_single_change_is_exactly_one_item(plans, served, tmp_path, example, kind, namespace, name, change,
                                                field):
    fake, path = served(plans[example], tmp_path)
    obj = fake.find(kind, name, namespace)
    planned_value = json.loads(json.dumps(obj))
    change(obj)
    items = k8s_items(plans[example], path)
    display = f"{namespace}/{name}" if namespace else name
    assert [(i["kind"], i["name"], i["change"], i["field"]) for i in items] == [(kind, display, "changed", field)]
    member = planned_value
    for part in field.split("."):
        member = member[part]
    assert matches(items[0]["expected"], member) and not matches(items[0]["expected"], items[0]["actual"])


def test_server_defaults_and_added_annotations_are_not_drift(plans, served, tmp_path):
    fake, path = served(plans["startup"], tmp_path)
    fake.find("Namespace", "hyperpod-ns-chatbot")["metadata"]["annotations"]["kubectl.kubernetes.io/x"] = "y"
    fake.find("ClusterQueue", "hyperpod-ns-chatbot-clusterqueue")["spec"]["queueingStrategy"] = "BestEffortFIFO"
    assert k8s_items(plans["startup"], path) == []


def test_a_removed_object_is_missing(plans, served, tmp_path):
    fake, path = served(plans["enterprise"], tmp_path)
    fake.remove("RoleBinding", "viewers", "hyperpod-ns-speech")
    assert k8s_items(plans["enterprise"], path) == [
        {"kind": "RoleBinding", "name": "hyperpod-ns-speech/viewers", "change": "missing"}]


def test_a_labeled_extra_object_is_unexpected_an_unlabeled_one_is_ignored(plans, served, tmp_path):
    fake, path = served(plans["enterprise"], tmp_path)
    fake.add({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
              "metadata": {"name": "admins", "namespace": "hyperpod-ns-speech", "labels": dict(MANAGED)},
              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
              "subjects": [{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "everyone"}]})
    fake.add({"apiVersion": "v1", "kind": "ServiceAccount",
              "metadata": {"name": "stray", "namespace": "default", "labels": {names.TEAM_LABEL: "speech"}}})
    fake.add({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
              "metadata": {"name": "someone-elses", "namespace": "hyperpod-ns-speech"}, "rules": []})
    items = k8s_items(plans["enterprise"], path)
    assert items == [
        {"kind": "RoleBinding", "name": "hyperpod-ns-speech/admins", "change": "unexpected"},
        {"kind": "ServiceAccount", "name": "default/stray", "change": "unexpected"},
    ]


def test_an_unserved_kind_means_its_objects_are_missing(plans, served, tmp_path):
    fake, path = served(plans["startup"], tmp_path)
    for key in [k for k in fake.objects if k[0] == "ResourceFlavor"]:
        del fake.objects[key]
    items = k8s_items(plans["startup"], path)
    assert items == [{"kind": "ResourceFlavor", "name": "ml.g5.2xlarge", "change": "missing"}]


def test_forbidden_list_says_which_request_and_what_to_grant(plans, served, tmp_path):
    fake, path = served(plans["enterprise"], tmp_path)
    fake.forbidden.add("networkpolicies")
    side = kubernetes_drift(plans["enterprise"], lambda: connect_kubeconfig(path))
    assert not side.checked
    assert "GET /apis/networking.k8s.io/v1/networkpolicies" in side.reason and "HTTP 403" in side.reason
    assert "get and list" in side.reason


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(aws: Aws, spec_path: Path, *argv: str, clients: Any = None) -> int:
    _, plan = spec_and_plan(spec_path)
    queue_drift(aws, None, plan, cluster_from_plan(plan))
    return run_drift(drift_args(str(spec_path), "--format", "json", *argv, kubernetes=True),
                     clients=clients or aws.factory)


def test_drift_reports_both_sides_through_the_kubeconfig(aws, plans, served, tmp_path, capsys):
    fake, path = served(plans["enterprise"], tmp_path)
    fake.remove("Role", "viewer", "hyperpod-ns-speech")
    assert _run(aws, ENTERPRISE, "--kubeconfig", path) == 1
    aws.assert_all_used()
    out = json.loads(capsys.readouterr().out)
    assert out["drift"] == [{"kind": "Role", "name": "hyperpod-ns-speech/viewer", "change": "missing"}]
    assert out["kubernetes"] == {"checked": True, "via": f"kubeconfig {path}"}


def test_unreachable_api_still_reports_the_aws_side(aws, plans, tmp_path, capsys):
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig(f"http://127.0.0.1:{_closed_port()}"))
    assert _run(aws, ENTERPRISE, "--kubeconfig", str(path)) == 0
    aws.assert_all_used()
    out = json.loads(capsys.readouterr().out)
    assert out["drift"] == [] and out["kubernetes"]["checked"] is False
    assert "could not be reached" in out["kubernetes"]["reason"]


def test_require_kubernetes_makes_an_unchecked_side_exit_2(aws, tmp_path, capsys):
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig(f"http://127.0.0.1:{_closed_port()}"))
    assert _run(aws, ENTERPRISE, "--kubeconfig", str(path), "--require-kubernetes") == 2
    assert "--require-kubernetes" in capsys.readouterr().err


def test_text_output_names_the_kubernetes_side(aws, plans, served, tmp_path, capsys):
    fake, path = served(plans["enterprise"], tmp_path)
    _add_rule(fake.find("Role", "submitter", "hyperpod-ns-speech"))
    _, plan = spec_and_plan(ENTERPRISE)
    queue_drift(aws, None, plan, cluster_from_plan(plan))
    assert run_drift(drift_args(str(ENTERPRISE), "--kubeconfig", path, kubernetes=True), clients=aws.factory) == 1
    out = capsys.readouterr().out
    assert ("team speech\n  Role hyperpod-ns-speech/submitter: rules (what submitters may do; spec "
            "teams[].access.podExec|teams[].access.writeSecrets|teams[].access.writeConfigMaps) is [") in out
    assert out.endswith(f"Kubernetes side: checked (kubeconfig {path}).\n")


def _sts() -> Any:
    return boto3.Session(aws_access_key_id="AKIAEXAMPLE", aws_secret_access_key="secret",
                         region_name="us-east-1").client("sts", config=RETRY_CONFIG)


def test_eks_token_is_a_presigned_get_caller_identity_naming_the_cluster():
    token = eks_token(_sts(), "ml-cluster-eks")
    assert token.startswith(TOKEN_PREFIX) and "=" not in token
    raw = token[len(TOKEN_PREFIX):]
    url = urlparse(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode())
    query = parse_qs(url.query)
    assert url.hostname == "sts.us-east-1.amazonaws.com"
    assert query["Action"] == ["GetCallerIdentity"] and query["X-Amz-Expires"] == ["60"]
    assert "x-k8s-aws-id" in query["X-Amz-SignedHeaders"][0].split(";")


def test_without_a_kubeconfig_drift_uses_an_eks_token_and_the_endpoint_from_eks(aws, plans, served, tmp_path,
                                                                                  monkeypatch, capsys):
    fake, _ = served(plans["enterprise"], tmp_path)
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    _, plan = spec_and_plan(ENTERPRISE)
    live = cluster_from_plan(plan)
    queue_drift(aws, None, plan, live)
    endpoint = f"http://127.0.0.1:{fake.server.server_address[1]}"
    aws.eks_stub.add_response("describe_cluster", {"cluster": {
        "name": live.eks_name, "arn": live.eks_arn, "status": "ACTIVE", "endpoint": endpoint,
        "certificateAuthority": {"data": base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()}}},
        {"name": live.eks_name})
    sts = _sts()
    code = run_drift(drift_args(str(ENTERPRISE), "--format", "json", kubernetes=True),
                     clients=lambda s: sts if s == "sts" else aws.factory(s))
    aws.assert_all_used()
    out = json.loads(capsys.readouterr().out)
    assert (code, out["drift"]) == (0, [])
    assert out["kubernetes"] == {"checked": True, "via": f"EKS token for {live.eks_name} at {endpoint}"}
    assert {auth.split(".")[0] for _, _, auth in fake.requests} == {"Bearer k8s-aws-v1"}


def test_the_default_kubeconfig_is_used_only_when_it_points_at_the_spec_cluster(aws, plans, served, tmp_path,
                                                                                 monkeypatch, capsys):
    fake, path = served(plans["enterprise"], tmp_path)
    monkeypatch.setenv("KUBECONFIG", path)
    _, plan = spec_and_plan(ENTERPRISE)
    live = cluster_from_plan(plan)
    queue_drift(aws, None, plan, live)
    endpoint = f"http://127.0.0.1:{fake.server.server_address[1]}"
    aws.eks_stub.add_response("describe_cluster", {"cluster": {"name": live.eks_name, "endpoint": endpoint}},
                              {"name": live.eks_name})
    assert run_drift(drift_args(str(ENTERPRISE), "--format", "json", kubernetes=True), clients=aws.factory) == 0
    assert json.loads(capsys.readouterr().out)["kubernetes"]["via"] == f"kubeconfig {path}"
    assert {auth for _, _, auth in fake.requests} == {"Bearer test-token"}


def test_planned_members_are_the_team_objects_table_values(plans):
    planned = {p.key: p for p in planned_kubernetes(plans["enterprise"])}
    vpc = planned[("NetworkPolicy", "hyperpod-ns-speech", "allow-vpc-https")]
    assert list(vpc.members) == ["spec.egress"]
    assert planned[("NetworkPolicy", "hyperpod-ns-speech", "default-deny")].members == {}
    # the body is compared too: a mapping member by member, the labels the charts set
    assert list(planned[("NetworkPolicy", "hyperpod-ns-speech", "default-deny")].body) == [
        "metadata.labels", "spec.egress", "spec.ingress", "spec.podSelector", "spec.policyTypes"]
    queue = planned[("ValidatingAdmissionPolicy", "", "hyperpod-gov-team-queue")]
    assert queue.members == {} and {"spec.validations", "spec.failurePolicy"} <= set(queue.body)


def test_a_default_kubeconfig_of_another_cluster_is_not_used(aws, plans, served, tmp_path, monkeypatch, capsys):
    fake, _ = served(plans["enterprise"], tmp_path)
    other = tmp_path / "other-kubeconfig"
    other.write_text(kubeconfig(f"http://127.0.0.1:{_closed_port()}", token="other-token"))
    monkeypatch.setenv("KUBECONFIG", str(other))
    _, plan = spec_and_plan(ENTERPRISE)
    live = cluster_from_plan(plan)
    queue_drift(aws, None, plan, live)
    endpoint = f"http://127.0.0.1:{fake.server.server_address[1]}"
    aws.eks_stub.add_response("describe_cluster", {"cluster": {"name": live.eks_name, "endpoint": endpoint}},
                              {"name": live.eks_name})
    sts = _sts()
    assert run_drift(drift_args(str(ENTERPRISE), "--format", "json", kubernetes=True),
                     clients=lambda s: sts if s == "sts" else aws.factory(s)) == 0
    assert json.loads(capsys.readouterr().out)["kubernetes"]["via"].startswith("EKS token for ")
