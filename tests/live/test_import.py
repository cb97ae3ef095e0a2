"""import: a spec from a live cluster that validates, and that drift finds no quota or policy drift in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hyperpod_gov.live import run_drift, run_import
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import load_spec
from tests.conftest import TODAY

from .conftest import Aws, drift_args, import_args, queue_drift, queue_import
from .fake_aws import FakeCluster, policy_response, quota_response

GOVERNANCE = {"ComputeQuota", "ClusterSchedulerConfig"}


def imported(fake: FakeCluster, tmp_path: Path, capsys, **kw: Any) -> tuple[int, Path, str]:
    out = tmp_path / "imported.yaml"
    with Aws() as aws:
        queue_import(aws, fake, **kw)
        code = run_import(import_args("--cluster-name", fake.name, "--out", str(out)), clients=aws.factory)
        aws.assert_all_used()
        assert {op for op in aws.operations if not op.startswith(("Describe", "List"))} == set()
    return code, out, capsys.readouterr().err


def drift_of(path: Path, fake: FakeCluster, capsys) -> list[dict[str, Any]]:
    spec = load_spec(path, today=TODAY)
    with Aws() as aws:
        queue_drift(aws, spec, build_plan(spec), fake)
        run_drift(drift_args(str(path), "--format", "json"), clients=aws.factory)
        aws.assert_all_used()
    return json.loads(capsys.readouterr().out)["drift"]


def console_cluster() -> FakeCluster:
    """A cluster set up in the console: its own names, a public endpoint, quotas named any way."""
    fake = FakeCluster(
        name="research-gpu", account="555555555555", region="eu-west-1", eks_name="research-gpu-eks-7f2c",
        instance_groups=[
            {"InstanceGroupName": "Workers", "InstanceType": "ml.g5.8xlarge", "CurrentCount": 6, "TargetCount": 8,
             "InstanceStorageConfigs": [{"EbsVolumeConfig": {"VolumeSizeInGB": 300}}]},
            {"InstanceGroupName": "h100", "InstanceType": "ml.p5.48xlarge", "CurrentCount": 2, "TargetCount": 2},
        ],
        policies=[], quotas=[], access_entries=[], associations=[], addons=[], eks_version="1.32",
    )
    fake.policies.append(policy_response(fake, "console-scheduler", [("high", 90), ("low", 10)], "Enabled"))

    def quota(name: str, team: str, resources: list[dict[str, Any]], sharing: dict[str, Any], weight: int,
              preempt: str = "LowerPriority", **kw: Any) -> dict[str, Any]:
        config = {"ComputeQuotaResources": resources, "ResourceSharingConfig": sharing, "PreemptTeamTasks": preempt}
        return quota_response(fake.arn, fake.account, fake.region, name, team, config, weight, **kw)

    fake.quotas += [
        quota("vision-quota-1", "vision", [{"InstanceType": "ml.g5.8xlarge", "Count": 3}],
              {"Strategy": "LendAndBorrow"}, 80),  # no BorrowLimit: HyperPod's default applies
        quota("nlp", "nlp", [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 12}],
              {"Strategy": "LendAndBorrow", "BorrowLimit": 200}, 100, "Never"),
        quota("prod", "prod", [{"InstanceType": "ml.g5.8xlarge", "Count": 4}], {"Strategy": "DontLend"}, 100),
        quota("old", "legacy", [{"InstanceType": "ml.g5.8xlarge", "Count": 1}], {"Strategy": "Lend"}, 10,
              status="Deleted"),
    ]
    return fake


def test_an_enterprise_cluster_imports_to_a_spec_that_validates_and_shows_no_governance_drift(
        enterprise_live, tmp_path, capsys):
    spec, _, fake = enterprise_live
    code, out, err = imported(fake, tmp_path, capsys)
    assert code == 0, err
    assert f"wrote {out}" in err
    text = out.read_text()
    assert "name: acme-ml  # from the cluster policy's name (acme-ml-policy)" in text
    assert 'capacity: {id: "111111111111", region: us-east-1}' in text
    back = load_spec(out, today=TODAY)
    assert [t.name for t in back.teams] == sorted(t.name for t in spec.teams)
    speech = next(t for t in back.teams if t.name == "speech")
    assert (speech.fair_share_weight, speech.sharing.strategy, speech.sharing.borrow_limit_percent,
            speech.preempt_team_tasks, [(q.instance_type, q.accelerators) for q in speech.quota]) == (
        50, "LendAndBorrow", 50, "Never", [("ml.p5.48xlarge", 25)])
    assert [(g.name, g.instance_type, g.count) for g in back.cluster.instance_groups] == [
        ("accelerated-worker", "ml.p5.48xlarge", 10), ("system", "ml.m5.2xlarge", 2)]
    items = drift_of(out, fake, capsys)
    assert [i for i in items if i["kind"] in GOVERNANCE] == []


def test_a_console_made_cluster_imports_with_guesses_marked(tmp_path, capsys):
    fake = console_cluster()
    code, out, err = imported(fake, tmp_path, capsys, endpoint={
        "endpointPublicAccess": True, "endpointPrivateAccess": True, "publicAccessCidrs": ["198.51.100.0/24"]})
    assert code == 0, err
    text = out.read_text()
    for line in [
        "name: research-gpu  # guessed from the cluster name",
        'capacity: {id: "555555555555", region: eu-west-1}',
        "# the EKS cluster is research-gpu-eks-7f2c; hyperpod-gov names it research-gpu-eks",
        'kubernetesVersion: "1.32"  # from EKS cluster research-gpu-eks-7f2c',
        "endpointAccess: public-and-private",
        'adminCidrs: ["198.51.100.0/24"]',
        "- name: workers  # renamed from Workers (not a DNS-1123 label)",
        "volumeSizeGb: 300",
        "idleCompute: fair-share",
        "- {name: high, weight: 90}",
        "- name: vision  # compute quota vision-quota-1",
        "sharing: {strategy: LendAndBorrow}  # borrow limit: HyperPod's default, 50%",
        "sharing: {strategy: LendAndBorrow, borrowLimitPercent: 200}",
        "sharing: {strategy: DontLend}",
        "# access:",
        "#   submitters: [\"arn:aws:iam::555555555555:role/ROLE\"]",
        "# contract:",
        "# workloadIdentities:",
    ]:
        assert line in text, line
    assert "legacy" not in text  # a deleted quota is not a team
    spec = load_spec(out, today=TODAY)
    assert [(t.name, t.fair_share_weight) for t in spec.teams] == [("nlp", 100), ("prod", 100), ("vision", 80)]
    items = drift_of(out, fake, capsys)
    assert [i for i in items if i["kind"] in GOVERNANCE] == []
    # What import could not carry over shows up once, as drift on the cluster itself.
    assert {(i["kind"], i["change"]) for i in items if i["kind"] in ("Cluster", "InstanceGroup")} == {
        ("Cluster", "changed"), ("InstanceGroup", "missing"), ("InstanceGroup", "unexpected")}


def test_what_the_spec_cannot_express_is_left_as_a_comment(tmp_path, capsys):
    fake = console_cluster()
    q = fake.quota("prod")
    q["ComputeQuotaConfig"]["ComputeQuotaResources"].append({"InstanceType": "ml.p5.48xlarge", "VCpu": 48.0})
    q["ComputeQuotaConfig"]["ResourceSharingConfig"] = {
        "Strategy": "LendAndBorrow", "BorrowLimit": 1000,
        "AbsoluteBorrowLimits": [{"InstanceType": "ml.g5.8xlarge", "Count": 1}]}
    code, out, err = imported(fake, tmp_path, capsys)
    assert code == 0, err
    text = out.read_text()
    # vCPU without memory is no spec entry; the absolute borrow limit is (sharing.absoluteBorrowLimits).
    assert '# ml.p5.48xlarge: {"VCpu": 48.0} not written: the spec gives one of count, accelerators' in text
    assert ("sharing: {strategy: LendAndBorrow, absoluteBorrowLimits: [{instanceType: ml.g5.8xlarge, count: 1}], "
            "borrowLimitPercent: 500}  # guessed: the cluster's 1000% is outside the spec's 1..500") in text
    items = drift_of(out, fake, capsys)
    assert [(i["name"], i["field"]) for i in items if i["kind"] == "ComputeQuota"] == [
        ("prod", "ComputeQuotaConfig.ComputeQuotaResources[ml.p5.48xlarge]"),
        ("prod", "ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit"),
    ]


def test_a_spec_that_needs_edits_is_written_and_the_edits_listed(tmp_path, capsys):
    fake = console_cluster()
    fake.eks_version = "1.29"
    code, out, err = imported(fake, tmp_path, capsys)
    assert code == 1
    assert out.exists()
    assert "the imported spec needs 1 edit(s) before it validates:" in err
    assert "cluster.kubernetesVersion: is older than 1.30" in err


def test_a_cluster_without_policy_or_quotas_imports_to_an_empty_governance(tmp_path, capsys):
    fake = console_cluster()
    fake.policies, fake.quotas = [], []
    code, out, err = imported(fake, tmp_path, capsys)
    assert code == 0, err
    text = out.read_text()
    assert "# the cluster has no cluster policy: hyperpod-gov will create one" in text
    assert "teams: []  # the cluster has no compute quota" in text


def test_import_writes_to_standard_output_without_out(enterprise_live, capsys):
    _, _, fake = enterprise_live
    with Aws() as aws:
        queue_import(aws, fake, page_size=1)
        assert run_import(import_args("--cluster-name", "ml-cluster"), clients=aws.factory) == 0
        aws.assert_all_used()
    assert capsys.readouterr().out.startswith("# Imported by `hyperpod-gov import` from HyperPod cluster ml-cluster")


@pytest.mark.parametrize("endpoint, line", [
    ({"endpointPublicAccess": True, "publicAccessCidrs": ["0.0.0.0/0"]},
     "endpointAccess: private  # guessed: the live public endpoint is open to 0.0.0.0/0"),
    ({"endpointPublicAccess": False}, "endpointAccess: private\n"),
])
def test_endpoint_access_is_read_from_eks(endpoint, line, tmp_path, capsys):
    code, out, err = imported(console_cluster(), tmp_path, capsys, endpoint=endpoint)
    assert code == 0, err
    assert line in out.read_text()


# --- governance-only mode: the spec governs the cluster it was imported from (cluster.existing) ---------------

from hyperpod_gov.live import cli as live_cli  # noqa: E402
from hyperpod_gov.live.importer import EXISTING_SUPPORTED  # noqa: E402


def imported_existing(fake: FakeCluster, tmp_path: Path, capsys, **kw: Any) -> tuple[int, Path, str]:
    out = tmp_path / "existing.yaml"
    with Aws() as aws:
        queue_import(aws, fake, existing=True, **kw)
        code = run_import(import_args("--cluster-name", fake.name, "--out", str(out), existing=True),
                          clients=aws.factory)
        aws.assert_all_used()
        assert {op for op in aws.operations if not op.startswith(("Describe", "List"))} == set()
        assert {"DescribeVpcs", "ListAddons"} <= set(aws.operations)
    return code, out, capsys.readouterr().err


def test_import_writes_cluster_existing_from_the_apis(tmp_path, capsys, monkeypatch):
    # Runs before governance-only mode is in the spec model too: the written spec then lacks a model for
    # `existing` (exit 1, listed), but what import reads and writes is the same.
    import yaml

    monkeypatch.setattr(live_cli, "EXISTING_SUPPORTED", True)
    fake = console_cluster()
    fake.addons = [{"addonName": "amazon-sagemaker-hyperpod-taskgovernance"}]
    code, out, err = imported_existing(fake, tmp_path, capsys)
    text = out.read_text()
    cluster = yaml.safe_load(text)["cluster"]
    assert cluster["existing"] == {
        "hyperPodClusterArn": fake.arn, "eksClusterName": "research-gpu-eks-7f2c", "vpcId": fake.vpc_id,
        "subnetIds": list(fake.subnet_ids), "securityGroupId": fake.cluster_security_group,
        "installs": {"observability": False}}
    assert (cluster["name"], cluster["kubernetesVersion"], cluster["vpc"]) == (
        "research-gpu", "1.32", {"cidr": fake.vpc_cidr})
    assert not {"endpointAccess", "adminCidrs", "admins", "authenticationMode"} & set(cluster)
    assert [g["name"] for g in cluster["instanceGroups"]] == ["workers", "h100"]
    assert "securityGroupId: sg-0c1a55e7000000000  # the EKS cluster security group" in text
    assert "amazon-cloudwatch-observability is not installed" in text
    assert code == (1 if not EXISTING_SUPPORTED else 0), err


def test_without_the_cluster_security_group_the_first_one_is_a_guess(tmp_path, capsys, monkeypatch):
    import yaml

    monkeypatch.setattr(live_cli, "EXISTING_SUPPORTED", True)
    fake = console_cluster()
    fake.cluster_security_group = ""
    with Aws() as aws:
        queue_import(aws, fake, existing=True, endpoint={"endpointPrivateAccess": True,
                                                         "securityGroupIds": ["sg-0add1ti0na1000000"]})
        run_import(import_args("--cluster-name", fake.name, existing=True), clients=aws.factory)
    text = capsys.readouterr().out
    assert "securityGroupId: sg-0add1ti0na1000000  # guessed:" in text
    existing = yaml.safe_load(text)["cluster"]["existing"]
    assert existing["installs"] == {"scheduler": True, "observability": False}  # no task-governance add-on


@pytest.mark.skipif(not EXISTING_SUPPORTED, reason="cluster.existing is not in the spec model yet (governance-only "
                    "mode lands on its own branch); runs once it is")
def test_import_validate_synth_drift_round_trip_of_an_existing_cluster(tmp_path, capsys):
    from hyperpod_gov.cli import main

    fake = console_cluster()
    code, out, err = imported_existing(fake, tmp_path, capsys)
    assert code == 0, err
    assert main(["validate", str(out)]) == 0, capsys.readouterr()
    assert main(["synth", str(out), "--out", str(tmp_path / "build")]) == 0, capsys.readouterr()
    capsys.readouterr()
    items = drift_of(out, fake, capsys)
    assert [i for i in items if i["kind"] in GOVERNANCE] == []


# issue 55: import says what enforces the NetworkPolicies when the vpc-cni add-on does (DescribeAddon)
STRICT_CNI = {"addonName": "vpc-cni", "addonVersion": "v1.19.2-eksbuild.1",
              "configurationValues": '{"enableNetworkPolicy":"true","env":{"NETWORK_POLICY_ENFORCING_MODE":"strict"}}'}


@pytest.mark.parametrize("cni, written", [
    (STRICT_CNI, {"enforcer": "vpc-cni"}),
    ({**STRICT_CNI, "configurationValues": '{"enableNetworkPolicy":"true"}'}, None),  # standard mode
    ({"addonName": "vpc-cni", "addonVersion": "v1.19.2-eksbuild.1"}, None),  # the add-on's defaults: off
    (None, None),  # no vpc-cni add-on
], ids=["strict", "standard-mode", "defaults", "no-add-on"])
def test_import_writes_the_network_policy_enforcer_only_when_the_vpc_cni_enforces(tmp_path, capsys, monkeypatch,
                                                                                 cni, written):
    import yaml

    monkeypatch.setattr(live_cli, "EXISTING_SUPPORTED", True)
    fake = console_cluster()
    fake.addons = [{"addonName": "amazon-sagemaker-hyperpod-taskgovernance"}] + (
        [{**cni, "clusterName": fake.eks_name}] if cni else [])
    code, out, err = imported_existing(fake, tmp_path, capsys)
    text = out.read_text()
    assert yaml.safe_load(text)["cluster"]["existing"].get("networkPolicyEnforcement") == written
    assert ("# networkPolicyEnforcement: {enforcer: vpc-cni}  # not written" in text) is (written is None)
    assert code == 0, err  # the written spec validates either way (an unstated enforcer is a warning, HPG-E006)


def test_import_without_describe_addon_still_writes_the_spec_and_says_why_the_enforcer_is_missing(tmp_path, capsys,
                                                                                                  monkeypatch):
    """The live contract names SageMaker DescribeCluster, EKS DescribeCluster/ListAddons and EC2 DescribeVpcs for
    import: an identity with those alone gets its spec (exit 0), the enforcer left as a comment saying why."""
    import yaml

    monkeypatch.setattr(live_cli, "EXISTING_SUPPORTED", True)
    fake = console_cluster()
    fake.addons = [{"addonName": "amazon-sagemaker-hyperpod-taskgovernance"},
                   {**STRICT_CNI, "clusterName": fake.eks_name}]
    code, out, err = imported_existing(fake, tmp_path, capsys, addon_denied=True)
    text = out.read_text()
    assert code == 0, err
    assert "networkPolicyEnforcement" not in yaml.safe_load(text)["cluster"]["existing"]
    assert "not written: eks:DescribeAddon was denied" in text
