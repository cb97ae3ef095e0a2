"""Allocations in the synthesized templates (task-governance mode, native resources): one assertion per
CloudFormation property issue 14 adds."""

from __future__ import annotations

import pytest

from hyperpod_gov.spec import parse_spec
from tests.conftest import TODAY
from tests.plan.test_allocations import allocation_spec
from tests.synth_helpers import cfn_lint, resources


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory):
    from tests.synth_helpers import synthesize

    spec = parse_spec(allocation_spec("task-governance", idleResourceSharing=False), today=TODAY)
    return synthesize(spec, tmp_path_factory.mktemp("allocations"))


def quotas(synthesized) -> dict[str, dict]:
    return {p["ComputeQuotaTarget"]["TeamName"]: p for t in synthesized.templates.values()
            for _, p in resources(t, "AWS::SageMaker::ComputeQuota")}


def resource_of(quota: dict, itype: str) -> dict:
    return next(r for r in quota["ComputeQuotaConfig"]["ComputeQuotaResources"] if r["InstanceType"] == itype)


def test_vcpu_and_memory_in_gib(synthesized):
    assert resource_of(quotas(synthesized)["team-b"], "ml.m5.2xlarge") == {
        "InstanceType": "ml.m5.2xlarge", "VCpu": 8, "MemoryInGiB": 32}


def test_accelerator_partition_type_and_count(synthesized):
    assert resource_of(quotas(synthesized)["team-a"], "ml.p5.48xlarge") == {
        "InstanceType": "ml.p5.48xlarge", "AcceleratorPartition": {"Type": "mig-1g.10gb", "Count": 56}}


def test_absolute_borrow_limits(synthesized):
    sharing = quotas(synthesized)["team-a"]["ComputeQuotaConfig"]["ResourceSharingConfig"]
    assert sharing == {"Strategy": "LendAndBorrow", "BorrowLimit": 50,
                       "AbsoluteBorrowLimits": [{"InstanceType": "ml.g5.8xlarge", "Count": 1}]}


def test_activation_state_disabled_for_the_paused_team_only(synthesized):
    assert {team: q["ActivationState"] for team, q in quotas(synthesized).items()} == {
        "team-a": "Enabled", "team-b": "Disabled"}


def test_scheduler_config_idle_resource_sharing(synthesized):
    ((_, policy),) = [r for t in synthesized.templates.values()
                      for r in resources(t, "AWS::SageMaker::ClusterSchedulerConfig")]
    assert policy["SchedulerConfig"]["IdleResourceSharing"] == "Disabled"


def test_the_templates_with_every_allocation_kind_pass_cfn_lint(synthesized):
    from pathlib import Path

    files = [p for p in synthesized.template_files() if "team" in p.name or "governance" in p.name]
    assert files
    for path in files:
        matches = cfn_lint(Path(path), "us-east-1")
        errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, "\n".join(errors)


def test_a_partitioned_group_carries_the_mig_label_hyperpod_partitions_by(synthesized):
    ((_, cluster),) = [r for t in synthesized.templates.values() for r in resources(t, "AWS::SageMaker::Cluster")]
    labels = {g["InstanceGroupName"]: (g.get("KubernetesConfig") or {}).get("Labels") for g in cluster["InstanceGroups"]}
    partitioned = {g.name: g.mig.profile for g in synthesized.spec.cluster.instance_groups if g.mig}
    assert partitioned == {name: "mig-1g.10gb" for name in partitioned} and partitioned
    for name, labels_of_group in labels.items():
        if name in partitioned:
            assert labels_of_group == {"nvidia.com/mig.config": "all-1g.10gb"}, name
        else:
            assert labels_of_group is None, name
