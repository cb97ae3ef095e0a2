"""Spec rules: every bad input gets a message with its path, the value and the fix."""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

from hyperpod_gov.spec import SpecError, parse_spec, read_yaml
from tests.conftest import BASE, TODAY


def messages(data: Any, strict: bool = False) -> list[str]:
    with pytest.raises(SpecError) as info:
        parse_spec(data, today=TODAY, strict=strict)
    return [str(i) for i in info.value.issues]


def mutate(fn: Callable[[dict], None]) -> dict:
    data = copy.deepcopy(BASE)
    fn(data)
    return data


def _set(path: str, value: Any) -> Callable[[dict], None]:
    def apply(data: dict) -> None:
        node: Any = data
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node[part]
        last = parts[-1]
        node[int(last) if last.isdigit() else last] = value

    return apply


CASES = [
    # (id, mutation, expected substrings of one message)
    (
        "quota_sum_over_capacity",
        _set("teams.1.quota", [{"instanceType": "ml.p5.48xlarge", "accelerators": 12}]),
        ["teams[*].quota[ml.p5.48xlarge]", "add up to 20 accelerators", "team-a 8, team-b 12",
         "hold 16 (2 x ml.p5.48xlarge)", "lower the quotas by 4 accelerators"],
    ),
    (
        "quota_sum_over_capacity_in_instances",
        _set("teams.1.quota", [{"instanceType": "ml.g5.8xlarge", "count": 5}]),
        ["teams[*].quota[ml.g5.8xlarge]", "add up to 5 instances", "hold 4", "lower the quotas by 1 instances"],
    ),
    (
        "quota_on_type_no_group_has",
        _set("teams.1.quota", [{"instanceType": "ml.p4d.24xlarge", "count": 1}]),
        ["teams[1].quota[0].instanceType: no instance group has this type ('ml.p4d.24xlarge')",
         "add an instance group of that type", "ml.g5.8xlarge, ml.p5.48xlarge"],
    ),
    (
        "quota_on_unknown_type",
        _set("teams.1.quota", [{"instanceType": "ml.g5.9xlarge", "count": 1}]),
        ["teams[1].quota[0].instanceType: is not a HyperPod instance type", "ml.g5.8xlarge"],
    ),
    (
        "accelerators_on_cpu_type",
        lambda d: (d["cluster"]["instanceGroups"].append({"name": "cpu", "instanceType": "ml.m5.large", "count": 2}),
                   d["teams"][1]["quota"].append({"instanceType": "ml.m5.large", "accelerators": 1})),
        ["teams[1].quota[1].accelerators: ml.m5.large has no accelerators", "count: N"],
    ),
    (
        "quota_with_count_and_accelerators",
        _set("teams.1.quota", [{"instanceType": "ml.g5.8xlarge", "count": 1, "accelerators": 1}]),
        ["teams[1].quota[0]: needs exactly one of count, accelerators, vcpu with memoryGib, or partitions (gives count and accelerators)"],
    ),
    (
        "bad_team_name",
        _set("teams.0.name", "Team_A"),
        ["teams[0].name: team name is not a DNS-1123 label ('Team_A')", "(e.g. 'team-a')"],
    ),
    (
        "long_team_name",
        _set("teams.0.name", "a" * 41),
        ["teams[0].name: team name is 41 characters long", "at most 40"],
    ),
    (
        "duplicate_team_name",
        _set("teams.1.name", "team-a"),
        ["teams[1].name: duplicate team name ('team-a'); give each team a unique name"],
    ),
    (
        "eleven_priority_classes",
        _set("scheduler.priorityClasses", [{"name": f"c{i}", "weight": i} for i in range(11)]),
        ["scheduler.priorityClasses: has 11 entries", "keep at most 10"],
    ),
    (
        "duplicate_priority_class",
        _set("scheduler.priorityClasses", [{"name": "a", "weight": 1}, {"name": "a", "weight": 2}]),
        ["scheduler.priorityClasses[1].name: duplicate priority class name ('a')"],
    ),
    (
        "priority_weight_out_of_range",
        _set("scheduler.priorityClasses", [{"name": "a", "weight": 101}]),
        ["scheduler.priorityClasses[0].weight: is out of range (101); use a value at least 0 and at most 100"],
    ),
    (
        "borrow_limit_with_dont_lend",
        _set("teams.1.sharing", {"strategy": "DontLend", "borrowLimitPercent": 20}),
        ["teams[1].sharing.borrowLimitPercent: a DontLend team cannot borrow (20)", "set strategy: LendAndBorrow"],
    ),
    (
        "borrow_limit_with_lend",
        _set("teams.1.sharing", {"strategy": "Lend", "borrowLimitPercent": 20}),
        ["teams[1].sharing.borrowLimitPercent: a Lend team cannot borrow (20)"],
    ),
    (
        "borrow_limit_over_500",
        _set("teams.0.sharing.borrowLimitPercent", 501),
        ["teams[0].sharing.borrowLimitPercent: is outside 1..500 (501)"],
    ),
    (
        "target_role_in_undeclared_account",
        _set("teams.0.workloadIdentities.0.targetRoleArn", "arn:aws:iam::999999999999:role/x"),
        ["teams[0].workloadIdentities[0].targetRoleArn: is in account 999999999999, which is not a declared",
         "add 999999999999 under accounts.consumers", "222222222222"],
    ),
    (
        "kubernetes_1_29",
        _set("cluster.kubernetesVersion", "1.29"),
        ["cluster.kubernetesVersion: is older than 1.30", "('1.29')", 'use "1.30" or later'],
    ),
    (
        "kubernetes_version_unquoted",
        _set("cluster.kubernetesVersion", 1.3),
        ["cluster.kubernetesVersion: is a number, and YAML reads 1.30 as 1.3", 'kubernetesVersion: "1.30"'],
    ),
    (
        "admin_cidrs_with_private_endpoint",
        _set("cluster.adminCidrs", ["203.0.113.0/24"]),
        ["cluster.adminCidrs: is only used with a public endpoint, but endpointAccess is private",
         "set endpointAccess: public-and-private"],
    ),
    (
        "admin_cidr_open_to_world",
        lambda d: d["cluster"].update(endpointAccess="public-and-private", adminCidrs=["0.0.0.0/0"]),
        ["cluster.adminCidrs[0]: opens the range to the whole internet ('0.0.0.0/0')"],
    ),
    (
        "public_endpoint_without_cidrs",
        _set("cluster.endpointAccess", "public-and-private"),
        ["cluster.adminCidrs: is empty, so the public endpoint would be open"],
    ),
    (
        "unknown_key",
        _set("teams.0.fairShareWieght", 3),
        ["teams[0].fairShareWieght: is not a key the spec knows (3); did you mean 'fairShareWeight'?"],
    ),
    (
        "unknown_top_level_key",
        _set("team", []),
        ["team: is not a key the spec knows", "did you mean 'teams'?"],
    ),
    (
        "account_id_unquoted_number",
        _set("accounts.capacity.id", 111111111111),
        ["accounts.capacity.id: is a number where text is expected (111111111111)", 'quote it in YAML'],
    ),
    (
        "account_id_short",
        _set("accounts.capacity.id", "1234"),
        ["accounts.capacity.id: is not a 12-digit AWS account id ('1234')"],
    ),
    (
        "access_principal_not_iam",
        _set("teams.0.access.viewers", ["arn:aws:iam::111111111111:group/Devs"]),
        ["teams[0].access.viewers[0]: is not an IAM role or user ARN ('arn:aws:iam::111111111111:group/Devs')"],
    ),
    (
        "wrong_sharing_strategy",
        _set("teams.0.sharing.strategy", "Borrow"),
        ["teams[0].sharing.strategy: is not one of the allowed values ('Borrow'); use one of: 'Lend', 'DontLend' "
         "or 'LendAndBorrow'"],
    ),
    (
        "missing_cluster",
        lambda d: d.pop("cluster"),
        ["cluster: is required; add `cluster:` here"],
    ),
    (
        "wrong_type_count",
        _set("cluster.instanceGroups.0.count", "many"),
        ["cluster.instanceGroups[0].count: is not a whole number ('many')"],
    ),
    (
        "duplicate_consumer_account",
        _set("accounts.consumers", [{"name": "a", "id": "222222222222", "region": "us-east-1"},
                                    {"name": "b", "id": "222222222222", "region": "us-east-1"}]),
        ["accounts.consumers[1].id: names the same account and region as accounts.consumers[0]"],
    ),
    (
        "duplicate_service_account",
        _set("teams.0.workloadIdentities", [{"serviceAccount": "x"}, {"serviceAccount": "x"}]),
        ["teams[0].workloadIdentities[1].serviceAccount: appears twice in the team ('x')"],
    ),
    (
        "sixteen_quota_entries",
        _set("teams.1.quota", [{"instanceType": "ml.g5.8xlarge", "count": 1}] * 16),
        ["teams[1].quota: has 16 entries", "keep at most 15"],
    ),
]


@pytest.mark.parametrize("mutation, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_spec_is_reported_with_path_value_and_fix(mutation, expected):
    found = messages(mutate(mutation))
    assert any(all(part in m for part in expected) for m in found), "\n".join(found)


def test_every_structural_error_is_reported_at_once():
    def several(d: dict) -> None:
        d["teams"][0]["name"] = "Bad_Name"
        d["teams"][1]["fairShareWeight"] = 200
        d["cluster"]["kubernetesVersion"] = "1.29"
        d["unknown"] = 1

    found = messages(mutate(several))
    assert len(found) == 4, found


def test_every_cross_field_error_is_reported_at_once():
    def several(d: dict) -> None:
        d["teams"][1]["name"] = "team-a"
        d["teams"][1]["sharing"] = {"strategy": "DontLend", "borrowLimitPercent": 5}
        d["teams"][0]["quota"][0]["accelerators"] = 17
        d["cluster"]["adminCidrs"] = ["203.0.113.0/24"]

    found = messages(mutate(several))
    assert len(found) == 4, found


def test_overdue_contract_is_a_warning_and_an_error_in_strict_mode(base):
    from hyperpod_gov.spec import spec_warnings

    base["teams"][0]["contract"] = {
        "businessOwner": "a@example.com", "operationsOwner": "b@example.com", "costOwner": "c@example.com",
        "dataClassification": "internal", "reviewBy": "2026-01-01",
    }
    spec = parse_spec(base, today=TODAY)
    warned = [str(w) for w in spec_warnings(spec, today=TODAY)]
    assert any("teams[0].contract.reviewBy: has passed (today is 2026-11-30) ('2026-01-01')" in w for w in warned)
    assert any("teams[0].contract.reviewBy: has passed" in m for m in messages(base, strict=True))


def test_valid_spec_parses_into_frozen_models(base):
    spec = parse_spec(base, today=TODAY)
    assert spec.teams[0].sharing.effective_borrow_limit_percent == 50
    assert spec.teams[1].sharing.effective_borrow_limit_percent == 0
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="Instance is frozen"):
        spec.teams[0].name = "x"  # type: ignore[misc]


def test_spec_can_be_built_in_python_with_snake_case():
    from hyperpod_gov.spec import GovernanceSpec, validate

    spec = GovernanceSpec(
        name="py",
        accounts={"capacity": {"id": "111111111111", "region": "us-east-1"}},
        cluster={"name": "c", "instance_groups": [{"name": "g", "instance_type": "ml.g5.2xlarge", "count": 3}]},
        teams=[{"name": "t", "quota": [{"instance_type": "ml.g5.2xlarge", "count": 3}]}],
    )
    assert validate(spec, today=TODAY) is spec


# --- files ---------------------------------------------------------------------------

FILE_CASES = [
    ("missing_file", None, ["(file): no such file", "check the path"]),
    ("empty_file", "", ["(file): is empty", "`hyperpod-gov schema`"]),
    ("yaml_syntax_error", "name: a\nteams: [\n  - x: 1\n", ["line 3", "YAML syntax error", "fix the YAML"]),
    ("yaml_bad_indent", "name: a\n cluster: b\n", ["line 2, column 9", "YAML syntax error"]),
    ("duplicate_yaml_key", "name: a\nname: b\n", ["line 2", "found the key 'name' twice (first at line 1)"]),
    ("top_level_list", "- a\n- b\n", ["(top level): is not a mapping of keys"]),
]


@pytest.mark.parametrize("text, expected", [c[1:] for c in FILE_CASES], ids=[c[0] for c in FILE_CASES])
def test_bad_file_is_reported_without_traceback(tmp_path, text, expected):
    path = tmp_path / "spec.yaml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(SpecError) as info:
        parse_spec(read_yaml(path), today=TODAY)
    rendered = info.value.render()
    assert all(part in rendered for part in expected), rendered


def test_cluster_admin_cannot_also_be_a_team_principal(base):
    base["teams"][0]["access"]["viewers"] = ["arn:aws:iam::111111111111:role/Admin"]
    assert any("teams[0].access.viewers[0]: is a cluster admin" in m for m in messages(base))


def test_a_quota_type_named_twice_in_a_team(base):
    base["teams"][1]["quota"] = [{"instanceType": "ml.g5.8xlarge", "count": 1}] * 2
    assert any("teams[1].quota[1].instanceType: appears twice in the team's quota ('ml.g5.8xlarge'); merge" in m
               for m in messages(base))
