"""Whole-app invariants on the plan: a spec the rules accept also deploys, or says why not before synth."""

from __future__ import annotations

import re

import pytest

from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.invariants import RESOURCE_BUDGET, plan_warnings
from hyperpod_gov.spec import SpecError, parse_spec
from tests.conftest import TODAY


def plan_errors(data: dict) -> list[str]:
    with pytest.raises(SpecError) as info:
        build_plan(parse_spec(data, today=TODAY))
    return [str(i) for i in info.value.issues]


def _team(name: str, *, service_accounts=(), **extra) -> dict:
    return {"name": name, "workloadIdentities": [{"serviceAccount": sa} for sa in service_accounts], **extra}


def test_source_role_names_that_collide_are_rejected_naming_both_sides(base):
    base["teams"] += [_team("ml", service_accounts=["eng-reader"]), _team("ml-eng", service_accounts=["reader"])]
    (error,) = plan_errors(base)
    assert error.startswith("HPG-P001 teams[3].workloadIdentities[0].serviceAccount: gives IAM role name "
                            "'acme-ml-eng-reader' in account 111111111111, which teams[2].workloadIdentities[0] "
                            "already gives")
    assert "rename one of the two service accounts" in error


def test_created_target_roles_of_such_teams_collide_in_their_account_too(base):
    role = {"account": "data", "name": "ml-reader"}  # not teams[0]'s targetRoleArn (HPG-A006)
    base["teams"] += [
        {"name": "ml", "workloadIdentities": [{"serviceAccount": "eng-reader", "targetRole": role}]},
        {"name": "ml-eng", "workloadIdentities": [{"serviceAccount": "x", "targetRole": {**role, "name": "r2"}}]},
    ]
    build_plan(parse_spec(base, today=TODAY))  # distinct everywhere: fine
    base["teams"][3]["workloadIdentities"][0]["serviceAccount"] = "reader"
    errors = plan_errors(base)
    assert any("'acme-ml-eng-reader' in account 111111111111" in e for e in errors), errors


def test_the_invariant_fails_when_names_are_joined_without_a_check(base, monkeypatch):
    """Break the property: if role names ignored the team, two teams' identities would collide."""
    base["teams"][1]["workloadIdentities"] = [{"serviceAccount": "trainer"}]
    build_plan(parse_spec(base, today=TODAY))
    from hyperpod_gov.plan import names

    monkeypatch.setattr(names, "source_role_name", lambda spec, team, sa: f"{spec}-{sa}")
    assert any("'acme-trainer'" in e for e in plan_errors(base))


def test_admins_that_differ_only_in_punctuation_get_distinct_construct_ids(base):
    base["cluster"]["admins"] = ["arn:aws:iam::111111111111:role/Platform-Admin",
                                 "arn:aws:iam::111111111111:role/Platform_Admin"]
    keys = [a.key for a in build_plan(parse_spec(base, today=TODAY)).cluster.admins]
    assert len(set(keys)) == 2 and all(k.startswith("PlatformAdmin") for k in keys)


def test_principals_are_keyed_by_one_hashing_scheme(base):
    base["teams"][1]["access"] = {"viewers": ["arn:aws:iam::111111111111:role/A-B"]}
    base["teams"][0]["access"]["viewers"] = ["arn:aws:iam::111111111111:role/A_B"]
    keys = [p.key for p in build_plan(parse_spec(base, today=TODAY)).principals]
    assert len(keys) == len(set(keys)) == 3


def test_too_many_principals_for_one_access_stack_names_the_key(base):
    base["teams"][1]["access"] = {
        "viewers": [f"arn:aws:iam::111111111111:role/viewer-{i}" for i in range(RESOURCE_BUDGET + 1)]}
    (error,) = plan_errors(base)
    assert error.startswith("HPG-P004 deployment.accessStacks: stack acme-access would hold 452 access entries, "
                            "over 450")
    base["deployment"] = {"accessStacks": 2}
    plan = build_plan(parse_spec(base, today=TODAY))
    assert [s.name for s in plan.stacks.access] == ["acme-access", "acme-access-01"]


def test_too_many_teams_for_one_team_stack_names_the_key(base):
    base["deployment"] = {"teamStacks": 1}
    base["teams"] += [_team(f"t{i:03d}", service_accounts=["a", "b", "c"]) for i in range(60)]
    (error,) = plan_errors(base)
    assert error.startswith("HPG-P004 deployment.teamStacks: stack acme-teams-00 would hold about")


def test_stack_names_of_consumer_accounts_are_unique_and_short(base):
    plan = build_plan(parse_spec(base, today=TODAY))
    assert len(set(plan.stacks.all_names)) == len(plan.stacks.all_names)


def test_small_organisations_get_one_stack_per_occupied_team_shard_and_one_access_stack(startup_spec):
    plan = build_plan(startup_spec)
    assert [s.name for s in plan.stacks.access] == ["startup-access"]
    assert sum(len(s.members) for s in plan.stacks.teams) == 3
    assert len(plan.stacks.teams) <= 3
    assert all(s.members for s in plan.stacks.teams)


@pytest.mark.parametrize(("region", "choice", "backend"), [
    ("us-east-1", "auto", "native"),
    ("us-west-2", "auto", "custom-resource"),
    ("eu-west-1", "auto", "custom-resource"),
    ("us-east-1", "custom-resource", "custom-resource"),
    ("us-west-2", "native", "native"),
])
def test_task_governance_uses_native_types_where_the_region_has_them(base, region, choice, backend):
    base["accounts"]["capacity"]["region"] = region
    base["accounts"]["consumers"][0]["region"] = region
    base["scheduler"]["taskGovernanceResources"] = choice
    plan = build_plan(parse_spec(base, today=TODAY))
    assert plan.task_governance_backend == backend


def test_kueue_mode_has_no_task_governance_backend(base):
    base["scheduler"]["mode"] = "kueue"
    assert build_plan(parse_spec(base, today=TODAY)).task_governance_backend is None


def test_a_shared_pool_without_capacity_is_a_warning(base):
    base["cluster"]["instanceGroups"] = [{"name": "gpu", "instanceType": "ml.p5.48xlarge", "count": 1},
                                         {"name": "small", "instanceType": "ml.g5.8xlarge", "count": 2}]
    base["sharedPool"] = {"name": "shared"}
    plan = build_plan(parse_spec(base, today=TODAY))
    assert any(str(w).startswith("HPG-P005 sharedPool: would hold nothing") for w in plan_warnings(plan))
    with pytest.raises(SpecError, match=r"HPG-P005 sharedPool: would hold nothing"):
        build_plan(parse_spec(base, today=TODAY), strict=True)


def test_a_borrow_limit_nobody_can_lend_is_a_warning_that_says_what_it_means(base):
    warnings = [str(w) for w in plan_warnings(build_plan(parse_spec(base, today=TODAY)))]
    assert ("HPG-P006 teams[0].sharing.borrowLimitPercent: lets team-a borrow 4 accelerators of ml.p5.48xlarge, but the other "
            "teams can lend at most 0: the team will never borrow more than 0 (50)") in " ".join(warnings)


def test_kubernetes_versions_without_a_kubectl_layer_are_rejected(base):
    base["cluster"]["kubernetesVersion"] = "1.35"
    with pytest.raises(SpecError, match=r"cluster.kubernetesVersion: has no kubectl layer .* use one of 1.30, 1.31"):
        parse_spec(base, today=TODAY)


def test_spec_package_never_imports_the_plan():
    import ast
    from pathlib import Path

    spec_dir = Path(__file__).resolve().parents[2] / "hyperpod_gov" / "spec"
    for path in spec_dir.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert "plan" not in (node.module or ""), path.name


def test_cluster_dashboard_pages_after_the_first_get_a_stack_each():
    """A page holds 50 teams (about 130 kB of template); the monitoring stack holds only the first page, so no
    stack nears CloudFormation's 1 MB however many teams there are, and a page never changes stack."""
    from tests.scale import many_teams_spec

    data = many_teams_spec(120)
    plan = build_plan(parse_spec(data, today=TODAY))
    assert len(plan.monitoring.cluster_dashboards) == 3
    assert plan.stacks.dashboards == ("scale-dashboards-01", "scale-dashboards-02")
    assert set(plan.stacks.dashboards) <= set(plan.stacks.all_names)
    small = build_plan(parse_spec(many_teams_spec(50), today=TODAY))
    assert small.stacks.dashboards == ()  # one page: nothing but the monitoring stack


def test_every_invariant_has_a_stable_unique_id_that_leads_its_findings(base):
    from hyperpod_gov.plan.invariants import INVARIANTS

    ids = [i.id for i in INVARIANTS]
    assert ids == [f"HPG-P{n:03d}" for n in range(1, len(ids) + 1)]
    base["sharedPool"] = {"name": "shared"}
    base["cluster"]["instanceGroups"] = [{"name": "gpu", "instanceType": "ml.p5.48xlarge", "count": 1},
                                         {"name": "small", "instanceType": "ml.g5.8xlarge", "count": 2}]
    plan = build_plan(parse_spec(base, today=TODAY))
    assert {w.rule for w in plan_warnings(plan)} == {"HPG-P005", "HPG-P006", "HPG-P007"}  # no contract, no platformEmail
    assert all(str(w).startswith(w.rule + " ") for w in plan_warnings(plan))


def test_an_invariant_that_raises_is_reported_as_a_defect_naming_its_id(base):
    from hyperpod_gov.plan.invariants import INVARIANTS
    from hyperpod_gov.spec.rulebook import Rule, RuleBook

    def broken(plan):
        yield from ()
        raise KeyError("team-z")

    plan = build_plan(parse_spec(base, today=TODAY))
    found = (INVARIANTS + RuleBook("broken", (Rule("HPG-P999", "warning", "a broken check", broken),))).run(plan)
    defect = found[-1]
    assert (defect.path, defect.severity, defect.rule) == ("(rule HPG-P999)", "error", "HPG-P999")
    assert defect.problem == "rule HPG-P999 (broken) threw KeyError: 'team-z'"
    assert "defect in hyperpod-gov" in defect.fix
    assert found[:-1] == INVARIANTS.run(plan)  # the other invariants still ran


def test_invariants_read_the_plan_only():
    import inspect

    from hyperpod_gov.plan import invariants, monitoring

    for invariant in invariants.INVARIANTS:
        assert list(inspect.signature(invariant.check).parameters) == ["plan"], invariant.id
    assert list(inspect.signature(invariants.check_plan).parameters) == ["plan"]
    assert list(inspect.signature(monitoring.monitoring_plan).parameters) == ["plan"]


def test_plan_parts_carry_the_spec_path_they_came_from(base):
    base["teams"].insert(0, {"name": "zeta", "workloadIdentities": [{"serviceAccount": "b"}, {"serviceAccount": "a"}],
                             "access": {"viewers": ["arn:aws:iam::111111111111:role/Z"]}})
    base["cluster"]["admins"].insert(0, "arn:aws:iam::111111111111:role/Zed")
    base["sharedPool"] = {"name": "shared"}
    plan = build_plan(parse_spec(base, today=TODAY))
    assert {t.name: t.path for t in plan.teams} == {"zeta": "teams[0]", "team-a": "teams[1]", "team-b": "teams[2]",
                                                    "shared": "sharedPool"}
    assert {(i.team, i.service_account): i.path for i in plan.identities} == {
        ("zeta", "a"): "teams[0].workloadIdentities[1]", ("zeta", "b"): "teams[0].workloadIdentities[0]",
        ("team-a", "trainer"): "teams[1].workloadIdentities[0]"}
    assert {g.name: g.path for g in plan.instance_groups} == {"gpu": "cluster.instanceGroups[0]",
                                                              "small": "cluster.instanceGroups[1]"}
    assert {a.principal_arn.rsplit("/", 1)[1]: a.path for a in plan.cluster.admins} == {
        "Zed": "cluster.admins[0]", "Admin": "cluster.admins[1]"}
    assert {p.principal_arn.rsplit("/", 1)[1]: p.path for p in plan.principals} == {
        "Z": "teams[0].access.viewers[0]", "A": "teams[1].access.submitters[0]"}


def test_the_plan_builds_no_spec_objects():
    """The plan reads spec models; it never constructs one (the shared pool used to be a pseudo Team)."""
    import ast
    import inspect
    from pathlib import Path

    import pydantic

    import hyperpod_gov.spec.models as models

    spec_models = {name for name, obj in vars(models).items()
                   if inspect.isclass(obj) and issubclass(obj, pydantic.BaseModel)}
    plan_dir = Path(__file__).resolve().parents[2] / "hyperpod_gov" / "plan"
    for path in plan_dir.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                assert name not in spec_models or name in {"model_validate"}, f"{path.name}: {name}(...)"


def test_the_stack_layout_holds_every_dashboard_page_after_the_first(base):
    plan = build_plan(parse_spec(base, today=TODAY))
    assert len(plan.monitoring.cluster_dashboards) == 1 + len(plan.stacks.dashboards)


def _borrow_warnings_pair_by_pair(plan) -> list[str]:
    """HPG-P006 as first written: for each borrowing team and type, the sum over every other lending team."""
    out = []
    for team in plan.tenants:
        if not team.can_borrow:
            continue
        for f in team.owned:
            lendable = sum(f.governed(of.lending_limit or of.nominal) for other in plan.teams
                           if other.name != team.name and other.can_lend
                           for of in other.flavors if of.instance_type == f.instance_type)
            limit = f.governed(f.borrowing_limit) if f.borrowing_limit else 0
            if limit > lendable:
                out.append((f"{team.path}.sharing.borrowLimitPercent", f.instance_type, limit, lendable))
    return out


def test_borrow_limits_are_summed_once_per_type_as_pair_by_pair():
    """The lenders' totals are summed once per type: the same findings as summing every pair of teams, on teams
    that lend, borrow, do neither, on two types, with percentages that some lenders can meet and some not."""
    from hyperpod_gov.plan.invariants import borrow_limits_can_be_met
    from tests.scale import many_teams_spec

    data = many_teams_spec(12)
    data["cluster"]["instanceGroups"].append({"name": "cpu", "instanceType": "ml.m5.2xlarge", "count": 8})
    strategies = ["LendAndBorrow", "DontLend", "Lend", "DontLend", "DontLend", "DontLend"]
    for i, team in enumerate(data["teams"]):
        team["sharing"] = {"strategy": strategies[i % 6]}
        if strategies[i % 6] == "LendAndBorrow":
            team["sharing"]["borrowLimitPercent"] = [100, 500][i // 6]
        if i % 3 == 0:
            team["quota"].append({"instanceType": "ml.m5.2xlarge", "count": 1 + i // 6})
    plan = build_plan(parse_spec(data, today=TODAY))
    found = []
    for w in borrow_limits_can_be_met(plan):
        limit, instance_type, lendable = re.search(r"borrow (\d+) \S+ of (\S+), .* at most (\d+):", w.problem).groups()
        found.append((w.path, instance_type, int(limit), int(lendable)))
    expected = _borrow_warnings_pair_by_pair(plan)
    assert found == expected
    assert len(expected) >= 2 and {e[1] for e in expected} == {"ml.g5.2xlarge", "ml.m5.2xlarge"}
