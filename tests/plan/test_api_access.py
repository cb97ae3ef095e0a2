"""cluster.apiAccess: which networks reach the private API, their validation, explain and diff."""

from __future__ import annotations

import pytest

from hyperpod_gov.explain import explain
from hyperpod_gov.plan import build_plan
from hyperpod_gov.diff import governance_diff as governance_changes  # the governance diff in words
from hyperpod_gov.spec import SpecError, parse_spec
from tests.conftest import TODAY, as_existing

VPN = {"cidr": "10.8.0.0/16", "description": "Corporate VPN"}
ADMINS = {"id": "sg-0123456789abcdef0", "description": "Admin subnet hosts"}
PEERS = {"id": "pl-0123456789abcdef0", "description": "Peered VPCs"}


def _plan(data):
    return build_plan(parse_spec(data, today=TODAY))


def test_sources_are_sorted_and_keyed_by_value_not_position(base):
    base["cluster"]["apiAccess"] = {"prefixListIds": [PEERS], "securityGroupIds": [ADMINS],
                                    "cidrs": [VPN, {"cidr": "10.9.0.0/16", "description": "Lab"}]}
    sources = _plan(base).cluster.api_access
    assert [(s.kind, s.value) for s in sources] == [("cidr", "10.8.0.0/16"), ("cidr", "10.9.0.0/16"),
                                                    ("prefix-list", PEERS["id"]), ("security-group", ADMINS["id"])]
    base["cluster"]["apiAccess"]["cidrs"].reverse()
    assert {s.key for s in _plan(base).cluster.api_access} == {s.key for s in sources}
    assert len({s.key for s in sources}) == 4


@pytest.mark.parametrize("access, message", [
    ({"cidrs": [{"cidr": "0.0.0.0/0", "description": "all"}]},
     "cluster.apiAccess.cidrs[0].cidr: opens the range to the whole internet"),
    ({"cidrs": [{"cidr": "10.8.0.1/16", "description": "x"}]}, "cluster.apiAccess.cidrs[0].cidr: is not an IPv4 CIDR"),
    ({"cidrs": [VPN, VPN]}, "cluster.apiAccess: cidrs lists 10.8.0.0/16 twice"),
    ({"securityGroupIds": [{"id": "sg-12", "description": "x"}]},
     "cluster.apiAccess.securityGroupIds[0].id: is not a security group id"),
    ({"prefixListIds": [{"id": "sg-0123456789abcdef0", "description": "x"}]},
     "cluster.apiAccess.prefixListIds[0].id: is not a managed prefix list id"),
    ({"cidrs": [{"cidr": "10.8.0.0/16", "description": "VPN\u00e9"}]},
     "cluster.apiAccess.cidrs[0].description: is not a security group rule description"),
    ({"cidrs": [{"cidr": "10.8.0.0/16"}]}, "cluster.apiAccess.cidrs[0].description"),
    ({"cidrs": [{"cidr": "0.0.0.0/1", "description": "a"}, {"cidr": "128.0.0.0/1", "description": "b"}]},
     "cluster.apiAccess.cidrs: together admit 3,702,258,688 public internet addresses"),
], ids=["any", "host bits", "twice", "sg id", "pl id", "description", "no description", "public halves"])
def test_bad_api_access_is_refused_with_path_and_fix(base, access, message):
    base["cluster"]["apiAccess"] = access
    with pytest.raises(SpecError) as err:
        parse_spec(base, today=TODAY)
    assert message in str(err.value)


def test_an_existing_cluster_refuses_api_access_because_its_group_is_not_in_the_spec(base):
    as_existing(base)
    base["cluster"]["apiAccess"] = {"cidrs": [VPN]}
    with pytest.raises(SpecError, match=r"cluster.apiAccess: only applies to a cluster hyperpod-gov creates: the "
                                        r"spec does not name the existing EKS cluster's security group"):
        parse_spec(base, today=TODAY)


def test_explain_says_who_reaches_the_api_from_where(base):
    base["cluster"]["apiAccess"] = {"cidrs": [VPN], "securityGroupIds": [ADMINS]}
    text = explain(_plan(base))
    assert "Kubernetes API reachable from:" in text
    assert "  private endpoint on 443: 10.8.0.0/16 (Corporate VPN)" in text
    assert "  private endpoint on 443: security group sg-0123456789abcdef0 (Admin subnet hosts)" in text
    assert "  public endpoint: off" in text


def test_diff_marks_a_new_network_as_a_privilege_change(base):
    old = _plan(base)
    base["cluster"]["apiAccess"] = {"cidrs": [VPN]}
    assert governance_changes(old, _plan(base)) == [
        "API access (private endpoint, 443): + 10.8.0.0/16 (Corporate VPN) (privilege: one more network reaches "
        "the Kubernetes API)"]
    assert governance_changes(_plan(base), old) == ["API access (private endpoint, 443): - 10.8.0.0/16 (Corporate VPN)"]


def test_diff_marks_turning_the_tools_policy_on_as_a_privilege_change(base):
    base["teams"][0]["access"]["toolsPolicy"] = False
    old = _plan(base)
    del base["teams"][0]["access"]["toolsPolicy"]
    assert governance_changes(old, _plan(base)) == [
        "team team-a tools policy: off -> on (privilege: the team's viewers and submitters may describe the EKS and "
        "HyperPod clusters and list HyperPod clusters)"]
    assert governance_changes(_plan(base), old) == ["team team-a tools policy: on -> off"]
