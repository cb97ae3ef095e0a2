"""preflight: each live prerequisite with botocore's Stubber (SageMaker, EKS, EC2) and the local Kubernetes API."""

from __future__ import annotations

import argparse
import functools
import json
import socket
from types import SimpleNamespace
from typing import Any, Callable, Iterator, Optional

import boto3
import pytest
from botocore.stub import Stubber

from hyperpod_gov.live.aws import RETRY_CONFIG
from hyperpod_gov.live.isolation import SERVICE_PARTS
from hyperpod_gov.live.k8s import connect_kubeconfig
from hyperpod_gov.live.preflight import (SOURCES, configure_preflight, existing_checks, exit_code, run_preflight,
                                         to_text)
from hyperpod_gov.spec import GovernanceSpec
from hyperpod_gov.spec.cluster import Cluster
from tests.conftest import EXAMPLES

from .fake_aws import WHEN
from .fake_k8s import FakeKubernetes, kubeconfig

ARN = "arn:aws:sagemaker:us-east-1:111111111111:cluster/a1b2c3d4e5f6"
EKS = "ml-eks"
VPC, OTHER_VPC = "vpc-0123456789abcdef0", "vpc-0fedcba9876543210"
SUBNETS = ("subnet-0aaa1111111111111", "subnet-0bbb2222222222222")
SG = "sg-0123456789abcdef0"
HAS_EXISTING = "existing" in Cluster.model_fields
NARROW = json.dumps({"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "*", "Resource": "*",
                                    "Condition": {"StringEquals": {"aws:PrincipalAccount": ["111111111111"]}}}]})
FULL_ACCESS = json.dumps({"Statement": [{"Action": "*", "Effect": "Allow", "Principal": "*", "Resource": "*"}]})


class Live:
    """What the stubbed APIs answer; tests change one member and expect one check to ask for a fix."""

    def __init__(self) -> None:
        self.orchestrator: Optional[dict[str, Any]] = {"Eks": {"ClusterArn": f"arn:aws:eks:us-east-1:111111111111:"
                                                                             f"cluster/{EKS}"}}
        # DescribeCluster's other members (NodeProvisioningMode, NodeRecovery, AutoScaling), as the service gives them
        self.cluster_members: dict[str, Any] = {}
        self.auth_mode = "API_AND_CONFIG_MAP"
        self.version = "1.31"
        self.addons = ["amazon-sagemaker-hyperpod-taskgovernance", "coredns", "vpc-cni"]
        self.private = True
        self.eks_vpc = VPC
        self.subnet_vpcs = {s: VPC for s in SUBNETS}
        self.sg_vpc = VPC
        self.subnet_missing = ""  # EC2 answers InvalidSubnetID.NotFound naming it
        self.vpc_cni_version = "v1.19.2-eksbuild.1"
        self.vpc_cni_config: Optional[str] = ('{"enableNetworkPolicy": "true", "env": '
                                              '{"NETWORK_POLICY_ENFORCING_MODE": "strict"}}')
        # The VPC's endpoints (DescribeVpcEndpoints): one per service a private cluster needs, each with a policy
        # that admits the account's principals only.
        self.endpoints: list[dict[str, Any]] = [
            {"VpcEndpointId": f"vpce-0{i:016x}", "VpcId": VPC, "State": "available",
             "ServiceName": f"com.amazonaws.us-east-1.{part}", "PolicyDocument": NARROW}
            for i, part in enumerate(SERVICE_PARTS.values())]

    def endpoint(self, part: str) -> dict[str, Any]:
        return next(e for e in self.endpoints if e["ServiceName"].endswith(f".us-east-1.{part}"))


def _spec(mode: str = "task-governance", version: str = "1.31", installs_scheduler: bool = False,
          enforcement: Any = None) -> Any:
    # The spec's `existing` model lands with governance-only mode; until then the checks read this stand-in's
    # attributes, which are the model's field names (test_a_real_existing_spec... runs the real one).
    existing = SimpleNamespace(hyper_pod_cluster_arn=ARN, eks_cluster_name=EKS, vpc_id=VPC, subnet_ids=SUBNETS,
                               security_group_id=SG,
                               installs=SimpleNamespace(scheduler=installs_scheduler, observability=False),
                               network_policy_enforcement=enforcement)
    return SimpleNamespace(cluster=SimpleNamespace(existing=existing, kubernetes_version=version, name="ml-cluster"),
                           scheduler=SimpleNamespace(mode=mode))


@functools.cache
def _session() -> boto3.Session:
    """One session for every test's clients: a new session loads the services' API models again (EC2's is large),
    about half a second of CPU per test."""
    return boto3.Session(aws_access_key_id="a", aws_secret_access_key="b", region_name="us-east-1")


class Clients:
    def __init__(self) -> None:
        self.clients = {s: _session().client(s, config=RETRY_CONFIG) for s in ("sagemaker", "eks", "ec2")}
        self.stubs = {s: Stubber(c) for s, c in self.clients.items()}
        for stub in self.stubs.values():
            stub.activate()

    def __call__(self, service: str) -> Any:
        return self.clients[service]

    def queue(self, live: Live, reads_vpc_cni: bool = True) -> None:
        sm, ek, ec2 = self.stubs["sagemaker"], self.stubs["eks"], self.stubs["ec2"]
        described: dict[str, Any] = {"ClusterArn": ARN, "ClusterName": "ml-cluster", "ClusterStatus": "InService",
                                     "CreationTime": WHEN, "InstanceGroups": [], **live.cluster_members}
        if live.orchestrator:
            described["Orchestrator"] = live.orchestrator
        sm.add_response("describe_cluster", described, {"ClusterName": ARN})
        if not live.orchestrator:
            return
        ek.add_response("describe_cluster", {"cluster": {
            "name": EKS, "version": live.version, "accessConfig": {"authenticationMode": live.auth_mode},
            "resourcesVpcConfig": {"vpcId": live.eks_vpc, "endpointPrivateAccess": live.private,
                                   "clusterSecurityGroupId": "sg-0cluster000000000"}}}, {"name": EKS})
        ek.add_response("list_addons", {"addons": live.addons}, {"clusterName": EKS})
        if reads_vpc_cni and "vpc-cni" in live.addons:
            queue_vpc_cni(ek, live, EKS)
        if live.subnet_missing:
            ec2.add_client_error("describe_subnets", "InvalidSubnetID.NotFound",
                                 f"The subnet ID '{live.subnet_missing}' does not exist", 400,
                                 expected_params={"SubnetIds": list(SUBNETS)})
        elif live.eks_vpc == VPC:
            ec2.add_response("describe_subnets", {"Subnets": [{"SubnetId": s, "VpcId": v}
                                                              for s, v in live.subnet_vpcs.items()]},
                             {"SubnetIds": list(SUBNETS)})
        ec2.add_response("describe_security_groups", {"SecurityGroups": [{"GroupId": SG, "VpcId": live.sg_vpc}]},
                         {"GroupIds": [SG]})
        ec2.add_response("describe_vpc_endpoints", {"VpcEndpoints": live.endpoints},
                         {"Filters": [{"Name": "vpc-id", "Values": [VPC]}]})

    def assert_all_used(self) -> None:
        for stub in self.stubs.values():
            stub.assert_no_pending_responses()


def queue_vpc_cni(ek: Stubber, live: Live, name: str) -> None:
    addon: dict[str, Any] = {"addonName": "vpc-cni", "clusterName": name, "addonVersion": live.vpc_cni_version}
    if live.vpc_cni_config is not None:
        addon["configurationValues"] = live.vpc_cni_config
    ek.add_response("describe_addon", {"addon": addon}, {"clusterName": name, "addonName": "vpc-cni"})


@pytest.fixture
def kube(tmp_path) -> Iterator[tuple[FakeKubernetes, Callable[[], Any]]]:
    fake = FakeKubernetes([])
    url = fake.start()
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig(url))
    yield fake, lambda: connect_kubeconfig(str(path))
    fake.stop()


def _checks(live: Live, kube: Any, spec: Any = None) -> dict[str, Any]:
    clients = Clients()
    clients.queue(live)
    checks = existing_checks(spec or _spec(), clients, kube)
    clients.assert_all_used()
    return {c.id: c for c in checks}


def test_an_existing_cluster_that_meets_every_prerequisite_passes(kube):
    checks = _checks(Live(), kube[1])
    assert {c: v.status for c, v in checks.items()} == {
        "hyperpod-cluster": "pass", "authentication-mode": "pass", "kubernetes-version": "pass", "addons": "pass",
        "kueue": "pass", "network-policy": "pass", "endpoint-access": "pass", "subnets": "pass",
        "security-group": "pass", "vpc-endpoints": "pass"}
    assert exit_code(list(checks.values())) == 0
    assert all(c.source == SOURCES[c.id] and c.source for c in checks.values())
    assert {m for m, _, _ in kube[0].requests} == {"GET"}


def _kueue_runs(fake: FakeKubernetes) -> None:
    fake.raw["/api/v1/namespaces/kueue-system"] = {"apiVersion": "v1", "kind": "Namespace",
                                                   "metadata": {"name": "kueue-system"}}
    fake.raw["/apis/apps/v1/namespaces/kueue-system/deployments/kueue-controller-manager"] = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "kueue-controller-manager", "namespace": "kueue-system"}}


FAILURES: list[tuple[str, Callable[[Live], None], str, str]] = [
    ("config-map-auth", lambda l: setattr(l, "auth_mode", "CONFIG_MAP"), "authentication-mode",
     "authenticationMode=API_AND_CONFIG_MAP"),
    ("old-kubernetes", lambda l: setattr(l, "version", "1.29"), "kubernetes-version", "upgrade"),
    ("version-not-the-spec's", lambda l: setattr(l, "version", "1.32"), "kubernetes-version",
     'kubernetesVersion: "1.32"'),
    ("no-task-governance-addon", lambda l: l.addons.remove("amazon-sagemaker-hyperpod-taskgovernance"), "addons",
     "installs.scheduler: true"),
    ("no-private-endpoint", lambda l: setattr(l, "private", False), "endpoint-access", "endpointPrivateAccess=true"),
    ("subnet-in-another-vpc", lambda l: l.subnet_vpcs.update({SUBNETS[1]: OTHER_VPC}), "subnets", SUBNETS[1]),
    ("subnet-not-found", lambda l: setattr(l, "subnet_missing", SUBNETS[0]), "subnets", SUBNETS[0]),
    ("eks-in-another-vpc", lambda l: setattr(l, "eks_vpc", OTHER_VPC), "subnets", f"vpcId: {OTHER_VPC}"),
    ("security-group-elsewhere", lambda l: setattr(l, "sg_vpc", OTHER_VPC), "security-group", "sg-0cluster"),
    ("another-eks-cluster", lambda l: l.orchestrator["Eks"].update(
        ClusterArn="arn:aws:eks:us-east-1:111111111111:cluster/other"), "hyperpod-cluster", "eksClusterName: other"),
    # issue 55: isolation on a cluster hyperpod-gov did not create
    ("network-policy-off-by-default", lambda l: setattr(l, "vpc_cni_config", None), "network-policy",
     "enableNetworkPolicy is not \"true\" (off by default)"),
    ("network-policy-disabled", lambda l: setattr(l, "vpc_cni_config", '{"enableNetworkPolicy": "false"}'),
     "network-policy", "--configuration-values '{\"enableNetworkPolicy\":\"true\",\"env\":"
     "{\"NETWORK_POLICY_ENFORCING_MODE\":\"strict\"}}'"),
    ("standard-mode", lambda l: setattr(l, "vpc_cni_config", "enableNetworkPolicy: 'true'\n"), "network-policy",
     "env.NETWORK_POLICY_ENFORCING_MODE is standard, not strict"),
    ("vpc-cni-older-than-strict-mode", lambda l: setattr(l, "vpc_cni_version", "v1.16.4-eksbuild.2"),
     "network-policy", "upgrade the add-on, then aws eks update-addon"),
    ("no-vpc-cni-addon", lambda l: l.addons.remove("vpc-cni"), "network-policy", "vpc-cni is not an EKS add-on"),
    ("missing-endpoint", lambda l: l.endpoints.remove(l.endpoint("sts")), "vpc-endpoints", "no endpoint for sts"),
    ("full-access-endpoint", lambda l: l.endpoint("ecr.dkr").update(PolicyDocument=FULL_ACCESS), "vpc-endpoints",
     "full access (no policy, or Allow * on * to *): vpce-00000000000000001 (ecr.dkr)"),
    ("endpoint-without-policy", lambda l: l.endpoint("s3").pop("PolicyDocument"), "vpc-endpoints",
     "vpce-0000000000000000a (s3)"),
    ("another-open-endpoint", lambda l: l.endpoints.append(
        {"VpcEndpointId": "vpce-0secrets00000000", "VpcId": VPC, "State": "available",
         "ServiceName": "com.amazonaws.us-east-1.secretsmanager"}), "vpc-endpoints", "vpce-0secrets00000000"),
]


@pytest.mark.parametrize("change,check,fix", [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
def test_each_unmet_prerequisite_is_one_fix(kube, change, check, fix):
    live = Live()
    change(live)
    if check == "hyperpod-cluster":  # the other EKS cluster is then the one described
        live_checks = _checks_other_eks(live, kube[1])
    else:
        live_checks = _checks(live, kube[1])
    assert [c for c, v in live_checks.items() if v.status != "pass"] == [check]
    assert fix in f"{live_checks[check].detail} {live_checks[check].fix}"
    assert exit_code(list(live_checks.values())) == 1


def _checks_other_eks(live: Live, kube: Any) -> dict[str, Any]:
    clients = Clients()
    clients.queue(live)
    # queue() stubbed EKS for the spec's name; the HyperPod cluster names "other": answer for that name.
    ek = clients.stubs["eks"]
    ek.deactivate()
    clients.stubs["eks"] = ek = Stubber(clients.clients["eks"])
    ek.add_response("describe_cluster", {"cluster": {"name": "other", "version": live.version,
                                                     "accessConfig": {"authenticationMode": live.auth_mode},
                                                     "resourcesVpcConfig": {"vpcId": VPC,
                                                                            "endpointPrivateAccess": True}}},
                    {"name": "other"})
    ek.add_response("list_addons", {"addons": live.addons}, {"clusterName": "other"})
    queue_vpc_cni(ek, live, "other")
    ek.activate()
    checks = existing_checks(_spec(), clients, kube)
    clients.assert_all_used()
    return {c.id: c for c in checks}


def test_task_governance_addon_next_to_a_self_managed_kueue_is_a_fix(kube):
    _kueue_runs(kube[0])
    checks = _checks(Live(), kube[1])
    assert [c for c, v in checks.items() if v.status != "pass"] == ["addons"]
    assert "uninstall the self-managed Kueue first" in checks["addons"].fix
    assert checks["kueue"].detail.startswith("Kueue runs")


def test_installing_the_addon_where_kueue_runs_is_a_fix_too(kube):
    _kueue_runs(kube[0])
    live = Live()
    live.addons.remove("amazon-sagemaker-hyperpod-taskgovernance")
    checks = _checks(live, kube[1], _spec(installs_scheduler=True))
    assert checks["addons"].status == "fix" and "would be installed" in checks["addons"].detail


def test_kueue_mode_with_the_addon_installed_is_a_fix(kube):
    checks = _checks(Live(), kube[1], _spec(mode="kueue"))
    assert [c for c, v in checks.items() if v.status != "pass"] == ["addons"]


def test_an_unreachable_kubernetes_api_is_not_checked_exit_2(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig(f"http://127.0.0.1:{port}"))
    checks = _checks(Live(), lambda: connect_kubeconfig(str(path)))
    assert checks["kueue"].status == "not checked" and "could not be reached" in checks["kueue"].detail
    assert exit_code(list(checks.values())) == 2
    assert exit_code([*checks.values(), *_checks(Live(), None, _spec(version="1.32")).values()]) == 1


def test_no_kubernetes_skips_the_kueue_check():
    checks = _checks(Live(), None)
    assert checks["kueue"].status == "skipped" and exit_code(list(checks.values())) == 0
    assert "--  kueue: not asked" in to_text(list(checks.values()))


def test_a_slurm_cluster_is_a_fix():
    live = Live()
    live.orchestrator = None
    checks = _checks(live, None)
    assert list(checks) == ["hyperpod-cluster"] and "not orchestrated by EKS" in checks["hyperpod-cluster"].detail


def _args(*argv: str) -> argparse.Namespace:
    return configure_preflight(argparse.ArgumentParser(prog="hyperpod-gov preflight")).parse_args(list(argv))


def _new_cluster_clients(hyperpod_exists: bool) -> Clients:
    clients = Clients()
    if hyperpod_exists:
        clients.stubs["sagemaker"].add_response("describe_cluster", {
            "ClusterArn": ARN, "ClusterName": "ml-cluster", "ClusterStatus": "InService", "CreationTime": WHEN,
            "InstanceGroups": []}, {"ClusterName": "ml-cluster"})
    else:
        clients.stubs["sagemaker"].add_client_error("describe_cluster", "ResourceNotFound", "not found",
                                                    expected_params={"ClusterName": "ml-cluster"})
    clients.stubs["eks"].add_client_error("describe_cluster", "ResourceNotFoundException", "No cluster found",
                                          404, expected_params={"name": "ml-cluster-eks"})
    return clients


def test_a_cluster_hyperpod_gov_creates_checks_that_its_names_are_free(capsys):
    clients = _new_cluster_clients(hyperpod_exists=False)
    assert run_preflight(_args(str(EXAMPLES / "enterprise.yaml"), "--format", "json"), clients=clients) == 0
    clients.assert_all_used()
    out = json.loads(capsys.readouterr().out)["checks"]
    assert [(c["check"], c["status"]) for c in out] == [("names-free", "pass")]
    assert "nothing else runs before the first deploy" in out[0]["detail"]


def test_a_taken_name_is_a_fix_pointing_at_import(capsys):
    clients = _new_cluster_clients(hyperpod_exists=True)
    assert run_preflight(_args(str(EXAMPLES / "enterprise.yaml")), clients=clients) == 1
    out = capsys.readouterr().out
    assert "FIX names-free: HyperPod cluster ml-cluster exist" in out and "cluster.existing" in out


def test_access_denied_names_the_call_and_the_iam_action_and_exits_2(capsys):
    clients = Clients()
    clients.stubs["sagemaker"].add_client_error("describe_cluster", "AccessDeniedException", "not authorized")
    assert run_preflight(_args(str(EXAMPLES / "enterprise.yaml")), clients=clients) == 2
    err = capsys.readouterr().err
    assert "DescribeCluster: access denied" in err and "grant sagemaker:DescribeCluster" in err


@pytest.mark.skipif(not HAS_EXISTING, reason="cluster.existing is not in the spec model yet (governance-only mode)")
def test_a_real_existing_spec_is_checked(tmp_path, kube, capsys):
    import yaml

    data = yaml.safe_load((EXAMPLES / "enterprise.yaml").read_text())
    data["cluster"].update(existing={"hyperPodClusterArn": ARN, "eksClusterName": EKS, "vpcId": VPC,
                                     "subnetIds": list(SUBNETS), "securityGroupId": SG},
                           kubernetesVersion="1.31", vpc={"cidr": "10.192.0.0/16"})
    for key in ("endpointAccess", "adminCidrs", "apiAccess", "authenticationMode", "dependenciesChart", "admins"):
        data["cluster"].pop(key, None)
    # the operators the teams need run there already (HPG-D009; HPG-D005 refuses installing inference there)
    data["cluster"]["existing"]["operators"] = data["cluster"].pop("operators")
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    GovernanceSpec.model_validate  # noqa: B018 - the model is importable with the field
    clients = Clients()
    clients.queue(Live())
    code = run_preflight(_args(str(path)), clients=clients, kube=kube[1])
    assert code == 0, capsys.readouterr()


# --- isolation (issue 55): the vpc-cni add-on and the VPC's endpoints ------------------------------------------


def test_the_vpc_cni_fix_keeps_the_addons_other_values(kube):
    live = Live()
    live.vpc_cni_config = '{"env": {"AWS_VPC_K8S_CNI_EXTERNALSNAT": "true"}, "enableWindowsIpam": "false"}'
    check = _checks(live, None)["network-policy"]
    assert check.status == "fix"
    merged = json.loads(check.fix.split("--configuration-values '", 1)[1].split("'", 1)[0])
    assert merged == {"enableNetworkPolicy": "true", "enableWindowsIpam": "false",
                      "env": {"AWS_VPC_K8S_CNI_EXTERNALSNAT": "true", "NETWORK_POLICY_ENFORCING_MODE": "strict"}}


def test_a_spec_that_names_another_enforcer_skips_the_vpc_cni_read():
    clients = Clients()
    clients.queue(Live(), reads_vpc_cni=False)  # no DescribeAddon queued: a call would fail the Stubber
    enforcement = SimpleNamespace(enforcer="other", reason="Cilium 1.16 enforces them (tested 2026-11-02)")
    checks = {c.id: c for c in existing_checks(_spec(enforcement=enforcement), clients, None)}
    clients.assert_all_used()
    assert checks["network-policy"].status == "skipped" and "Cilium 1.16" in checks["network-policy"].detail
    assert exit_code(list(checks.values())) == 0


def test_a_vpc_cni_that_enforces_says_what_the_spec_still_lacks():
    unstated = _checks(Live(), None)["network-policy"]
    assert unstated.status == "pass" and "networkPolicyEnforcement: {enforcer: vpc-cni} (HPG-E006)" in unstated.detail
    clients = Clients()
    clients.queue(Live())
    stated = {c.id: c for c in existing_checks(_spec(enforcement=SimpleNamespace(enforcer="vpc-cni", reason=None)),
                                               clients, None)}["network-policy"]
    assert stated.status == "pass" and "HPG-E006" not in stated.detail


def test_a_deleted_endpoint_counts_as_missing():
    live = Live()
    live.endpoint("eks").update(State="deleted")
    check = _checks(live, None)["vpc-endpoints"]
    assert check.status == "fix" and "no endpoint for eks " in check.detail


@pytest.mark.parametrize("document, wide", [
    (None, True),
    (FULL_ACCESS, True),
    (json.dumps({"Statement": {"Effect": "Allow", "Principal": {"AWS": ["*"]}, "Action": ["*"], "Resource": "*"}}),
     True),
    (NARROW, False),
    (json.dumps({"Statement": [json.loads(FULL_ACCESS)["Statement"][0],
                               {"Effect": "Deny", "Principal": "*", "Action": "*", "Resource": "*",
                                "Condition": {"StringNotEquals": {"aws:PrincipalAccount": "111111111111"}}}]}), False),
    (json.dumps({"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "*"}]}),
     False),
], ids=["default", "allow-all", "allow-all-as-lists", "conditioned", "allow-all-with-a-deny", "one-action"])
def test_a_full_access_policy_is_one_that_admits_anyone_to_anything(document, wide):
    from hyperpod_gov.live.isolation import open_policy

    assert open_policy(document) is wide


def test_the_endpoint_names_are_the_ones_hyperpod_gov_creates():
    from hyperpod_gov.constructs.network import SERVICES
    from hyperpod_gov.plan.plan import INTERFACE_ENDPOINTS

    assert set(SERVICE_PARTS) == set(SERVICES)
    assert set(INTERFACE_ENDPOINTS) < set(SERVICES)  # the data endpoints (Kms, SecretsManager) only where needed
    assert {n: SERVICES[n].short_name for n in SERVICES} == SERVICE_PARTS


def test_endpoint_policies_are_written_for_the_specs_accounts(tmp_path, capsys):
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.plan.endpoint_policies import endpoint_policy
    from hyperpod_gov.spec import load_spec

    clients = _new_cluster_clients(hyperpod_exists=False)
    out = tmp_path / "policies"
    assert run_preflight(_args(str(EXAMPLES / "enterprise.yaml"), "--endpoint-policies", str(out)),
                         clients=clients) == 0
    assert sorted(p.stem for p in out.iterdir()) == sorted(SERVICE_PARTS)
    perimeter = build_plan(load_spec(EXAMPLES / "enterprise.yaml")).network.perimeter
    written = json.loads((out / "Sts.json").read_text())
    assert written == endpoint_policy(perimeter, "Sts")
    accounts = written["Statement"][0]["Condition"]["StringEquals"]["aws:PrincipalAccount"]
    assert accounts == list(perimeter.accounts) and "*" not in json.dumps(accounts)
    assert "wrote 13 endpoint policies" in capsys.readouterr().err
