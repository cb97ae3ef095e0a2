"""A fleet's contracts and review page: each team's allocation per cluster and in total, and its dispatch."""

from __future__ import annotations

import pytest
import yaml

from hyperpod_gov.contracts.fleet import FLEET_RECORDS, render_fleet_records, write_fleet_records
from hyperpod_gov.plan.fleet import build_fleet
from hyperpod_gov.spec.fleet import load_fleet
from tests.conftest import EXAMPLES

FLEET = EXAMPLES / "fleet.yaml"


def _fleet(data, tmp_path):
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return build_fleet(load_fleet(path))


@pytest.fixture(scope="module")
def example():
    return build_fleet(load_fleet(FLEET))


def _rows(page: str, heading: str) -> list[list[str]]:
    section = page.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith("| Cluster |") and not line.startswith("| Instance type |")]


def test_a_teams_fleet_record_states_its_allocation_per_cluster_and_in_total(example):
    page = render_fleet_records(example)["research.md"]
    assert _rows(page, "Allocation per cluster") == [
        ["use1-train", "111111111111 / us-east-1", "ml.p5.48xlarge", "16 accelerators (nvidia.com/gpu)"],
        ["usw2-train", "111111111111 / us-west-2", "ml.p5.48xlarge", "8 accelerators (nvidia.com/gpu)"],
        ["use1-mgr", "111111111111 / us-east-1", "-", "nothing owned (the dispatch manager)"],
    ]
    assert _rows(page, "In total") == [["ml.p5.48xlarge", "24 accelerators (nvidia.com/gpu)"]]
    assert "Accelerators in all: 24 nvidia.com/gpu." in page
    assert "on 3 cluster(s): `use1-train`, `usw2-train`, `use1-mgr`" in page


def test_the_total_follows_each_clusters_quota(fleet_data, tmp_path):
    team = next(t for t in fleet_data["teams"] if t["name"] == "research")
    del team["quota"]["usw2-train"]
    page = render_fleet_records(_fleet(fleet_data, tmp_path))["research.md"]
    assert _rows(page, "In total") == [["ml.p5.48xlarge", "16 accelerators (nvidia.com/gpu)"]]
    assert "Accelerators in all: 16 nvidia.com/gpu." in page
    assert "on 2 cluster(s): `use1-train`, `use1-mgr`" in page
    assert "the first of `use1-train` that can admit" in page


def test_a_dispatched_team_is_told_its_fleet_queue_on_the_manager(example):
    records = render_fleet_records(example)
    assert ("submit to LocalQueue `hyperpod-ns-research-fleet` in namespace `hyperpod-ns-research` on the manager "
            "`use1-mgr` (ClusterQueue `research-fleet`") in records["research.md"]
    assert "the first of `use1-train`, `usw2-train` that can admit" in records["applied.md"]
    assert "Not dispatched: the team has quota on none of the workers" in records["hpc.md"]


def test_without_dispatch_no_team_is_dispatched(fleet_data, tmp_path):
    del fleet_data["fleet"]
    records = render_fleet_records(_fleet(fleet_data, tmp_path))
    assert all("Not dispatched: the fleet has no dispatch" in page for page in records.values())
    assert "-fleet`" not in "".join(records.values())


def test_fleet_records_are_written_and_stale_ones_removed(example, tmp_path):
    stale = tmp_path / FLEET_RECORDS / "gone.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("old")
    written = write_fleet_records(example, tmp_path)
    assert [p.name for p in written] == ["applied.md", "hpc.md", "research.md"]
    assert not stale.exists()


def test_synth_of_a_fleet_writes_the_fleet_records_beside_each_clusters(tmp_path):
    from hyperpod_gov.cli import main

    out = tmp_path / "out"
    assert main(["synth", str(FLEET), "--out", str(out)]) == 0
    contracts = out / "contracts"
    assert sorted(p.name for p in contracts.iterdir()) == [FLEET_RECORDS, "use1-hpc", "use1-mgr", "use1-train",
                                                          "usw2-train"]
    assert (contracts / FLEET_RECORDS / "research.md").read_text() == render_fleet_records(
        build_fleet(load_fleet(FLEET)))["research.md"]
    # every cluster's own record the fleet record links to exists
    assert (contracts / "use1-mgr" / "research.md").is_file()
