"""`explain`'s resource counts are the synthesized templates', per CloudFormation type (issue 58: it counted 7 SNS
topics where the enterprise templates hold 10, and the cost page 3 KMS keys where they hold 4)."""

from __future__ import annotations

import copy
import datetime as dt
import re
from collections import Counter
from typing import Any

import pytest

from hyperpod_gov.cost import BILLED_TYPES, UNBILLED_TYPES, resource_counts
from hyperpod_gov.explain import explain
from hyperpod_gov.plan import build_plan

DAY = dt.date(2026, 12, 7)
COUNT = re.compile(r"^  (AWS::[A-Za-z0-9]+::[A-Za-z0-9]+): (\d+)$", re.M)


def synthesized_counts(templates: dict[str, dict[str, Any]]) -> Counter[str]:
    """Resources per CloudFormation type over every template of an app."""
    return Counter(r["Type"] for t in templates.values() for r in t.get("Resources", {}).values())


def explained_counts(text: str) -> dict[str, int]:
    """The per-type counts `explain` prints under "Resources created"."""
    section = text[text.index("Resources created"):]
    return {t: int(n) for t, n in COUNT.findall(section)}


def mismatches(reported: dict[str, int], templates: dict[str, dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Billed types whose reported count differs from the templates' (reported, synthesized); zeros compared too."""
    synthesized = synthesized_counts(templates)
    return {t: (reported.get(t, 0), synthesized[t]) for t in BILLED_TYPES if reported.get(t, 0) != synthesized[t]}


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_explain_counts_every_billed_type_as_synthesized(request, example):
    synthesized = request.getfixturevalue(example)
    plan = build_plan(synthesized.spec)
    reported = explained_counts(explain(plan, today=DAY))
    assert reported == resource_counts(plan)
    assert mismatches(reported, synthesized.templates) == {}


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_every_synthesized_type_is_counted_or_known_to_be_unbilled(request, example):
    """A billed resource added to the stacks fails here until hyperpod_gov/cost/inventory.py counts it."""
    types = set(synthesized_counts(request.getfixturevalue(example).templates))
    unknown = {t for t in types - set(BILLED_TYPES) - UNBILLED_TYPES if not t.startswith("Custom::")}
    assert unknown == set()


def test_the_enterprise_example_holds_ten_topics_and_four_keys(enterprise):
    """Hand-checked in the templates: the platform's topic, and per team stack a topic for each owner alarmed from it
    (finance@ in four stacks); the EKS secrets, flow logs, alarm topics and applied-research bucket keys."""
    n = synthesized_counts(enterprise.templates)
    assert (n["AWS::SNS::Topic"], n["AWS::KMS::Key"]) == (10, 4)
    plan = build_plan(enterprise.spec)
    assert plan.monitoring.counts.topics == 7  # owners, not topics: what explain printed before
    assert resource_counts(plan)["AWS::SNS::Topic"] == 10


def test_a_count_off_by_one_fails_the_comparison(enterprise):
    plan = build_plan(enterprise.spec)
    reported = explained_counts(explain(plan, today=DAY))
    templates = copy.deepcopy(enterprise.templates)
    stack = next(name for name, t in templates.items()
                 if any(r["Type"] == "AWS::SNS::Topic" for r in t["Resources"].values()) and "teams" in name)
    resources = templates[stack]["Resources"]
    del resources[next(k for k, r in resources.items() if r["Type"] == "AWS::SNS::Topic")]
    assert mismatches(reported, templates) == {"AWS::SNS::Topic": (10, 9)}
    assert mismatches({**reported, "AWS::KMS::Key": 3}, enterprise.templates) == {"AWS::KMS::Key": (3, 4)}


def test_an_unbilled_type_in_the_billed_list_is_refused():
    assert not set(BILLED_TYPES) & UNBILLED_TYPES


@pytest.fixture(scope="module")
def other_examples(tmp_path_factory):
    """The governance-only example (an existing cluster in us-west-2: the SDK-backed task governance provider in
    every stack holding a policy or quota) and both Slurm examples (a created FSx file system), without cdk-nag."""
    from hyperpod_gov.spec import load_spec
    from tests.conftest import EXAMPLES, TODAY
    from tests.synth_helpers import synthesize

    return {name: synthesize(load_spec(EXAMPLES / f"{name}.yaml", today=TODAY), tmp_path_factory.mktemp(name),
                             nag=False)
            for name in ("existing", "startup-slurm", "enterprise-slurm")}


@pytest.mark.parametrize("example", ["existing", "startup-slurm", "enterprise-slurm"])
def test_the_other_examples_are_counted_as_synthesized(other_examples, example):
    synthesized = other_examples[example]
    plan = build_plan(synthesized.spec)
    reported = explained_counts(explain(plan, today=DAY))
    assert reported == resource_counts(plan)
    assert mismatches(reported, synthesized.templates) == {}
    types = set(synthesized_counts(synthesized.templates))
    assert {t for t in types - set(BILLED_TYPES) - UNBILLED_TYPES if not t.startswith("Custom::")} == set()


@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_explain_json_carries_the_counts_and_the_support_tier(request, example):
    """`explain --format json` says what the text says (issue 58): the counts per type and the EKS support tier."""
    from hyperpod_gov.explain import explain_json

    plan = build_plan(request.getfixturevalue(example).spec)
    doc = explain_json(plan, today=DAY)
    assert doc["resources"] == resource_counts(plan) == explained_counts(explain(plan, today=DAY))
    assert doc["cost"]["kubernetesSupport"] == {"version": "1.33", "tier": "extended", "until": "2027-07-29",
                                                "controlPlaneUsdPerHour": 0.6}
    assert doc["cost"]["monthlyUsd"] == round(sum(line["monthlyUsd"] or 0 for line in doc["cost"]["lines"]), 2)
    assert doc["cost"]["day"] == "2026-12-07"
