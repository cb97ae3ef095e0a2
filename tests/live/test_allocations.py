"""drift and import with every allocation kind: a round trip shows no drift, each single change one item."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from hyperpod_gov.live import run_drift, run_import
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import load_spec
from tests.conftest import TODAY
from tests.plan.test_allocations import allocation_spec

from .conftest import Aws, drift_args, import_args, queue_drift, queue_import
from .fake_aws import FakeCluster, cluster_from_plan

GOVERNANCE = {"ComputeQuota", "ClusterSchedulerConfig"}


@pytest.fixture
def allocation_file(tmp_path: Path) -> Path:
    """Partitions, vCPU + memory, an absolute borrow limit, a paused team and no idle sharing."""
    path = tmp_path / "allocations.yaml"
    path.write_text(yaml.safe_dump(allocation_spec("task-governance", idleResourceSharing=False), sort_keys=False))
    return path


def drift_items(path: Path, fake: FakeCluster, capsys) -> list[dict[str, Any]]:
    spec = load_spec(path, today=TODAY)
    with Aws() as aws:
        queue_drift(aws, spec, build_plan(spec), fake)
        run_drift(drift_args(str(path), "--format", "json"), clients=aws.factory)
        aws.assert_all_used()
    return json.loads(capsys.readouterr().out)["drift"]


def deployed(path: Path) -> FakeCluster:
    return cluster_from_plan(build_plan(load_spec(path, today=TODAY)))


def test_a_cluster_deployed_with_every_allocation_kind_shows_no_drift(allocation_file, capsys):
    assert drift_items(allocation_file, deployed(allocation_file), capsys) == []


def _policy(fake: FakeCluster) -> dict[str, Any]:
    return fake.policies[0]["SchedulerConfig"]


def _sharing(fake: FakeCluster, team: str) -> dict[str, Any]:
    return fake.quota(team)["ComputeQuotaConfig"]["ResourceSharingConfig"]


def _resources(fake: FakeCluster, team: str) -> list[dict[str, Any]]:
    return fake.quota(team)["ComputeQuotaConfig"]["ComputeQuotaResources"]


CHANGES: list[tuple[str, Callable[[FakeCluster], None], tuple[str, str, str, Any, Any]]] = [
    ("idle sharing switched back on", lambda f: _policy(f).update(IdleResourceSharing="Enabled"),
     ("ClusterSchedulerConfig", "acme-policy", "SchedulerConfig.IdleResourceSharing", "Disabled", "Enabled")),
    ("idle sharing setting dropped (service default: Enabled)", lambda f: _policy(f).pop("IdleResourceSharing"),
     ("ClusterSchedulerConfig", "acme-policy", "SchedulerConfig.IdleResourceSharing", "Disabled", "Enabled")),
    ("paused team's quota enabled", lambda f: f.quota("team-b").update(ActivationState="Enabled"),
     ("ComputeQuota", "team-b", "ActivationState", "Disabled", "Enabled")),
    # One member of a keyed item differs: named down to the member, as for ComputeQuotaResources.
    ("absolute borrow limit raised", lambda f: _sharing(f, "team-a")["AbsoluteBorrowLimits"][0].update(Count=3),
     ("ComputeQuota", "team-a", "ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits[ml.g5.8xlarge].Count",
      1, 3)),
    ("absolute borrow limit removed", lambda f: _sharing(f, "team-a").pop("AbsoluteBorrowLimits"),
     ("ComputeQuota", "team-a", "ComputeQuotaConfig.ResourceSharingConfig.AbsoluteBorrowLimits[ml.g5.8xlarge]",
      {"Count": 1}, None)),
    ("partitions changed", lambda f: _resources(f, "team-a")[0]["AcceleratorPartition"].update(Count=14),
     ("ComputeQuota", "team-a", "ComputeQuotaConfig.ComputeQuotaResources[ml.p5.48xlarge].AcceleratorPartition",
      {"Count": 56, "Type": "mig-1g.10gb"}, {"Count": 14, "Type": "mig-1g.10gb"})),
    ("memory changed", lambda f: _resources(f, "team-b")[1].update(MemoryInGiB=64.0),
     ("ComputeQuota", "team-b", "ComputeQuotaConfig.ComputeQuotaResources[ml.m5.2xlarge].MemoryInGiB", 32, 64.0)),
]


@pytest.mark.parametrize("change, item", [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES])
def test_each_allocation_change_is_one_drift_item(allocation_file, change, item, capsys):
    fake = deployed(allocation_file)
    change(fake)
    items = drift_items(allocation_file, fake, capsys)
    assert [(i["kind"], i["name"], i["field"], i["expected"], i["actual"]) for i in items] == [item]


def test_import_writes_every_allocation_kind_and_round_trips(allocation_file, tmp_path, capsys):
    fake = deployed(allocation_file)
    out = tmp_path / "imported.yaml"
    with Aws() as aws:
        queue_import(aws, fake)
        code = run_import(import_args("--cluster-name", fake.name, "--out", str(out)), clients=aws.factory)
        aws.assert_all_used()
    err = capsys.readouterr().err
    assert code == 0, err
    text = out.read_text()
    for line in [
        "idleResourceSharing: false",
        "mig: {profile: mig-1g.10gb}  # guessed: the compute quotas allocate mig-1g.10gb partitions of this type",
        "- {instanceType: ml.p5.48xlarge, partitions: {profile: mig-1g.10gb, count: 56}}",
        "- {instanceType: ml.m5.2xlarge, vcpu: 8, memoryGib: 32}",
        "sharing: {strategy: LendAndBorrow, absoluteBorrowLimits: [{instanceType: ml.g5.8xlarge, count: 1}], "
        "borrowLimitPercent: 50}",
        "active: false  # the quota is Disabled on the cluster: the team is paused",
    ]:
        assert line in text, line
    back = load_spec(out, today=TODAY)
    assert not back.scheduler.idle_resource_sharing
    assert [t.active for t in back.teams] == [True, False]
    assert [i for i in drift_items(out, fake, capsys) if i["kind"] in GOVERNANCE] == []
