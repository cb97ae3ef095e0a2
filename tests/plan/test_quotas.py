"""The plan's numbers, worked out by hand from the examples."""

from __future__ import annotations

from hyperpod_gov.plan import Amounts, build_plan, shared_pool_quota
from hyperpod_gov.spec import parse_spec
from tests.conftest import TODAY

P5 = "ml.p5.48xlarge"  # 8 x H100, 192 vCPU, 2048 GiB per instance
G5 = "ml.g5.2xlarge"  # 1 x A10G, 8 vCPU, 32 GiB per instance


def flavor(plan, team, itype):
    return next(f for f in plan.team(team).flavors if f.instance_type == itype)


def test_enterprise_quotas_sum_to_the_80_gpus_of_the_cluster(enterprise_spec):
    plan = build_plan(enterprise_spec)
    owned = {t.name: flavor(plan, t.name, P5).nominal.accelerators for t in plan.teams}
    assert owned == {
        "foundation-models": 20,
        "inference-platform": 20,
        "applied-research": 5,
        "recommendations": 10,
        "speech": 25,
    }
    assert sum(owned.values()) == 80 == 10 * 8


def test_enterprise_dont_lend_teams_can_neither_lend_nor_borrow(enterprise_spec):
    plan = build_plan(enterprise_spec)
    for name in ("foundation-models", "inference-platform"):
        f = flavor(plan, name, P5)
        assert f.lending_limit == Amounts(0, 0, 0)
        assert f.borrowing_limit == Amounts(0, 0, 0)
        assert not plan.team(name).can_lend and not plan.team(name).can_borrow


def test_enterprise_team_3_owns_5_gpus_and_may_borrow_at_most_7(enterprise_spec):
    f = flavor(build_plan(enterprise_spec), "applied-research", P5)
    # 5 of 8 GPUs pro rata: 5/8 x 192 vCPU = 120, 5/8 x 2048 GiB = 1280
    assert f.nominal == Amounts(5, 120, 1280)
    # 150 % rounded down: 7.5 -> 7 GPUs, 180 vCPU, 1920 GiB
    assert f.borrowing_limit == Amounts(7, 180, 1920)
    assert f.lending_limit is None  # lends everything it does not use


def test_enterprise_teams_4_and_5_borrow_caps(enterprise_spec):
    plan = build_plan(enterprise_spec)
    assert flavor(plan, "recommendations", P5).borrowing_limit == Amounts(10, 240, 2560)  # 100 % of 10
    assert flavor(plan, "speech", P5).borrowing_limit == Amounts(12, 300, 3200)  # 50 % of 25 = 12.5 -> 12


def test_every_team_lists_every_flavor_with_zero_where_it_owns_none(enterprise_spec):
    plan = build_plan(enterprise_spec)
    for t in plan.teams:
        assert [f.instance_type for f in t.flavors] == ["ml.m5.2xlarge", P5]
        assert flavor(plan, t.name, "ml.m5.2xlarge").nominal == Amounts(0, 0, 0)


def test_startup_quotas_in_whole_instances(startup_spec):
    plan = build_plan(startup_spec)
    assert flavor(plan, "ml-engineering", G5).nominal == Amounts(6, 48, 192)
    assert flavor(plan, "ml-engineering", G5).borrowing_limit == Amounts(3, 24, 96)  # 50 % of 6
    assert flavor(plan, "researchers", G5).nominal == Amounts(5, 40, 160)
    assert flavor(plan, "researchers", G5).borrowing_limit == Amounts(2, 20, 80)  # 2.5 -> 2 GPUs
    assert flavor(plan, "chatbot", G5).nominal == Amounts(4, 32, 128)
    assert flavor(plan, "chatbot", G5).lending_limit == Amounts(0, 0, 0)
    assert flavor(plan, "chatbot", G5).borrowing_limit == Amounts(0, 0, 0)
    assert sum(flavor(plan, t.name, G5).nominal.accelerators for t in plan.teams) == 15


def test_names_follow_the_design(startup_spec):
    plan = build_plan(startup_spec)
    t = plan.team("chatbot")
    assert (t.namespace, t.cluster_queue, t.local_queue) == (
        "hyperpod-ns-chatbot",
        "hyperpod-ns-chatbot-clusterqueue",
        "hyperpod-ns-chatbot-localqueue",
    )
    assert (t.viewers_group, t.submitters_group) == ("hyperpod-ns-chatbot-viewers", "hyperpod-ns-chatbot-submitters")
    assert [(p.kueue_name, p.weight) for p in plan.priority_classes] == [
        ("inference-priority", 100),
        ("training-priority", 50),
    ]
    assert plan.covered_resources == ("cpu", "memory", "nvidia.com/gpu")


def test_lend_team_lends_all_and_borrows_nothing(base):
    base["teams"][1]["sharing"] = {"strategy": "Lend"}
    plan = build_plan(parse_spec(base, today=TODAY))
    f = flavor(plan, "team-b", "ml.g5.8xlarge")
    assert f.lending_limit is None and f.borrowing_limit == Amounts(0, 0, 0)


def test_shared_pool_holds_capacity_minus_quotas(base):
    base["sharedPool"] = {"name": "shared"}
    spec = parse_spec(base, today=TODAY)
    # p5: 2 x 8 = 16 GPUs, team-a has 8 in accelerators -> 8 accelerators left
    # g5.8xlarge: 4 instances, team-b has 2 -> 2 instances left
    left = {q.instance_type: (q.count, q.accelerators) for q in shared_pool_quota(spec)}
    assert left == {P5: (None, 8), "ml.g5.8xlarge": (2, None)}
    pool = build_plan(spec).team("shared")
    assert pool.is_shared_pool and pool.strategy == "Lend"
    assert flavor(build_plan(spec), "shared", P5).nominal == Amounts(8, 192, 2048)


def test_plan_does_not_depend_on_team_order(base):
    reordered = dict(base, teams=list(reversed(base["teams"])))
    # Paths and warnings point at list positions of the spec; every decision is the same.
    decisions = [build_plan(parse_spec(d, today=TODAY)) for d in (base, reordered)]
    assert decisions[0] == decisions[1]
    assert decisions[0].monitoring == decisions[1].monitoring
    assert [t.path for t in decisions[0].tenants] == ["teams[0]", "teams[1]"]
    assert [t.path for t in decisions[1].tenants] == ["teams[1]", "teams[0]"]


def test_spec_and_plan_never_import_cdk():
    import subprocess
    import sys

    code = (
        "import sys, hyperpod_gov.spec, hyperpod_gov.plan, hyperpod_gov.catalog, hyperpod_gov.explain;"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('aws_cdk', 'cdk8s', 'constructs', 'jsii')];"
        "sys.exit(1 if bad else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
