"""cluster.sharedStorage and instanceGroups[].dedicatedTo: what the spec refuses (each with path, value, fix) and
the rules HPG-Q008, HPG-Q009 and HPG-D007."""

from __future__ import annotations

import copy
import re
from typing import Callable

import pytest

from hyperpod_gov.spec import SpecError, parse_spec
from tests.conftest import BASE, TODAY

FSX = {"storageCapacityGiB": 2400, "deploymentType": "PERSISTENT_2", "perUnitStorageThroughput": 250}
EXISTING_FSX = {"fileSystemId": "fs-0123456789abcdef0", "dnsName": "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com",
                "mountName": "abcdef12"}
EXISTING = {"hyperPodClusterArn": "arn:aws:sagemaker:us-east-1:111111111111:cluster/abcd1234efgh",
            "eksClusterName": "ml-eks", "vpcId": "vpc-0123456789abcdef0",
            "subnetIds": ["subnet-0123456789abcdef0"], "securityGroupId": "sg-0123456789abcdef0"}


def spec_with(*changes: Callable[[dict], None]) -> dict:
    data = copy.deepcopy(BASE)
    for change in changes:
        change(data)
    return data


def fsx(**values) -> Callable[[dict], None]:
    return lambda d: d["cluster"].__setitem__("sharedStorage", {"fsxLustre": values})


def dedicated(team: str, count: int = 2, itype: str = "ml.g5.8xlarge") -> Callable[[dict], None]:
    return lambda d: d["cluster"]["instanceGroups"].append(
        {"name": f"{team}-reserved", "instanceType": itype, "count": count, "dedicatedTo": team})


def quota_b(count: int) -> Callable[[dict], None]:
    return lambda d: d["teams"][1].__setitem__("quota", [{"instanceType": "ml.g5.8xlarge", "count": count}])


def existing(d: dict) -> None:
    d["cluster"]["existing"] = copy.deepcopy(EXISTING)
    d["cluster"]["vpc"] = {"cidr": "10.0.0.0/16"}
    d["cluster"].pop("admins")


def errors(data: dict) -> list[str]:
    with pytest.raises(SpecError) as e:
        parse_spec(data, today=TODAY)
    return [str(i) for i in e.value.issues]


@pytest.mark.parametrize("changes", [
    (fsx(**FSX),),
    (fsx(storageCapacityGiB=1200, perUnitStorageThroughput=125),),  # PERSISTENT_2 by default
    (fsx(storageCapacityGiB=7200, deploymentType="PERSISTENT_1", perUnitStorageThroughput=50),),
    (existing, fsx(**EXISTING_FSX)),
    (dedicated("team-b"), quota_b(2)),
    (dedicated("team-b"), quota_b(4)),
], ids=["created", "default-type", "persistent-1", "existing", "dedicated-exact", "dedicated-and-more"])
def test_valid_storage_and_dedicated_groups_load(changes):
    parse_spec(spec_with(*changes), today=TODAY)


@pytest.mark.parametrize("changes, path, words", [
    ((fsx(storageCapacityGiB=3600, perUnitStorageThroughput=125),),
     "cluster.sharedStorage.fsxLustre", "storageCapacityGiB 3600 is not a size PERSISTENT_2 offers"),
    ((fsx(storageCapacityGiB=1000, perUnitStorageThroughput=125),),
     "cluster.sharedStorage.fsxLustre.storageCapacityGiB", "use a value at least 1200"),
    ((fsx(storageCapacityGiB=2400, perUnitStorageThroughput=200),),
     "cluster.sharedStorage.fsxLustre", "perUnitStorageThroughput 200 is not offered for PERSISTENT_2"),
    ((fsx(storageCapacityGiB=2400, deploymentType="PERSISTENT_1", perUnitStorageThroughput=125),),
     "cluster.sharedStorage.fsxLustre", "use one of 50, 100, 200"),
    ((fsx(storageCapacityGiB=2400, deploymentType="PERSISTENT_1"),),
     "cluster.sharedStorage.fsxLustre", "perUnitStorageThroughput is missing"),
    ((fsx(storageCapacityGiB=2400, deploymentType="SCRATCH_2"),),
     "cluster.sharedStorage.fsxLustre", "SCRATCH_2 cannot be encrypted"),
    ((fsx(storageCapacityGiB=2400, perUnitStorageThroughput=125, fileSystemId="fs-0123456789abcdef0"),),
     "cluster.sharedStorage.fsxLustre", "mixes the keys"),
    ((fsx(fileSystemId="fs-0123456789abcdef0"),),
     "cluster.sharedStorage.fsxLustre", "without dnsName, mountName"),
    ((fsx(**{**EXISTING_FSX, "fileSystemId": "fs-xyz"}),),
     "cluster.sharedStorage.fsxLustre.fileSystemId", "is not an FSx file system id"),
    ((fsx(**EXISTING_FSX),), "cluster.sharedStorage.fsxLustre.fileSystemId",
     "names an existing file system for a cluster hyperpod-gov creates"),
    ((existing, fsx(**FSX)), "cluster.sharedStorage.fsxLustre.storageCapacityGiB",
     "would create a file system for an existing cluster"),
    ((dedicated("nobody"),), "cluster.instanceGroups[2].dedicatedTo", "names no team of the spec"),
    ((dedicated("team-b"), quota_b(1)), "teams[1].quota[0]",
     "holds 1 accelerators of ml.g5.8xlarge, less than the 2 of the groups dedicated to team-b"),
    ((dedicated("team-a", itype="ml.g5.8xlarge"),), "teams[0].quota",
     "holds 0 accelerators of ml.g5.8xlarge"),
    ((dedicated("team-a", count=1, itype="ml.p5.48xlarge"),), "teams[0].sharing.strategy",
     "lends team-a's idle ml.p5.48xlarge capacity"),
    ((lambda d: d["cluster"]["instanceGroups"][0].__setitem__("labels", {"hyperpod-gov.io/dedicated": "x"}),),
     "cluster.instanceGroups[0].labels", "set dedicatedTo: <team> on the group instead"),
    ((lambda d: d["cluster"]["instanceGroups"][0].__setitem__(
        "taints", [{"key": "hyperpod-gov.io/dedicated", "value": "x", "effect": "NoSchedule"}]),),
     "cluster.instanceGroups[0].taints[0].key", "set dedicatedTo: <team> on the group instead"),
], ids=["capacity-step", "capacity-min", "throughput-p2", "throughput-p1", "throughput-missing", "scratch",
        "mixed", "existing-incomplete", "bad-id", "existing-on-created", "created-on-existing", "unknown-team",
        "quota-short", "no-quota", "lends-in-task-governance", "label-key", "taint-key"])
def test_refused(changes, path, words):
    found = [re.sub(r"\AHPG-[A-Z][0-9]{3} ", "", i) for i in errors(spec_with(*changes))]
    assert any(i.startswith(path + ":") and words in i for i in found), found


def test_kueue_mode_lets_a_dedicated_team_lend_its_other_capacity():
    data = spec_with(dedicated("team-a", count=1, itype="ml.p5.48xlarge"),
                     lambda d: d["scheduler"].__setitem__("mode", "kueue"))
    parse_spec(data, today=TODAY)  # team-a is LendAndBorrow: its dedicated flavor lends nothing


def test_a_teams_dedicated_flavors_count_against_kueues_flavor_limit():
    def types(d: dict) -> None:
        d["scheduler"]["mode"] = "kueue"
        d["cluster"]["instanceGroups"] = [{"name": f"g{i}", "instanceType": t, "count": 1} for i, t in enumerate(
            ("ml.g5.xlarge", "ml.g5.2xlarge", "ml.g5.4xlarge", "ml.g5.8xlarge", "ml.g5.12xlarge", "ml.g5.16xlarge",
             "ml.g5.24xlarge", "ml.g5.48xlarge", "ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.g6.xlarge", "ml.g6.2xlarge",
             "ml.g6.4xlarge", "ml.g6.8xlarge", "ml.g6.12xlarge", "ml.g6.16xlarge"))]
        d["cluster"]["instanceGroups"].append({"name": "b", "instanceType": "ml.g5.8xlarge", "count": 1,
                                               "dedicatedTo": "team-b"})
        d["teams"][0]["quota"] = [{"instanceType": "ml.p5.48xlarge", "accelerators": 8}]
        d["teams"][1]["quota"] = [{"instanceType": "ml.g5.8xlarge", "count": 1}]
    found = errors(spec_with(types))
    assert any("HPG-Q005 cluster.instanceGroups: use 16 instance types (and a team's dedicated groups add 1 "
               "flavors to its queue)" in i for i in found), found
