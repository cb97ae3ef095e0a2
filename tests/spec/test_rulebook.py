"""The rule book: every spec rule registered with a unique id, level and explanation; a rule that raises is a
defect naming its id; warnings acknowledged by id with a reason."""

from __future__ import annotations

import copy
import inspect
import re

import pytest

from hyperpod_gov.spec import (
    RULES,
    GovernanceSpec,
    Rule,
    RuleBook,
    SpecError,
    SpecIssue,
    acknowledge,
    check_spec,
    parse_spec,
    rule,
    spec_review,
    spec_warnings,
)
from hyperpod_gov.spec import rules as rules_module
from hyperpod_gov.spec.acknowledgements import Acknowledgement
from hyperpod_gov.spec.errors import NO_VALUE
from tests.conftest import BASE, ROOT, TODAY

# BASE has no contracts and no dependencies chart: two HPG-C001 warnings (teams[0], teams[1]) and one HPG-D001.
CHART = {"oci": "oci://111111111111.dkr.ecr.us-east-1.amazonaws.com/hyperpod-dependencies", "version": "0.1.0"}
REASON = "pilot teams, contracts are being written with their owners"


def data(**top) -> dict:
    d = copy.deepcopy(BASE)
    for team in d["teams"]:  # HPG-A011 has its own tests: the findings here are the other rules'
        team["images"] = ["public.ecr.aws/docker/library/"]
    d.update(top)
    return d


def problems(d: dict, strict: bool = False) -> list[str]:
    with pytest.raises(SpecError) as info:
        parse_spec(d, today=TODAY, strict=strict)
    return [str(i) for i in info.value.issues]


# --- the registry ------------------------------------------------------------------------


def _rule_modules():
    """Every module of the rules package (hyperpod_gov/spec/rules/, one module per area of rule ids)."""
    import importlib
    import pkgutil

    return [importlib.import_module(f"{rules_module.__name__}.{m.name}")
            for m in pkgutil.iter_modules(rules_module.__path__)]


def test_every_rule_in_the_rules_package_is_registered():
    modules = _rule_modules()
    assert len(modules) >= 8, [m.__name__ for m in modules]
    defined = {f"{m.__name__}.{name}": value for m in modules for name, value in vars(m).items()
               if isinstance(value, Rule)}
    assert defined, "no @rule in hyperpod_gov/spec/rules/"
    missing = sorted(name for name, r in defined.items() if r not in RULES.rules)
    assert not missing, f"@rule functions not listed in RULES: {missing}"


def test_no_function_of_the_spec_and_today_in_the_rules_package_is_left_undecorated():
    """A plain ``def some_check(spec, today)`` would never run: it must be a @rule (and so in RULES)."""
    plain = sorted(
        f"{m.__name__}.{name}" for m in _rule_modules() for name, value in vars(m).items()
        if inspect.isfunction(value) and value.__module__ == m.__name__
        and [(n, p.kind) for n, p in inspect.signature(value).parameters.items()]
        == [("spec", inspect.Parameter.POSITIONAL_OR_KEYWORD), ("today", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    )
    assert not plain, f"rule functions without @rule: {plain}"


def test_rule_ids_are_unique_follow_the_scheme_and_run_in_id_order():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"HPG-[NIQAECDKPRSU][0-9]{3}", i) for i in ids), ids
    assert ids == sorted(ids)
    assert all(r.level in ("error", "warning") and r.explanation and "\n" not in r.explanation for r in RULES)


def test_a_rule_book_refuses_an_id_used_twice():
    first = rule("HPG-Q901", "error", "one")(lambda spec, today: ())
    second = rule("HPG-Q901", "warning", "two")(lambda spec, today: ())
    with pytest.raises(ValueError, match="HPG-Q901"):
        RuleBook("test", (first, second))


@pytest.mark.parametrize("rule_id", ["Q001", "HPG-Z001", "HPG-Q01", "hpg-q001"])
def test_a_rule_id_outside_the_scheme_is_refused(rule_id):
    with pytest.raises(ValueError, match="HPG-<area>"):
        rule(rule_id, "error", "a check")(lambda spec, today: ())


def test_the_kueue_flavor_limit_rule_is_registered():
    assert RULES.get("HPG-Q005") is rules_module.kueue_flavor_limit


def test_the_dependencies_chart_rule_covers_the_constructs_cdk_warning():
    from hyperpod_gov.constructs.hyperpod_cluster import WARN_NO_DEPENDENCIES_CHART

    assert RULES.get("HPG-D001").covers == (WARN_NO_DEPENDENCIES_CHART,)
    assert RULES.covered_warnings() == {WARN_NO_DEPENDENCIES_CHART}


def test_docs_rules_page_lists_every_rule_as_the_registry_says():
    page = (ROOT / "docs" / "rules.md").read_text()
    begin, end = "<!-- rules:begin (generated from RULES) -->\n", "<!-- rules:end -->"
    assert begin in page and end in page
    listed = page.split(begin, 1)[1].split(end, 1)[0]
    from hyperpod_gov.plan.invariants import INVARIANTS

    assert listed == (RULES + INVARIANTS).markdown(), (
        "docs/rules.md is out of date: replace the text between the markers with the output of\n"
        "  .venv/bin/python -c 'from hyperpod_gov.spec import RULES; from hyperpod_gov.plan.invariants import "
        "INVARIANTS; print((RULES + INVARIANTS).markdown(), end=\"\")'")


# --- the runner --------------------------------------------------------------------------


def test_every_finding_carries_its_rules_id_and_the_id_leads_the_message():
    d = data()
    d["teams"][1]["sharing"] = {"strategy": "DontLend", "borrowLimitPercent": 5}
    found = check_spec(GovernanceSpec.model_validate(d), today=TODAY)
    assert found and all(i.rule is not None and RULES.get(i.rule) is not None for i in found)
    assert all(i.severity == RULES.get(i.rule).level for i in found)
    assert any(str(i).startswith("HPG-Q003 teams[1].sharing.borrowLimitPercent: a DontLend team cannot borrow (5)")
               for i in found)


def test_the_runner_gives_a_finding_its_rules_level():
    @rule("HPG-Q902", "warning", "says error, is a warning")
    def loud(spec, today):
        yield SpecIssue("x", "is loud", NO_VALUE, "quieten it", severity="error")

    (issue,) = RuleBook("test", (loud,)).run(None, TODAY)
    assert (issue.rule, issue.severity) == ("HPG-Q902", "warning")


def test_a_rule_that_raises_is_one_defect_naming_its_id_and_the_other_rules_still_run():
    @rule("HPG-Q903", "error", "fails")
    def broken(spec, today):
        yield SpecIssue("teams[0]", "half a finding", NO_VALUE, "none")
        raise KeyError("teams")

    book = RuleBook("test", RULES.rules + (broken,))
    found = book.run(GovernanceSpec.model_validate(BASE), TODAY)
    defects = [i for i in found if i.rule == "HPG-Q903"]
    assert [str(i) for i in defects] == [
        "HPG-Q903 (rule HPG-Q903): rule HPG-Q903 (broken) threw KeyError: 'teams'; this is a defect in "
        "hyperpod-gov, not in the spec: report it with the spec that triggers it (the other rules ran; this one "
        "checked nothing)"]
    assert defects[0].severity == "error"
    assert {i.rule for i in found} >= {"HPG-C001", "HPG-D001"}  # the rules before and after it ran


def test_a_rule_that_yields_something_else_than_an_issue_is_a_defect():
    @rule("HPG-Q904", "warning", "yields text")
    def sloppy(spec, today):
        yield "teams[0]: something"

    (issue,) = RuleBook("test", (sloppy,)).run(None, TODAY)
    assert issue.severity == "error" and issue.path == "(rule HPG-Q904)"
    assert "threw TypeError: yielded str 'teams[0]: something', not a SpecIssue" in issue.problem


# --- rules without another test ----------------------------------------------------------

KUEUE_TYPES = ["ml.c5.large", "ml.c5.xlarge", "ml.c5.2xlarge", "ml.c5.4xlarge", "ml.c5.9xlarge", "ml.c5.12xlarge",
               "ml.c5.18xlarge", "ml.c5.24xlarge", "ml.c6i.large", "ml.c6i.xlarge", "ml.c6i.2xlarge",
               "ml.c6i.4xlarge", "ml.c6i.8xlarge", "ml.c6i.12xlarge", "ml.c6i.16xlarge", "ml.c6i.24xlarge",
               "ml.c6i.32xlarge"]


def kueue_cluster(types: int) -> dict:
    d = data()
    d["scheduler"]["mode"] = "kueue"
    d["cluster"]["instanceGroups"] += [{"name": f"cpu{i}", "instanceType": t, "count": 1}
                                       for i, t in enumerate(KUEUE_TYPES[:types - 2])]
    return d


def test_kueue_mode_refuses_more_instance_types_than_a_cluster_queue_has_flavors():
    assert len(kueue_cluster(17)["cluster"]["instanceGroups"]) == 17
    assert "HPG-Q005 cluster.instanceGroups: use 17 instance types; Kueue takes at most 16 flavors per " \
        "ClusterQueue (17); merge instance types or use task-governance" in problems(kueue_cluster(17))


def test_kueue_mode_accepts_sixteen_instance_types_and_task_governance_more():
    parse_spec(kueue_cluster(16), today=TODAY)
    d = kueue_cluster(17)
    d["scheduler"]["mode"] = "task-governance"
    parse_spec(d, today=TODAY)


def test_a_missing_dependencies_chart_is_a_warning_that_says_what_it_costs_and_where_the_chart_is():
    (warning,) = [w for w in spec_warnings(parse_spec(data(), today=TODAY), today=TODAY) if w.rule == "HPG-D001"]
    text = str(warning)
    assert text.startswith("HPG-D001 cluster.dependenciesChart: is not set")
    assert "cannot detect and replace faulty nodes" in text and "github.com/aws/sagemaker-hyperpod-cli" in text
    with_chart = data()
    with_chart["cluster"]["dependenciesChart"] = CHART
    assert not [w for w in spec_warnings(parse_spec(with_chart, today=TODAY), today=TODAY) if w.rule == "HPG-D001"]


# --- acknowledgements --------------------------------------------------------------------


def test_an_acknowledged_warning_is_not_a_warning_and_passes_strict():
    d = data(acknowledgements=[{"id": "HPG-C001", "reason": REASON},
                               {"id": "HPG-D001", "reason": "the chart is installed by the platform team's own pipeline"}])
    spec = parse_spec(d, today=TODAY, strict=True)
    review = spec_review(spec, today=TODAY)
    assert review.warnings == ()
    assert sorted((i.rule, i.path) for i in review.acknowledged) == [
        ("HPG-C001", "teams[0].contract"), ("HPG-C001", "teams[1].contract"), ("HPG-D001", "cluster.dependenciesChart")]
    assert spec.acknowledgements[0] == Acknowledgement(id="HPG-C001", reason=REASON)


def test_an_acknowledgement_with_a_path_accepts_only_the_findings_there():
    d = data(acknowledgements=[{"id": "HPG-C001", "reason": REASON, "path": "teams[1]"}])
    d["cluster"]["dependenciesChart"] = CHART
    warnings = [(w.rule, w.path) for w in spec_warnings(parse_spec(d, today=TODAY), today=TODAY)]
    assert warnings == [("HPG-C001", "teams[0].contract")]
    assert "HPG-C001 teams[0].contract: is missing" in problems(d, strict=True)[0]


@pytest.mark.parametrize("ack_path, issue_path, covered", [
    ("teams[1]", "teams[1].contract", True),
    ("teams[1].contract", "teams[1].contract", True),
    ("teams", "teams[1].contract", True),
    ("teams[1]", "teams[10].contract", False),
    ("teams[1].contract", "teams[1].contractor", False),
])
def test_an_acknowledgement_path_covers_itself_and_what_is_under_it(ack_path, issue_path, covered):
    ack = Acknowledgement(id="HPG-C001", reason=REASON, path=ack_path)
    assert ack.covers(SpecIssue(issue_path, "p", NO_VALUE, "f", "warning", "HPG-C001")) is covered


def test_acknowledge_is_generic_over_any_issues_with_ids():
    """Plan invariants' warnings (or any other book's) go through the same filter."""
    invariant = SpecIssue("sharedPool", "would hold nothing", "shared", "remove it", "warning", "HPG-P005")
    error = SpecIssue("name", "clashes", "x", "rename", "error", "HPG-P002")
    acks = [Acknowledgement(id="HPG-P005", reason="the pool fills when the pilot team leaves in January")]
    review = acknowledge([invariant, error], acks)
    assert (review.errors, review.warnings, review.acknowledged, review.unused) == ((error,), (), (invariant,), ())
    assert acknowledge([error], acks).unused == (0,)
    error_ack = [Acknowledgement(id="HPG-P002", reason="an error cannot be acknowledged, whatever the reason")]
    assert acknowledge([error], error_ack).errors == (error,)


@pytest.mark.parametrize("ack, expected", [
    ({"id": "HPG-C001"}, "acknowledgements[0].reason: is required; add `reason:` here"),
    ({"id": "HPG-C001", "reason": "  ok      "},
     "acknowledgements[0].reason: is shorter than 10 characters: it does not say why the finding is accepted "
     "('  ok      '); write why"),
    ({"id": "C001", "reason": REASON},
     "acknowledgements[0].id: is not a rule id ('C001'); write the id as printed with the warning, e.g. HPG-C001"),
    ({"id": "HPG-C099", "reason": REASON},
     "acknowledgements[0].id: is not the id of a rule hyperpod-gov has ('HPG-C099'); use the id printed with the "
     "warning (warning rules: HPG-A008, HPG-A011, HPG-C001, HPG-C002, HPG-C003, HPG-D001, HPG-D006, HPG-E006, "
     "HPG-I002, HPG-I005, HPG-K009, HPG-K010, HPG-K012, HPG-K015, HPG-Q004, HPG-Q012, HPG-Q013, HPG-S009, HPG-S010, HPG-S012, "
     "HPG-S015)"),
    ({"id": "HPG-Q002", "reason": REASON},
     "acknowledgements[0].id: is an error rule (quotas_fit_capacity: The teams' quotas on each instance type add up "
     "to no more than its instance groups hold (instances, accelerators, partitions, vCPU and memory).); only "
     "warnings can be acknowledged ('HPG-Q002'); fix what the error reports and remove this acknowledgement"),
    ({"id": "HPG-C001", "reason": REASON, "until": "2027-01-01"},
     "acknowledgements[0].until: is not a key the spec knows"),
], ids=["missing_reason", "short_reason", "malformed_id", "unknown_id", "error_rule", "unknown_key"])
def test_a_bad_acknowledgement_is_an_error_with_path_value_and_fix(ack, expected):
    found = problems(data(acknowledgements=[ack]))
    assert any(expected in m for m in found), "\n".join(found)


def test_strict_fails_on_every_unacknowledged_warning_and_says_how_to_acknowledge():
    with pytest.raises(SpecError) as info:
        parse_spec(data(), today=TODAY, strict=True)
    assert sorted((i.rule, i.path) for i in info.value.issues) == [
        ("HPG-C001", "teams[0].contract"), ("HPG-C001", "teams[1].contract"), ("HPG-D001", "cluster.dependenciesChart")]
    assert info.value.render().endswith("acknowledge it in the spec by its id with a reason (acknowledgements: "
                                        "[{id: HPG-..., reason: ..., path: ...}], see docs/rules.md)")


def test_acknowledgements_are_checked_against_every_book_the_caller_names():
    """The plan's invariants can join: a spec may acknowledge their warnings once their book is known."""
    @rule("HPG-P901", "warning", "an invariant's warning")
    def invariant(spec, plan):
        return ()

    d = data(acknowledgements=[{"id": "HPG-P901", "reason": "accepted until the pool is resized in March"}])
    assert any("acknowledgements[0].id: is not the id of a rule" in m for m in problems(d))
    parse_spec(d, today=TODAY, known=RULES + RuleBook("invariants", (invariant,)))
