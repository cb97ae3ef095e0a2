"""Allocations (issue 14): every new key, valid and invalid, table-driven, each problem with its message."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

from hyperpod_gov.spec import SpecError, parse_spec
from hyperpod_gov.spec.loader import spec_warnings
from tests.conftest import BASE, TODAY

P5, G5, M5 = "ml.p5.48xlarge", "ml.g5.8xlarge", "ml.m5.2xlarge"  # 8 x H100 | 1 x A10G | 8 vCPU, 32 GiB
MIG = {"profile": "mig-1g.10gb"}  # 7 per H100: 2 x ml.p5.48xlarge = 16 GPUs = 112 partitions


def spec_with(*changes: Callable[[dict], None]) -> dict:
    data = copy.deepcopy(BASE)
    for change in changes:
        change(data)
    return data


def group(i: int, **kw: Any) -> Callable[[dict], None]:
    return lambda d: d["cluster"]["instanceGroups"][i].update(kw)


def add_group(name: str, itype: str, count: int, **kw: Any) -> Callable[[dict], None]:
    return lambda d: d["cluster"]["instanceGroups"].append({"name": name, "instanceType": itype, "count": count, **kw})


def quota(team: int, *entries: dict) -> Callable[[dict], None]:
    return lambda d: d["teams"][team].update(quota=list(entries))


def sharing(team: int, **kw: Any) -> Callable[[dict], None]:
    return lambda d: d["teams"][team].update(sharing=kw)


def top(key: str, value: Any) -> Callable[[dict], None]:
    return lambda d: d.update({key: value})


def scheduler(**kw: Any) -> Callable[[dict], None]:
    return lambda d: d["scheduler"].update(kw)


def team(i: int, **kw: Any) -> Callable[[dict], None]:
    return lambda d: d["teams"][i].update(kw)


def parts(itype: str, n: int, profile: str = "mig-1g.10gb") -> dict:
    return {"instanceType": itype, "partitions": {"profile": profile, "count": n}}


DECLARED = {"ml.example.48xlarge": {"accelerators": 8, "acceleratorKind": "nvidia.com/gpu", "vcpu": 192,
                                    "memoryGib": 2048}}

VALID = [
    # (id, changes, check on the loaded spec)
    ("partitions_fill_the_112_of_two_p5",
     [group(0, mig=MIG), quota(0, parts(P5, 56)), quota(1, {"instanceType": G5, "count": 2}, parts(P5, 56))],
     lambda s: (s.cluster.instance_groups[0].mig.profile, s.teams[0].quota[0].partitions.count) == ("mig-1g.10gb", 56)),
    ("count_on_a_partitioned_type", [group(0, mig=MIG), quota(0, {"instanceType": P5, "count": 2})],
     lambda s: s.teams[0].quota[0].count == 2),
    ("vcpu_and_memory_on_a_cpu_group",
     [add_group("cpu", M5, 2), quota(1, {"instanceType": M5, "vcpu": 8, "memoryGib": 32})],
     lambda s: (s.teams[1].quota[0].vcpu, s.teams[1].quota[0].memory_gib) == (8, 32)),
    ("absolute_borrow_limit_on_a_type_the_team_does_not_own",
     [sharing(0, strategy="LendAndBorrow", absoluteBorrowLimits=[{"instanceType": G5, "count": 1}])],
     lambda s: s.teams[0].sharing.absolute_borrow_limits[0].count == 1),
    ("absolute_borrow_limit_in_vcpu", [add_group("cpu", M5, 2), sharing(0, absoluteBorrowLimits=[
        {"instanceType": M5, "vcpu": 4, "memoryGib": 16}])],
     lambda s: s.teams[0].sharing.absolute_borrow_limits[0].memory_gib == 16),
    ("idle_resource_sharing_off", [scheduler(idleResourceSharing=False), sharing(0, strategy="LendAndBorrow")],
     lambda s: s.scheduler.idle_resource_sharing is False),
    ("idle_resource_sharing_defaults_on", [], lambda s: s.scheduler.idle_resource_sharing is True),
    ("paused_team", [team(1, active=False)], lambda s: s.teams[1].active is False and s.teams[0].active is True),
    ("declared_instance_type", [top("instanceTypes", DECLARED), add_group("new", "ml.example.48xlarge", 1),
                                quota(1, {"instanceType": "ml.example.48xlarge", "accelerators": 4})],
     lambda s: s.instance_types["ml.example.48xlarge"].vcpu == 192),
    ("b300_partitions_in_kueue_mode", [scheduler(mode="kueue"), add_group("b300", "ml.p6-b300.48xlarge", 1, mig={
        "profile": "mig-1g.34gb"}), quota(1, parts("ml.p6-b300.48xlarge", 56, "mig-1g.34gb"))],
     lambda s: s.teams[1].quota[0].partitions.profile == "mig-1g.34gb"),
]


@pytest.mark.parametrize("changes, check", [c[1:] for c in VALID], ids=[c[0] for c in VALID])
def test_valid_allocations_load(changes, check):
    assert check(parse_spec(spec_with(*changes), today=TODAY))


INVALID = [
    # (id, changes, substrings of one message)
    ("partitions_over_what_the_groups_provide",
     [group(0, mig=MIG), quota(0, parts(P5, 60)), quota(1, parts(P5, 60))],
     ["teams[*].quota[ml.p5.48xlarge]: quotas on ml.p5.48xlarge add up to 120 partitions of mig-1g.10gb "
      "(team-a 60, team-b 60) but the instance groups provide 112 (2 x ml.p5.48xlarge x 8 GPUs x 7) (120)",
      "lower the quotas by 8 partitions or add instances of ml.p5.48xlarge"]),
    ("partitions_and_whole_instances_over_capacity",
     [group(0, mig=MIG), quota(0, {"instanceType": P5, "count": 2}), quota(1, parts(P5, 1))],
     ["add up to 113 partitions of mig-1g.10gb (team-a 112, team-b 1)"]),
    ("partitions_without_a_partitioned_group", [quota(0, parts(P5, 7))],
     ["teams[0].quota[0].partitions.profile: no instance group of ml.p5.48xlarge partitions its GPUs "
      "('mig-1g.10gb'); add mig: {profile: mig-1g.10gb} to cluster.instanceGroups[0]"]),
    ("partitions_of_a_profile_the_gpu_lacks", [quota(1, parts(G5, 2))],
     ["teams[1].quota[0].partitions.profile: is not a MIG profile of ml.g5.8xlarge's accelerators (A10G) "
      "('mig-1g.10gb'); give count or accelerators: this type has no MIG"]),
    ("partitions_of_another_profile_than_the_groups", [group(0, mig=MIG), quota(0, parts(P5, 4, "mig-3g.40gb"))],
     ["teams[0].quota[0].partitions.profile: the GPUs of ml.p5.48xlarge are partitioned into mig-1g.10gb "
      "('mig-3g.40gb'); use profile: mig-1g.10gb"]),
    ("accelerators_on_a_partitioned_type", [group(0, mig=MIG)],
     ["teams[0].quota[0].accelerators: the GPUs of ml.p5.48xlarge are partitioned into mig-1g.10gb "
      "(cluster.instanceGroups[0]), so its nodes offer no whole GPUs (8)", "give partitions: {profile: mig-1g.10gb"]),
    ("group_mig_profile_the_gpu_lacks", [group(0, mig={"profile": "mig-1g.5gb"})],
     ["cluster.instanceGroups[0].mig.profile: is not a MIG profile of ml.p5.48xlarge's GPUs (H100) ('mig-1g.5gb'); "
      "use one of: mig-1g.10gb, mig-1g.20gb, mig-2g.20gb, mig-3g.40gb, mig-4g.40gb, mig-7g.80gb"]),
    ("group_mig_on_a_gpu_without_mig", [group(1, mig=MIG)],
     ["cluster.instanceGroups[1].mig.profile: is not a MIG profile of ml.g5.8xlarge's GPUs (A10G)",
      "remove mig: these GPUs have no MIG"]),
    ("group_mig_on_a_cpu_type", [add_group("cpu", M5, 1, mig=MIG)],
     ["cluster.instanceGroups[2].mig.profile: ml.m5.2xlarge has no NVIDIA GPUs to partition ('mig-1g.10gb')"]),
    ("groups_of_one_type_partitioned_differently", [group(0, mig=MIG), add_group("gpu2", P5, 1)],
     ["cluster.instanceGroups[2].mig: differs from cluster.instanceGroups[0] of the same type (mig-1g.10gb)",
      "partition every group of one instance type the same way"]),
    ("mig_profile_name_malformed", [group(0, mig={"profile": "1g.10gb"})],
     ["cluster.instanceGroups[0].mig.profile: is not a MIG profile name ('1g.10gb'); write it as HyperPod does"]),
    ("two_amounts_in_one_entry", [quota(0, {"instanceType": P5, "count": 1, **parts(P5, 7)})],
     ["teams[0].quota[0]: needs exactly one of count, accelerators, vcpu with memoryGib, or partitions "
      "(gives count and partitions)"]),
    ("no_amount_in_an_entry", [quota(0, {"instanceType": P5})],
     ["teams[0].quota[0]: needs exactly one of count, accelerators, vcpu with memoryGib, or partitions (",
      "write count: N for whole instances"]),
    ("vcpu_without_memory", [add_group("cpu", M5, 2), quota(1, {"instanceType": M5, "vcpu": 8})],
     ["teams[1].quota[0]: gives one of vcpu and memoryGib", "add memoryGib: N"]),
    ("vcpu_on_an_accelerated_type", [quota(1, {"instanceType": G5, "vcpu": 8, "memoryGib": 32})],
     ["teams[1].quota[0].vcpu: vcpu and memoryGib are for types without accelerators; ml.g5.8xlarge has 1 (8)"]),
    ("vcpu_over_capacity", [add_group("cpu", M5, 2), quota(0, {"instanceType": M5, "vcpu": 8, "memoryGib": 16}),
                            quota(1, {"instanceType": M5, "vcpu": 10, "memoryGib": 16})],
     ["teams[*].quota[ml.m5.2xlarge]: quotas on ml.m5.2xlarge add up to 18 vCPU (team-a 8, team-b 10) but the "
      "instance groups hold 16 (2 x ml.m5.2xlarge x 8) (18); lower the quotas by 2 vCPU"]),
    ("memory_over_capacity_with_whole_instances", [add_group("cpu", M5, 2), quota(0, {"instanceType": M5, "count": 1}),
                                                    quota(1, {"instanceType": M5, "vcpu": 2, "memoryGib": 40})],
     ["quotas on ml.m5.2xlarge add up to 72 GiB of memory (team-a 32, team-b 40) but the instance groups hold 64 "
      "(2 x ml.m5.2xlarge x 32)"]),
    ("absolute_limits_for_a_team_that_cannot_borrow",
     [sharing(1, strategy="DontLend", absoluteBorrowLimits=[{"instanceType": P5, "accelerators": 2}])],
     ["teams[1].sharing.absoluteBorrowLimits: a DontLend team cannot borrow (a list of 1 entries)",
      "remove absoluteBorrowLimits, or set strategy: LendAndBorrow"]),
    ("absolute_limit_twice_on_one_type", [sharing(0, absoluteBorrowLimits=[
        {"instanceType": G5, "count": 1}, {"instanceType": G5, "count": 2}])],
     ["teams[0].sharing.absoluteBorrowLimits[1].instanceType: appears twice in the team's absolute borrow limits"]),
    ("absolute_limit_on_a_type_no_group_has", [sharing(0, absoluteBorrowLimits=[
        {"instanceType": "ml.p4d.24xlarge", "accelerators": 2}])],
     ["teams[0].sharing.absoluteBorrowLimits[0].instanceType: no instance group has this type ('ml.p4d.24xlarge')"]),
    ("absolute_limit_in_accelerators_on_a_cpu_type", [add_group("cpu", M5, 1), sharing(0, absoluteBorrowLimits=[
        {"instanceType": M5, "accelerators": 1}])],
     ["teams[0].sharing.absoluteBorrowLimits[0].accelerators: ml.m5.2xlarge has no accelerators (1)"]),
    ("unknown_type_in_a_group", [add_group("new", "ml.p9.48xlarge", 1)],
     ["cluster.instanceGroups[2].instanceType: is not a HyperPod instance type this library knows "
      "('ml.p9.48xlarge'); did you mean ml.p5.48xlarge or ml.p5e.48xlarge or ml.p5.4xlarge? or, for a type newer "
      "than the catalog, declare its facts under instanceTypes"]),
    ("instance_type_name_malformed", [group(1, instanceType="p5.48xlarge")],
     ["cluster.instanceGroups[1].instanceType: is not a HyperPod instance type name ('p5.48xlarge')"]),
    ("declaring_a_catalogued_type", [top("instanceTypes", {P5: DECLARED["ml.example.48xlarge"]})],
     ["instanceTypes[ml.p5.48xlarge]: is already in the catalog, whose facts hyperpod-gov uses ('ml.p5.48xlarge')"]),
    ("declared_accelerators_without_kind", [top("instanceTypes", {"ml.example.48xlarge": {
        "accelerators": 8, "vcpu": 192, "memoryGib": 2048}})],
     ["instanceTypes.ml.example.48xlarge: gives accelerators without acceleratorKind"]),
    ("declared_mig_on_neuron", [top("instanceTypes", {"ml.example.48xlarge": {
        "accelerators": 8, "acceleratorKind": "aws.amazon.com/neurondevice", "vcpu": 192, "memoryGib": 2048,
        "migProfiles": {"mig-1g.10gb": 7}}})],
     ["instanceTypes.ml.example.48xlarge: gives MIG profiles for a type without NVIDIA GPUs"]),
    ("partitions_cloudformation_does_not_accept_yet", [add_group("b300", "ml.p6-b300.48xlarge", 1, mig={
        "profile": "mig-1g.34gb"}), quota(1, parts("ml.p6-b300.48xlarge", 7, "mig-1g.34gb"))],
     ["teams[1].quota[0].partitions.profile: is not a profile CloudFormation's AWS::SageMaker::ComputeQuota "
      "accepts yet (AcceleratorPartition.Type) ('mig-1g.34gb')", "use scheduler.mode: kueue"]),
    ("active_is_not_a_boolean", [team(1, active="paused")], ["teams[1].active:"]),
    ("idle_resource_sharing_is_not_a_boolean", [scheduler(idleResourceSharing="sometimes")],
     ["scheduler.idleResourceSharing:"]),
]


@pytest.mark.parametrize("changes, expected", [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_allocations_are_reported_with_path_value_and_fix(changes, expected):
    with pytest.raises(SpecError) as info:
        parse_spec(spec_with(*changes), today=TODAY)
    found = [str(i) for i in info.value.issues]
    assert any(all(part in message for part in expected) for message in found), found


WARNINGS = [
    ("declared_type_warns_that_the_catalog_lacks_it",
     [top("instanceTypes", DECLARED), add_group("new", "ml.example.48xlarge", 1)],
     "instanceTypes[ml.example.48xlarge]: is not in hyperpod-gov's catalog: quotas on it rest on the facts "
     "declared here"),
    ("borrow_limits_without_idle_sharing", [scheduler(idleResourceSharing=False)],
     "teams[0].sharing.borrowLimitPercent: has no effect: scheduler.idleResourceSharing is false, so no team "
     "borrows (50)"),
    ("mig_on_a_type_hyperpod_does_not_list", [add_group("small-h100", "ml.p5.4xlarge", 1, mig=MIG)],
     "cluster.instanceGroups[2].mig.profile: ml.p5.4xlarge is not among the types HyperPod's GPU partitioning lists"),
]


@pytest.mark.parametrize("changes, expected", [c[1:] for c in WARNINGS], ids=[c[0] for c in WARNINGS])
def test_warnings_load_but_are_reported(changes, expected):
    spec = parse_spec(spec_with(*changes), today=TODAY)
    found = [str(i) for i in spec_warnings(spec, today=TODAY)]
    assert any(expected in message for message in found), found
    with pytest.raises(SpecError):
        parse_spec(spec_with(*changes), today=TODAY, strict=True)


def test_the_issue_example_of_two_p5_and_112_partitions_is_exactly_full():
    ok = spec_with(group(0, mig=MIG), quota(0, parts(P5, 112)), quota(1, {"instanceType": G5, "count": 2}))
    assert parse_spec(ok, today=TODAY).teams[0].quota[0].partitions.count == 112
    over = spec_with(group(0, mig=MIG), quota(0, parts(P5, 113)), quota(1, {"instanceType": G5, "count": 2}))
    with pytest.raises(SpecError, match="add up to 113 partitions of mig-1g.10gb"):
        parse_spec(over, today=TODAY)
