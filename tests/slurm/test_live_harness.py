"""The harness itself: the daemons answer in the cluster's network namespace, whose loopback routes acknowledge at
once, and the machine's own loopback is left as it was."""

from __future__ import annotations

import subprocess

import pytest


def _local_routes(prefix: list[str]) -> dict[str, str]:
    out = subprocess.run([*prefix, "ip", "route", "show", "table", "local"], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[1]: line for line in out.splitlines() if line.startswith("local ")}


@pytest.fixture
def in_namespace(slurm_cluster):
    if slurm_cluster.no_netns:  # the live tests still run, on the machine's loopback
        pytest.skip(f"no network namespace for the cluster here: {slurm_cluster.no_netns}")
    return slurm_cluster


def test_the_cluster_runs_in_a_namespace_whose_loopback_routes_carry_quickack(in_namespace):
    slurm_cluster = in_namespace
    inside = _local_routes(slurm_cluster.in_netns)
    assert "quickack 1" in inside["127.0.0.1"] and "quickack 1" in inside["127.0.0.0/8"]
    assert all("quickack" not in line for line in _local_routes([]).values())  # the machine's are untouched
    assert slurm_cluster.run("scontrol", "ping").check().stdout.count("UP") == 1


def test_the_daemons_are_not_reachable_from_the_machines_loopback(in_namespace):
    slurm_cluster = in_namespace
    port = next(line.split("=", 1)[1] for line in slurm_cluster.conf.read_text().splitlines()
                if line.startswith("SlurmctldPort="))
    inside = slurm_cluster.run("bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{port}")
    outside = subprocess.run(["bash", "-c", f"exec 3<>/dev/tcp/127.0.0.1/{port}"], capture_output=True)
    assert inside.ok and outside.returncode != 0
