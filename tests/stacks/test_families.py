"""Valid means deploys, on every accelerated family: a new cluster with one group of each family the catalog
lists, in a region whose CloudFormation data (cfn-lint's, HPG-I006) offers it, synthesizes with every template
check passing, CDK's own built-in validator included (whose instance-type data is older: issue 22)."""

from __future__ import annotations

import copy

import pytest

from hyperpod_gov import catalog
from hyperpod_gov.spec import SpecError, parse_spec
from hyperpod_gov.spec.cluster_options import cluster_instance_types
from tests.conftest import BASE, TODAY
from tests.synth_helpers import resources, synthesize


def _families() -> dict[str, str]:
    """Accelerated family -> its largest catalogued type."""
    out: dict[str, str] = {}
    for name, t in sorted(catalog.CATALOG.items(), key=lambda kv: (kv[1].family, kv[1].accelerators, kv[0])):
        if t.accelerator_kind:
            out[t.family] = name
    return out


def _plan_regions() -> dict[str, list[str]]:
    """Region -> the family types synthesized there: us-east-1 for every family it offers, and for each other
    family the first region (alphabetically) that offers a type of it. Families no region offers are listed
    apart (they are refused at validate, tested below)."""
    chosen: dict[str, list[str]] = {}
    for family, name in _families().items():
        types = [n for n, t in catalog.CATALOG.items() if t.family == family]
        for region in ["us-east-1", *sorted({"us-east-2", "us-west-2", "eu-west-1", "ap-south-1"})]:
            offered = cluster_instance_types(region) or frozenset()
            hit = next((n for n in sorted(types) if n in offered), None)
            if hit:
                chosen.setdefault(region, []).append(hit)
                break
    return chosen


NOWHERE = sorted(n for n, t in catalog.CATALOG.items() if t.accelerator_kind and not any(
    n in (cluster_instance_types(r) or ()) for r in ("us-east-1", "us-east-2", "us-west-2", "eu-west-1", "ap-south-1",
                                                    "ap-northeast-1", "eu-central-1", "ap-south-2")))


def _spec(region: str, types: list[str]) -> dict:
    data = copy.deepcopy(BASE)
    data["accounts"]["capacity"]["region"] = region
    for c in data["accounts"]["consumers"]:
        c["region"] = region
    data["cluster"]["instanceGroups"] = [
        {"name": f"g{i}-{t.split('.')[1]}", "instanceType": t, "count": 1} for i, t in enumerate(types)]
    for team in data["teams"]:
        team["quota"] = []
        team.pop("sharing", None)
    data.pop("sharedPool", None)
    return data


def test_every_accelerated_family_is_covered_by_a_region_or_refused():
    covered = {catalog.CATALOG[n].family for types in _plan_regions().values() for n in types}
    assert covered | {catalog.CATALOG[n].family for n in NOWHERE} == set(_families())
    assert {"p6-b200", "p6-b300"} <= covered  # the families issue 22 names


@pytest.mark.parametrize("region", sorted(_plan_regions()))
def test_a_cluster_of_every_family_offered_in_the_region_synthesizes(region, tmp_path):
    types = _plan_regions()[region]
    spec = parse_spec(_spec(region, types), today=TODAY)
    synthesized = synthesize(spec, tmp_path)  # raises on any unacknowledged template finding
    (cluster,) = [p for _, p in resources(synthesized.template("capacity"), "AWS::SageMaker::Cluster")]
    assert sorted(g["InstanceType"] for g in cluster["InstanceGroups"]) == sorted(types)


@pytest.mark.parametrize("instance_type", NOWHERE or ["none"])
def test_a_type_no_regions_cloudformation_offers_is_refused_at_validate(instance_type):
    if instance_type == "none":
        pytest.skip("every catalogued accelerated type is offered somewhere")
    with pytest.raises(SpecError) as raised:
        parse_spec(_spec("us-east-1", [instance_type]), today=TODAY)
    assert "HPG-I006 cluster.instanceGroups[0].instanceType: is not offered for HyperPod clusters in us-east-1" in \
        "\n".join(str(i) for i in raised.value.issues)
