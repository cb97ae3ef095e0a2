"""The fleet rules (HPG-F001..F008): each passes on the example fleet and fails on the fleet that breaks it."""

from __future__ import annotations

import pytest

from hyperpod_gov.plan.fleet import build_fleet
from hyperpod_gov.plan.fleet_rules import FLEET_RULES, all_fleet_rules
from hyperpod_gov.spec import SpecError
from hyperpod_gov.spec.fleet import parse_fleet
from hyperpod_gov.spec.fleet_document import MAX_WORKERS
from hyperpod_gov.spec.fleet_rules import FLEET_DOCUMENT_RULES
from tests.conftest import ROOT, TODAY
from tests.fleet.conftest import cluster_index


def _errors(data):
    """Every error of the fleet: its spec, then its plans and the fleet rules."""
    try:
        build_fleet(parse_fleet(data, today=TODAY, base_dir=ROOT / "examples"), today=TODAY)
    except SpecError as exc:
        return list(exc.issues)
    return []


def _ids(data):
    return sorted({i.rule for i in _errors(data) if i.rule and i.rule.startswith("HPG-F")})


def test_the_example_fleet_passes_every_fleet_rule(fleet_data):
    assert _errors(fleet_data) == []


def test_every_fleet_rule_has_its_own_id_and_is_an_error():
    ids = [r.id for r in all_fleet_rules()]
    assert ids == [f"HPG-F{n:03d}" for n in range(1, 13)]
    assert {r.level for r in all_fleet_rules()} == {"error"}


def test_two_clusters_of_one_name_break_f001(fleet_data):
    fleet_data["clusters"][2]["name"] = "use1-train"
    fleet_data["fleet"]["dispatch"]["manager"] = "use1-train"
    fleet_data["fleet"]["dispatch"]["workers"] = ["usw2-train"]
    (issue,) = [i for i in _errors(fleet_data) if i.rule == "HPG-F001"]
    assert issue.path == "clusters[2].name" and "clusters[0]" in issue.problem


def test_a_member_name_over_twenty_characters_breaks_f002(fleet_data):
    fleet_data["name"] = "acme-research"  # acme-research-use1-train: 24 characters
    issues = [i for i in _errors(fleet_data) if i.rule == "HPG-F002"]
    assert issues and issues[0].path == "clusters[0].name" and "24 characters" in issues[0].problem
    assert "at most 6 characters" in issues[0].fix


@pytest.mark.parametrize("where, value, path", [
    ("manager", "use1-trian", "fleet.dispatch.manager"),
    ("workers", ["use1-train", "usw9-train"], "fleet.dispatch.workers[1]"),
    ("workers", ["use1-train", "use1-train"], "fleet.dispatch.workers[1]"),
])
def test_dispatch_naming_no_cluster_or_a_worker_twice_breaks_f003(fleet_data, where, value, path):
    fleet_data["fleet"]["dispatch"][where] = value
    issues = [i for i in _errors(fleet_data) if i.rule == "HPG-F003"]
    assert [i.path for i in issues] == [path]


def test_the_manager_as_its_own_worker_breaks_f004(fleet_data):
    fleet_data["fleet"]["dispatch"] = {"manager": "use1-train", "workers": ["use1-train", "usw2-train"]}
    (issue,) = _errors(fleet_data)
    assert issue.rule == "HPG-F004" and issue.path == "fleet.dispatch.workers[0]"
    assert "manager cluster as one of the workers for itself" in issue.problem


def test_more_than_twenty_workers_breaks_f005(fleet_data):
    fleet_data["fleet"]["dispatch"]["workers"] = ["use1-train", "usw2-train"] * 11
    assert "HPG-F005" in _ids(fleet_data)
    fleet_data["fleet"]["dispatch"]["workers"] = ["use1-train", "usw2-train"]
    assert MAX_WORKERS == 20 and _ids(fleet_data) == []


def test_a_team_with_other_priority_classes_on_one_cluster_breaks_f006(fleet_data):
    i = cluster_index(fleet_data, "usw2-train")
    fleet_data["clusters"][i]["scheduler"] = {"mode": "kueue", "priorityClasses": [{"name": "training", "weight": 60}]}
    issues = _errors(fleet_data)
    assert [(i.rule, i.path) for i in issues] == [("HPG-F006", "teams[0]"), ("HPG-F006", "teams[1]")]
    assert "priority classes" in issues[0].problem
    assert "use1-train: (('training', 'training-priority', 50),)" in issues[0].problem
    assert "usw2-train: (('training', 'training-priority', 60),)" in issues[0].problem


def test_a_team_with_other_viewers_on_one_cluster_breaks_f006(fleet_data):
    # an environment-style override cannot reach one member's team, so compare two plans by hand
    fleet = parse_fleet(fleet_data, today=TODAY, base_dir=ROOT / "examples")
    plans = build_fleet(fleet, today=TODAY).plans
    from dataclasses import replace

    usw2 = plans["usw2-train"]
    teams = tuple(replace(t, viewers=("arn:aws:iam::111111111111:role/Other",)) if t.name == "research" else t
                  for t in usw2.teams)
    plans = {**plans, "usw2-train": replace(usw2, teams=teams)}
    (issue,) = FLEET_RULES.run(fleet, plans)
    assert issue.rule == "HPG-F006" and "different viewers" in issue.problem


def test_a_task_governance_worker_breaks_f007_with_the_reason(fleet_data):
    i = cluster_index(fleet_data, "usw2-train")
    fleet_data["clusters"][i]["scheduler"] = {"mode": "task-governance",
                                              "priorityClasses": [{"name": "training", "weight": 50}]}
    issues = [x for x in _errors(fleet_data) if x.rule == "HPG-F007"]
    assert [x.path for x in issues] == ["fleet.dispatch.workers[1]"]
    assert "runs Kueue itself" in issues[0].problem and "no MultiKueue configuration" in issues[0].problem
    assert f"clusters[{i}].scheduler" in issues[0].fix


def test_a_slurm_cluster_in_dispatch_breaks_f008(fleet_data):
    fleet_data["fleet"]["dispatch"]["workers"] = ["use1-train", "use1-hpc"]
    issues = _errors(fleet_data)
    assert [(x.rule, x.path) for x in issues] == [("HPG-F008", "fleet.dispatch.workers[1]")]


def test_a_fleet_without_dispatch_needs_no_kueue(fleet_data):
    del fleet_data["fleet"]
    for c in fleet_data["clusters"]:
        if c["name"] != "use1-hpc":
            c["scheduler"] = {"mode": "task-governance", "priorityClasses": [{"name": "training", "weight": 50}]}
    assert _ids(fleet_data) == []


def test_docs_rules_page_lists_every_fleet_rule_as_the_registry_says():
    page = (ROOT / "docs" / "rules.md").read_text()
    begin, end = "<!-- fleet-rules:begin (generated from the fleet rules) -->\n", "<!-- fleet-rules:end -->"
    listed = page.split(begin, 1)[1].split(end, 1)[0]
    assert listed == all_fleet_rules().markdown(), (
        "docs/rules.md's fleet section is out of date: replace the text between the fleet-rules markers with\n"
        "  .venv/bin/python -c 'from hyperpod_gov.plan.fleet_rules import all_fleet_rules; "
        "print(all_fleet_rules().markdown(), end=\"\")'")
    assert FLEET_DOCUMENT_RULES.rules[0].id == "HPG-F001"


def test_a_stack_name_two_members_share_breaks_f009(fleet_data):
    # acme-a's consumer stacks and acme-a-x's... built by hand: two plans whose layouts name one stack
    fleet = parse_fleet(fleet_data, today=TODAY, base_dir=ROOT / "examples")
    plans = build_fleet(fleet, today=TODAY).plans
    from dataclasses import replace

    usw2 = plans["usw2-train"]
    taken = plans["use1-train"].stacks.capacity
    plans = {**plans, "usw2-train": replace(usw2, stacks=replace(usw2.stacks, capacity=taken))}
    issues = [i for i in FLEET_RULES.run(fleet, plans) if i.rule == "HPG-F009"]
    assert [(i.path, i.value) for i in issues] == [("clusters[1].name", "usw2-train")]
    assert "'acme-use1-train-capacity'" in issues[0].problem


def test_the_example_fleets_stack_names_are_all_different(fleet_data):
    plans = build_fleet(parse_fleet(fleet_data, today=TODAY, base_dir=ROOT / "examples"), today=TODAY).plans
    names = [n for p in plans.values() for n in p.stacks.all_names]
    assert len(names) == len(set(names))


def test_two_clusters_of_one_name_in_one_region_break_f010(fleet_data):
    fleet_data["clusters"][2]["cluster"]["name"] = "acme-use1-train"  # use1-mgr, also in us-east-1
    issues = _errors(fleet_data)
    assert [(i.rule, i.path) for i in issues] == [("HPG-F010", "clusters[2].cluster.name")]


def test_one_cluster_name_in_two_regions_passes_f010(fleet_data):
    fleet_data["clusters"][1]["cluster"]["name"] = "acme-use1-train"  # usw2-train, in us-west-2
    assert _errors(fleet_data) == []
