"""drift: a cluster built from the plan shows nothing; each single change shows exactly one item."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from hyperpod_gov.live import run_drift
from tests.conftest import EXAMPLES

from .conftest import Aws, drift_args, queue_drift, spec_and_plan
from .fake_aws import FakeCluster, cluster_from_plan, quota_response

ENTERPRISE = EXAMPLES / "enterprise.yaml"
STARTUP = EXAMPLES / "startup.yaml"


def run(aws: Aws, spec_path: Path, fake: FakeCluster, *argv: str, page_size: int | None = None) -> int:
    spec, plan = spec_and_plan(spec_path)
    queue_drift(aws, spec, plan, fake, page_size=page_size)
    code = run_drift(drift_args(str(spec_path), *argv), clients=aws.factory)
    aws.assert_all_used()
    return code


def json_items(aws: Aws, spec_path: Path, fake: FakeCluster, capsys) -> tuple[int, list[dict[str, Any]]]:
    code = run(aws, spec_path, fake, "--format", "json")
    return code, json.loads(capsys.readouterr().out)["drift"]


@pytest.mark.parametrize("spec_path", [ENTERPRISE, STARTUP], ids=["enterprise", "startup"])
def test_a_cluster_deployed_from_the_plan_shows_no_drift(aws, spec_path, capsys):
    _, plan = spec_and_plan(spec_path)
    code, items = json_items(aws, spec_path, cluster_from_plan(plan), capsys)
    assert (code, items) == (0, [])


def test_results_on_later_pages_are_read(aws, enterprise_live, capsys):
    _, _, fake = enterprise_live
    fake = fake.copy()
    # Each change sits on the last page of its list call (2 results per page).
    assert fake.quotas[-1]["ComputeQuotaTarget"]["TeamName"] == "speech"
    fake.quotas[-1]["ComputeQuotaConfig"]["PreemptTeamTasks"] = "LowerPriority"
    last_entry = fake.access_entries[-1]["principalArn"]
    fake.access_entries[-1]["kubernetesGroups"] = ["hyperpod-ns-speech-submitters"]
    last_addon = max(a["addonName"] for a in fake.addons)
    original = next(a for a in fake.addons if a["addonName"] == last_addon)
    fake.addons = [a for a in fake.addons if a["addonName"] != last_addon] + [
        {**original, "addonVersion": "v1.19.0-eksbuild.1"}]
    code = run(aws, ENTERPRISE, fake, "--format", "json", page_size=2)
    items = json.loads(capsys.readouterr().out)["drift"]
    assert code == 1
    assert [(i["kind"], i["name"], i["change"]) for i in items] == [
        ("Addon", last_addon, "changed"),  # every add-on is pinned, so a version on the last page is drift too
        ("ComputeQuota", "speech", "changed"),
        ("AccessEntry", last_entry, "unexpected"),  # the node role's entry, now mapped onto a team group
    ]
    assert aws.operations.count("ListComputeQuotas") == 3  # 5 quotas, 2 per page
    # 15 add-ons, two a page: 7, and the 8 of the training, inference and spaces operators (cert-manager among them)
    assert aws.operations.count("ListAddons") == 8


def _set(path: str, value: Any) -> Callable[[FakeCluster], None]:
    """A change to one team's quota, e.g. _set("speech:ComputeQuotaConfig.PreemptTeamTasks", "LowerPriority")."""
    team, dotted = path.split(":")

    def change(fake: FakeCluster) -> None:
        node = fake.quota(team)
        *parents, leaf = dotted.split(".")
        for p in parents:
            node = node[p]
        node[leaf] = value

    return change


def _console_quota(fake: FakeCluster) -> None:
    config = {"ComputeQuotaResources": [{"InstanceType": "ml.p5.48xlarge", "Accelerators": 4}],
              "ResourceSharingConfig": {"Strategy": "LendAndBorrow", "BorrowLimit": 100},
              "PreemptTeamTasks": "LowerPriority"}
    fake.quotas.append(quota_response(fake.arn, fake.account, fake.region, "vision-console", "vision", config, 50))


def _quota_resource(team: str, **amounts: int) -> Callable[[FakeCluster], None]:
    def change(fake: FakeCluster) -> None:
        fake.quota(team)["ComputeQuotaConfig"]["ComputeQuotaResources"][0] = {"InstanceType": "ml.p5.48xlarge",
                                                                              **amounts}
    return change


def _policy(change: Callable[[dict[str, Any]], None]) -> Callable[[FakeCluster], None]:
    return lambda fake: change(fake.policies[0])


def _entry(arn_end: str, change: Callable[[FakeCluster, dict[str, Any]], None]) -> Callable[[FakeCluster], None]:
    return lambda fake: change(fake, next(e for e in fake.access_entries if e["principalArn"].endswith(arn_end)))


def _assoc(ns_sa: str, change: Callable[[FakeCluster, dict[str, Any]], None]) -> Callable[[FakeCluster], None]:
    ns, sa = ns_sa.split("/")
    return lambda fake: change(fake, next(a for a in fake.associations
                                          if (a["namespace"], a["serviceAccount"]) == (ns, sa)))


def _remove(attr: str, pred: Callable[[dict[str, Any]], bool]) -> Callable[[FakeCluster], None]:
    return lambda fake: setattr(fake, attr, [x for x in getattr(fake, attr) if not pred(x)])


def _weight(name: str, weight: int) -> Callable[[dict[str, Any]], None]:
    def change(policy: dict[str, Any]) -> None:
        next(p for p in policy["SchedulerConfig"]["PriorityClasses"] if p["Name"] == name)["Weight"] = weight
    return change


SPEECH_TRAINER = "hyperpod-ns-speech/trainer"
ROLE = "arn:aws:iam::111111111111:role/"

SINGLE_CHANGES = [
    # (id, change, the one expected JSON item)
    ("borrow limit changed by hand", _set("speech:ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit", 25),
     {"kind": "ComputeQuota", "name": "speech", "change": "changed",
      "field": "ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit", "expected": 50, "actual": 25}),
    ("accelerators changed", _quota_resource("recommendations", Accelerators=12),
     {"kind": "ComputeQuota", "name": "recommendations", "change": "changed",
      "field": "ComputeQuotaConfig.ComputeQuotaResources[ml.p5.48xlarge].Accelerators", "expected": 10,
      "actual": 12}),
    ("quota written in instances instead of accelerators", _quota_resource("foundation-models", Count=3),
     {"kind": "ComputeQuota", "name": "foundation-models", "change": "changed",
      "field": "ComputeQuotaConfig.ComputeQuotaResources[ml.p5.48xlarge]", "expected": {"Accelerators": 20},
      "actual": {"Count": 3}}),
    ("strategy changed", _set("foundation-models:ComputeQuotaConfig.ResourceSharingConfig.Strategy", "Lend"),
     {"kind": "ComputeQuota", "name": "foundation-models", "change": "changed",
      "field": "ComputeQuotaConfig.ResourceSharingConfig.Strategy", "expected": "DontLend", "actual": "Lend"}),
    ("preemption changed", _set("speech:ComputeQuotaConfig.PreemptTeamTasks", "LowerPriority"),
     {"kind": "ComputeQuota", "name": "speech", "change": "changed",
      "field": "ComputeQuotaConfig.PreemptTeamTasks", "expected": "Never", "actual": "LowerPriority"}),
    ("fair-share weight changed", _set("recommendations:ComputeQuotaTarget.FairShareWeight", 100),
     {"kind": "ComputeQuota", "name": "recommendations", "change": "changed",
      "field": "ComputeQuotaTarget.FairShareWeight", "expected": 75, "actual": 100}),
    ("quota disabled", _set("applied-research:ActivationState", "Disabled"),
     {"kind": "ComputeQuota", "name": "applied-research", "change": "changed", "field": "ActivationState",
      "expected": "Enabled", "actual": "Disabled"}),
    ("quota deleted", _remove("quotas", lambda q: q["ComputeQuotaTarget"]["TeamName"] == "inference-platform"),
     {"kind": "ComputeQuota", "name": "inference-platform", "change": "missing"}),
    ("quota listed as Deleted", _set("speech:Status", "Deleted"),
     {"kind": "ComputeQuota", "name": "speech", "change": "missing"}),
    ("quota deleted between list and describe", lambda f: f.vanished.add(f.quota("speech")["ComputeQuotaId"]),
     {"kind": "ComputeQuota", "name": "speech", "change": "missing"}),
    ("quota created in the console", _console_quota,
     {"kind": "ComputeQuota", "name": "vision", "change": "unexpected"}),
    ("priority class weight changed", _policy(_weight("training", 60)),
     {"kind": "ClusterSchedulerConfig", "name": "acme-ml-policy", "change": "changed",
      "field": "SchedulerConfig.PriorityClasses[training].Weight", "expected": 80, "actual": 60}),
    ("priority class removed", _policy(lambda p: p["SchedulerConfig"]["PriorityClasses"].remove({"Name": "experimentation", "Weight": 20})),
     {"kind": "ClusterSchedulerConfig", "name": "acme-ml-policy", "change": "changed",
      "field": "SchedulerConfig.PriorityClasses[experimentation]",
      "expected": {"Name": "experimentation", "Weight": 20}, "actual": None}),
    ("fair sharing turned off", _policy(lambda p: p["SchedulerConfig"].update(FairShare="Disabled")),
     {"kind": "ClusterSchedulerConfig", "name": "acme-ml-policy", "change": "changed",
      "field": "SchedulerConfig.FairShare", "expected": "Enabled", "actual": "Disabled"}),
    ("cluster policy deleted", _remove("policies", lambda p: True),
     {"kind": "ClusterSchedulerConfig", "name": "acme-ml-policy", "change": "missing"}),
    ("instance group scaled by hand",
     lambda f: f.instance_groups[0].update(TargetCount=8),
     {"kind": "InstanceGroup", "name": "accelerated-worker", "change": "changed", "field": "TargetCount",
      "expected": 10, "actual": 8}),
    ("instance group type changed by hand",
     lambda f: f.instance_groups[0].update(InstanceType="ml.g5.12xlarge"),
     {"kind": "InstanceGroup", "name": "accelerated-worker", "change": "changed", "field": "InstanceType",
      "expected": "ml.p5.48xlarge", "actual": "ml.g5.12xlarge"}),
    ("instance group added by hand",
     lambda f: f.instance_groups.append({"InstanceGroupName": "extra", "InstanceType": "ml.g5.2xlarge",
                                         "CurrentCount": 1, "TargetCount": 1}),
     {"kind": "InstanceGroup", "name": "extra", "change": "unexpected"}),
    ("EKS cluster is another one",
     lambda f: setattr(f, "eks_name", "console-eks"),
     {"kind": "Cluster", "name": "ml-cluster", "change": "changed", "field": "Orchestrator.Eks.ClusterArn",
      "expected": "arn:aws:eks:us-east-1:111111111111:cluster/ml-cluster-eks",
      "actual": "arn:aws:eks:us-east-1:111111111111:cluster/console-eks"}),
    ("access entry groups changed",
     _entry("role/SpeechViewer", lambda f, e: e.update(kubernetesGroups=["hyperpod-ns-speech-submitters"])),
     {"kind": "AccessEntry", "name": ROLE + "SpeechViewer", "change": "changed", "field": "kubernetesGroups",
      "expected": ["hyperpod-ns-speech-viewers"], "actual": ["hyperpod-ns-speech-submitters"]}),
    ("access entry deleted", _remove("access_entries", lambda e: e["principalArn"].endswith("role/RecsysScientist")),
     {"kind": "AccessEntry", "name": ROLE + "RecsysScientist", "change": "missing"}),
    ("admin access entry deleted", _remove("access_entries", lambda e: e["principalArn"].endswith("PlatformAdmin")),
     {"kind": "AccessEntry", "name": ROLE + "PlatformAdmin", "change": "missing"}),
    ("access entry onto a team group added by hand",
     lambda f: f.access_entries.append({"clusterName": f.eks_name, "principalArn": ROLE + "Intern",
                                        "kubernetesGroups": ["hyperpod-ns-speech-submitters"], "type": "STANDARD"}),
     {"kind": "AccessEntry", "name": ROLE + "Intern", "change": "unexpected"}),
    ("pod identity role changed",
     _assoc(SPEECH_TRAINER, lambda f, a: a.update(roleArn=ROLE + "hand-made")),
     {"kind": "PodIdentityAssociation", "name": SPEECH_TRAINER, "change": "changed", "field": "roleArn",
      "expected": ROLE + "acme-ml-speech-trainer", "actual": ROLE + "hand-made"}),
    ("pod identity target role dropped",
     _assoc(SPEECH_TRAINER, lambda f, a: a.pop("targetRoleArn")),
     {"kind": "PodIdentityAssociation", "name": SPEECH_TRAINER, "change": "changed", "field": "targetRoleArn",
      "expected": "arn:aws:iam::222222222222:role/speech-trainer-data", "actual": None}),
    ("pod identity deleted",
     _remove("associations", lambda a: (a["namespace"], a["serviceAccount"]) == ("hyperpod-ns-speech", "trainer")),
     {"kind": "PodIdentityAssociation", "name": SPEECH_TRAINER, "change": "missing"}),
    ("pod identity added in a team namespace",
     lambda f: f.associations.append({"clusterName": f.eks_name, "namespace": "hyperpod-ns-speech",
                                      "serviceAccount": "notebook", "roleArn": ROLE + "admin",
                                      "associationId": "a-notebook00000000"}),
     {"kind": "PodIdentityAssociation", "name": "hyperpod-ns-speech/notebook", "change": "unexpected"}),
    ("add-on version changed",
     lambda f: next(a for a in f.addons if a["addonName"] == "amazon-cloudwatch-observability").update(
         addonVersion="v4.0.0-eksbuild.1"),
     {"kind": "Addon", "name": "amazon-cloudwatch-observability", "change": "changed", "field": "addonVersion",
      "expected": "v4.1.0-eksbuild.1", "actual": "v4.0.0-eksbuild.1"}),
    ("network policy agent switched off",
     lambda f: next(a for a in f.addons if a["addonName"] == "vpc-cni").update(
         configurationValues='{"enableNetworkPolicy": "false"}'),
     {"kind": "Addon", "name": "vpc-cni", "change": "changed", "field": "configurationValues",
      "expected": {"enableNetworkPolicy": "true", "env": {"NETWORK_POLICY_ENFORCING_MODE": "strict"}},
      "actual": '{"enableNetworkPolicy": "false"}'}),
    ("network policies back in standard mode",
     lambda f: next(a for a in f.addons if a["addonName"] == "vpc-cni").update(
         configurationValues='{"enableNetworkPolicy": "true", "env": {"NETWORK_POLICY_ENFORCING_MODE": "standard"}}'),
     {"kind": "Addon", "name": "vpc-cni", "change": "changed", "field": "configurationValues",
      "expected": {"enableNetworkPolicy": "true", "env": {"NETWORK_POLICY_ENFORCING_MODE": "strict"}},
      "actual": '{"enableNetworkPolicy": "true", "env": {"NETWORK_POLICY_ENFORCING_MODE": "standard"}}'}),
    ("training operator add-on on another version",
     lambda f: next(a for a in f.addons if a["addonName"] == "amazon-sagemaker-hyperpod-training-operator").update(
         addonVersion="v1.0.0-eksbuild.1"),
     {"kind": "Addon", "name": "amazon-sagemaker-hyperpod-training-operator", "change": "changed",
      "field": "addonVersion", "expected": "v1.0.1-eksbuild.1", "actual": "v1.0.0-eksbuild.1"}),
    ("training operator add-on removed",
     _remove("addons", lambda a: a["addonName"] == "amazon-sagemaker-hyperpod-training-operator"),
     {"kind": "Addon", "name": "amazon-sagemaker-hyperpod-training-operator", "change": "missing"}),
    ("cert-manager add-on removed", _remove("addons", lambda a: a["addonName"] == "cert-manager"),
     {"kind": "Addon", "name": "cert-manager", "change": "missing"}),
    ("add-on removed", _remove("addons", lambda a: a["addonName"] == "coredns"),
     {"kind": "Addon", "name": "coredns", "change": "missing"}),
]


@pytest.mark.parametrize("change, item", [c[1:] for c in SINGLE_CHANGES], ids=[c[0] for c in SINGLE_CHANGES])
def test_each_single_change_shows_exactly_one_item(aws, enterprise_live, capsys, change, item):
    _, _, fake = enterprise_live
    fake = fake.copy()
    change(fake)
    code, items = json_items(aws, ENTERPRISE, fake, capsys)
    assert (code, items) == (1, [item])


def test_kueue_mode_reports_task_governance_objects_as_unexpected(aws, capsys):
    spec, plan = spec_and_plan(STARTUP)
    fake = cluster_from_plan(plan)
    fake.addons.append({"addonName": "amazon-sagemaker-hyperpod-taskgovernance", "clusterName": fake.eks_name,
                        "addonVersion": "v1.6.0-eksbuild.1", "status": "ACTIVE"})
    _console_quota(fake)
    code, items = json_items(aws, STARTUP, fake, capsys)
    assert code == 1
    assert items == [
        {"kind": "Addon", "name": "amazon-sagemaker-hyperpod-taskgovernance", "change": "unexpected"},
        {"kind": "ComputeQuota", "name": "vision", "change": "unexpected"},
    ]


def test_text_output_groups_by_team_then_resource_in_words(aws, enterprise_live, capsys):
    _, _, fake = enterprise_live
    fake = fake.copy()
    _set("speech:ComputeQuotaConfig.ResourceSharingConfig.BorrowLimit", 25)(fake)
    _set("speech:ComputeQuotaConfig.ComputeQuotaResources", [{"InstanceType": "ml.p5.48xlarge",
                                                              "Accelerators": 16}])(fake)
    _policy(_weight("training", 60))(fake)
    _console_quota(fake)
    _entry("role/SpeechViewer", lambda f, e: e.update(kubernetesGroups=[]))(fake)
    assert run(aws, ENTERPRISE, fake) == 1
    assert capsys.readouterr().out == (
        "Drift on HyperPod cluster ml-cluster (us-east-1): 5 differences\n"
        "cluster-wide\n"
        "  cluster policy acme-ml-policy: priority class training has weight 60 on the cluster, the spec says 80\n"
        "team speech\n"
        "  compute quota: quota on ml.p5.48xlarge is 16 accelerators on the cluster, the spec says 25\n"
        "  compute quota: borrow limit is 25% on the cluster, the spec says 50%\n"
        "  access entry arn:aws:iam::111111111111:role/SpeechViewer: Kubernetes groups are none on the cluster, "
        "the spec says [hyperpod-ns-speech-viewers]\n"
        "team vision\n"
        "  compute quota: on the cluster, not in the spec (made by hand or in the console?)\n"
        "Kubernetes side: not checked: not asked (--no-kubernetes)\n"
    )


def test_only_describe_and_list_calls_are_made(aws, enterprise_live, capsys):
    _, _, fake = enterprise_live
    run(aws, ENTERPRISE, fake, page_size=3)
    assert aws.operations, "no call recorded"
    assert {op for op in aws.operations if not op.startswith(("Describe", "List"))} == set()
    assert set(aws.operations) == {
        "DescribeCluster", "ListClusterSchedulerConfigs", "DescribeClusterSchedulerConfig", "ListComputeQuotas",
        "DescribeComputeQuota", "ListAccessEntries", "DescribeAccessEntry", "ListPodIdentityAssociations",
        "DescribePodIdentityAssociation", "ListAddons", "DescribeAddon",
    }


def test_no_code_path_in_the_live_package_can_write():
    import re

    import hyperpod_gov.live as live

    source = "\n".join(p.read_text() for p in Path(live.__file__).parent.glob("*.py"))
    writes = re.findall(r"[\"'](?:create|update|delete|put|tag|untag|associate|disassociate)_\w+[\"']", source)
    calls = set(re.findall(r"\.(?:call|pages)\(\s*\"(\w+)\"", source))
    assert writes == []
    assert calls and all(c.startswith(("describe_", "list_")) for c in calls), calls
