"""cluster.existing.networkPolicyEnforcement (issue 55, medium 5): on a cluster hyperpod-gov did not create, the spec
says what enforces the teams' NetworkPolicies, and validate and explain warn (HPG-E006) until it does."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from hyperpod_gov.cli import main
from hyperpod_gov.explain import explain
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import SpecError, check_spec, parse_spec, read_yaml
from tests.conftest import EXAMPLES, TODAY

EXISTING = read_yaml(EXAMPLES / "existing.yaml")
REASON = "Cilium 1.16 (kube-system); the platform team's default-deny test passes"


def existing(enforcement: object = None) -> dict:
    data = copy.deepcopy(EXISTING)
    data["cluster"]["existing"].pop("networkPolicyEnforcement", None)
    if enforcement is not None:
        data["cluster"]["existing"]["networkPolicyEnforcement"] = enforcement
    return data


def findings(data: dict) -> list[str]:
    return [str(i) for i in check_spec(parse_spec(data, today=TODAY), today=TODAY) if i.rule == "HPG-E006"]


def test_an_existing_cluster_that_does_not_say_warns_with_the_rule_id():
    assert findings(existing()) == [
        "HPG-E006 cluster.existing.networkPolicyEnforcement: is not set: the teams' default-deny NetworkPolicies are "
        "emitted, but nothing says the cluster enforces them (the vpc-cni add-on's enableNetworkPolicy is off by "
        "default), so each team's pods may reach the others'; run `hyperpod-gov preflight SPEC` (it reads the "
        "vpc-cni add-on's configuration), then set cluster.existing.networkPolicyEnforcement: {enforcer: vpc-cni}, "
        "or {enforcer: other, reason: ...} when another network plugin enforces them"]


@pytest.mark.parametrize("enforcement", [{"enforcer": "vpc-cni"}, {"enforcer": "other", "reason": REASON}])
def test_saying_what_enforces_them_ends_the_warning_and_reaches_the_plan(enforcement):
    data = existing(enforcement)
    assert findings(data) == []
    e = build_plan(parse_spec(data, today=TODAY)).cluster.existing
    assert (e.network_policy_enforcer, e.network_policy_reason) == (enforcement["enforcer"], enforcement.get("reason"))


def test_a_cluster_hyperpod_gov_creates_has_no_finding():
    from tests.conftest import BASE

    assert [i for i in check_spec(parse_spec(copy.deepcopy(BASE), today=TODAY), today=TODAY)
            if i.rule == "HPG-E006"] == []


@pytest.mark.parametrize("enforcement, expected", [
    ({"enforcer": "other"}, "cluster.existing.networkPolicyEnforcement.reason: is missing: with enforcer: other "
     "nothing checks that the teams' NetworkPolicies are enforced"),
    ({"enforcer": "other", "reason": "calico"}, "networkPolicyEnforcement.reason: is shorter than 10 characters"),
    ({"enforcer": "vpc-cni", "reason": REASON}, "networkPolicyEnforcement.reason: is only read with enforcer: other"),
    ({"enforcer": "cilium"}, "cluster.existing.networkPolicyEnforcement.enforcer"),
    ("vpc-cni", "cluster.existing.networkPolicyEnforcement"),
])
def test_a_bad_statement_is_an_error_with_path_and_fix(enforcement, expected):
    with pytest.raises(SpecError) as info:
        parse_spec(existing(enforcement), today=TODAY)
    rendered = info.value.render()
    assert expected in rendered, rendered
    assert all(i.fix for i in info.value.issues)


def _write(tmp_path: Path, data: dict) -> str:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_validate_warns_and_strict_fails_until_the_spec_says(tmp_path, capsys):
    path = _write(tmp_path, existing())
    assert main(["validate", path]) == 0
    assert "warning: HPG-E006 cluster.existing.networkPolicyEnforcement: is not set" in capsys.readouterr().err
    assert main(["validate", "--strict", path]) == 1
    assert "HPG-E006" in capsys.readouterr().err
    assert main(["validate", "--strict", _write(tmp_path, existing({"enforcer": "vpc-cni"}))]) == 0, capsys.readouterr()


def test_explain_warns_and_names_the_enforcer(tmp_path, capsys):
    assert main(["explain", _write(tmp_path, existing())]) == 0
    out = capsys.readouterr()
    assert "warning: HPG-E006" in out.err
    assert "NetworkPolicies enforced by: not stated (HPG-E006)" in out.out
    text = explain(build_plan(parse_spec(existing({"enforcer": "other", "reason": REASON}), today=TODAY)))
    assert f"NetworkPolicies enforced by: another network plugin, unchecked: {REASON}" in " ".join(text.split())
