"""scheduler.gangScheduling and scheduler.topology (issue 56): accepted and refused, each refusal with its path,
value and fix; the mode rules HPG-Q011..Q013 and the Slurm refusal (HPG-S003)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from hyperpod_gov.spec import SpecError, parse_spec
from hyperpod_gov.spec.loader import spec_warnings
from hyperpod_gov.spec.scheduler import duration_seconds
from tests.conftest import BASE, TODAY, as_existing
from tests.slurm.spec_fixtures import slurm_base

L1, L2, L3 = (f"topology.k8s.aws/network-node-layer-{n}" for n in (1, 2, 3))
HOST = "kubernetes.io/hostname"
ISSUE_56 = {  # the issue's YAML
    "gangScheduling": {"timeout": "10m", "recoveryTimeout": "3m",
                       "requeuing": {"backoffLimitCount": 5, "backoffBaseSeconds": 60}},
    "topology": {"levels": [L1, L2, HOST]},
}


def spec(mode: str = "task-governance", **scheduler: Any) -> dict:
    data = copy.deepcopy(BASE)
    data["scheduler"].update(mode=mode, **copy.deepcopy(scheduler))
    return data


def problems(d: dict) -> list[str]:
    with pytest.raises(SpecError) as info:
        parse_spec(d, today=TODAY)
    return [str(i) for i in info.value.issues]


def warnings(d: dict) -> list[str]:
    return [str(w) for w in spec_warnings(parse_spec(d, today=TODAY), today=TODAY)]


def test_the_issues_yaml_is_accepted_with_the_defaults_filled_in():
    s = parse_spec(spec("kueue", **ISSUE_56), today=TODAY).scheduler
    g = s.gang_scheduling
    assert (g.timeout, g.recovery_timeout, g.block_admission) == ("10m", "3m", False)
    r = g.requeuing
    assert (r.timestamp, r.backoff_limit_count, r.backoff_base_seconds, r.backoff_max_seconds) == \
        ("Eviction", 5, 60, 3600)
    assert s.topology.levels == (L1, L2, HOST)


def test_both_keys_are_absent_by_default():
    s = parse_spec(spec(), today=TODAY).scheduler
    assert s.gang_scheduling is None and s.topology is None


@pytest.mark.parametrize("text, seconds", [("10m", 600), ("90s", 90), ("1h30m", 5400), ("1.5h", 5400), ("0s", 0)])
def test_go_durations_are_read_as_kueue_reads_them(text, seconds):
    assert duration_seconds(text) == seconds


@pytest.mark.parametrize("gang, expected", [
    ({"timeout": "10 minutes"}, "scheduler.gangScheduling.timeout: is not a Go duration ('10 minutes'); write a "
     "number and a unit (h, m or s), e.g. '10m'"),
    ({"timeout": "10"}, "scheduler.gangScheduling.timeout: is not a Go duration ('10')"),
    ({"timeout": "0s"}, "scheduler.gangScheduling.timeout: is zero: Kueue needs a timeout to wait for ('0s'); use at "
     "least '1s'"),
    ({"timeout": "-5m"}, "scheduler.gangScheduling.timeout: is not a Go duration ('-5m')"),
    ({"timeout": "200h"}, "scheduler.gangScheduling.timeout: is longer than a week (168h) ('200h'); use at most "
     "'168h'"),
    ({"recoveryTimeout": "3 m"}, "scheduler.gangScheduling.recoveryTimeout: is not a Go duration ('3 m')"),
    ({"requeuing": {"backoffLimitCount": -1}}, "scheduler.gangScheduling.requeuing.backoffLimitCount:"),
    ({"requeuing": {"backoffBaseSeconds": 0}}, "scheduler.gangScheduling.requeuing.backoffBaseSeconds:"),
    ({"requeuing": {"backoffBaseSeconds": 600, "backoffMaxSeconds": 300}},
     "scheduler.gangScheduling.requeuing: backoffMaxSeconds (300) is shorter than backoffBaseSeconds (600): every "
     "delay would be cut to the maximum (a mapping with keys backoffBaseSeconds, backoffMaxSeconds); raise "
     "backoffMaxSeconds to at least 600"),
    ({"requeuing": {"timestamp": "Admission"}}, "scheduler.gangScheduling.requeuing.timestamp:"),
    ({"blockAdmision": True}, "scheduler.gangScheduling.blockAdmision:"),
], ids=["words", "no_unit", "zero", "negative", "over_a_week", "recovery_words", "negative_limit", "zero_base",
        "max_below_base", "unknown_timestamp", "misspelt_key"])
def test_a_bad_gang_scheduling_value_is_refused_with_path_value_and_fix(gang, expected):
    found = problems(spec("kueue", gangScheduling=gang))
    assert any(m.startswith(expected) or expected in m for m in found), "\n".join(found)


def test_a_recovery_timeout_of_zero_turns_the_check_off_and_is_accepted():
    s = parse_spec(spec("kueue", gangScheduling={"recoveryTimeout": "0s"}), today=TODAY)
    assert s.scheduler.gang_scheduling.recovery_timeout == "0s"


@pytest.mark.parametrize("levels, expected", [
    ([L1, "topology.k8s.aws/network-node-layer1"], "scheduler.topology.levels: names "
     "'topology.k8s.aws/network-node-layer1', which is not a label HyperPod puts on nodes (a list of 2 entries); did "
     "you mean 'topology.k8s.aws/network-node-layer-1'?"),
    (["topology.kubernetes.io/zone"], "scheduler.topology.levels: names 'topology.kubernetes.io/zone', which is not "
     "a label HyperPod puts on nodes"),
    ([L1, L1], f"scheduler.topology.levels: names '{L1}' twice (a list of 2 entries); list each level once"),
    ([HOST, L3], "scheduler.topology.levels: is not ordered from the outermost level to the innermost"),
    ([L2, L1], f"write them as [{L1}, {L2}]"),
    ([], "scheduler.topology.levels:"),
], ids=["misspelt", "unknown", "twice", "hostname_first", "inner_first", "empty"])
def test_a_bad_topology_is_refused_with_path_value_and_fix(levels, expected):
    found = problems(spec("kueue", topology={"levels": levels}))
    assert any(expected in m for m in found), "\n".join(found)


@pytest.mark.parametrize("levels", [[HOST], [L3], [L1, L2, L3, HOST], [L2, HOST]])
def test_levels_outermost_first_are_accepted(levels):
    assert parse_spec(spec("kueue", topology={"levels": levels}), today=TODAY).scheduler.topology.levels == \
        tuple(levels)


# --- the mode rules --------------------------------------------------------------------------------------------


def test_topology_in_task_governance_mode_needs_addon_v1_2_2():
    data = spec(topology={"levels": [L3, HOST]})
    data["cluster"]["operators"] = []  # the training operator needs v1.3.0 (HPG-D005): not this rule's concern
    data["cluster"]["addonVersions"] = {"taskGovernance": "v1.2.1-eksbuild.1"}
    found = problems(data)
    assert any(m.startswith("HPG-Q011 cluster.addonVersions.taskGovernance: is older than v1.2.2-eksbuild.1, which "
                            "topology-aware scheduling needs") and "use v1.2.2-eksbuild.1 or later" in m
               for m in found), "\n".join(found)
    data["cluster"]["addonVersions"] = {"taskGovernance": "v1.2.2-eksbuild.1"}
    parse_spec(data, today=TODAY)  # the first version that labels nodes: accepted


def test_the_pinned_task_governance_addon_supports_topology():
    """The default pin (v1.6.0-eksbuild.1) is newer than v1.2.2: no HPG-Q011."""
    assert not [w for w in warnings(spec(topology={"levels": [L3, HOST]})) if "HPG-Q011" in w]


def test_topology_in_kueue_mode_needs_no_task_governance_addon():
    data = spec("kueue", topology={"levels": [L3, HOST]})
    data["cluster"]["addonVersions"] = {"taskGovernance": "v1.2.1-eksbuild.1"}
    parse_spec(data, today=TODAY)


def test_gang_scheduling_in_task_governance_mode_is_a_warning_that_says_where_to_apply_it():
    (found,) = [w for w in warnings(spec(gangScheduling={"timeout": "10m"})) if "HPG-Q012" in w]
    assert found.startswith("HPG-Q012 scheduler.gangScheduling: is not deployed in task-governance mode")
    assert "sagemaker-hyperpod-eks-operate-console-ui-governance-tasks-gang-scheduling.html" in found
    assert "Policy management, Task governance, Actions, Configure gang scheduling" in found


def test_gang_scheduling_in_kueue_mode_is_deployed_so_no_warning():
    assert not [w for w in warnings(spec("kueue", gangScheduling={"timeout": "10m"})) if "HPG-Q012" in w]


@pytest.mark.parametrize("installs, warned", [(False, True), (True, False)])
def test_kueue_mode_on_an_existing_cluster_deploys_gang_scheduling_only_with_the_kueue_it_installs(installs, warned):
    data = as_existing(spec("kueue", gangScheduling={"timeout": "10m"}))
    data["cluster"]["existing"]["installs"] = {"scheduler": installs}
    found = [w for w in warnings(data) if "HPG-Q012" in w]
    assert bool(found) is warned
    if warned:
        assert found[0].startswith("HPG-Q012 scheduler.gangScheduling: is not deployed: the existing cluster runs its "
                                   "own Kueue")


def test_an_accelerated_type_without_topology_labels_is_a_warning():
    found = [w for w in warnings(spec("kueue", topology={"levels": [L3, HOST]})) if "HPG-Q013" in w]
    # ml.p5.48xlarge is on AWS's list; ml.g5.8xlarge is not
    assert [w.split(":")[0] for w in found] == ["HPG-Q013 cluster.instanceGroups[1].instanceType"]


def test_a_hostname_only_topology_needs_no_network_labels():
    assert not [w for w in warnings(spec("kueue", topology={"levels": [HOST]})) if "HPG-Q013" in w]


# --- Slurm ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key, value, instead", [
    ("gangScheduling", {"timeout": "10m"}, "slurmctld starts a job only once all its nodes are allocated"),
    ("topology", {"levels": [L3, HOST]}, "Slurm places jobs with its topology plugin"),
])
def test_a_slurm_cluster_refuses_the_scheduling_controls(key, value, instead):
    data = slurm_base()
    data.setdefault("scheduler", {})[key] = value
    found = problems(data)
    assert any(m.startswith(f"HPG-S003 scheduler.{key}: only applies to an EKS-orchestrated cluster; {instead}")
               and f"remove {key}" in m for m in found), "\n".join(found)
