"""The catalog matches the instance types CloudFormation accepts for compute quotas."""

from __future__ import annotations

import json
from pathlib import Path

import cfnlint
import pytest

from hyperpod_gov import catalog

FAMILIES = ["g5", "g6", "g6e", "p4d", "p4de", "p5", "p5e", "p5en", "trn1", "trn1n", "trn2", "c5", "m5", "t3"]


def _compute_quota_instance_types() -> set[str]:
    base = Path(cfnlint.__file__).parent / "data" / "schemas"
    provider = json.loads((base / "providers" / "us-west-2.json").read_text())
    schema = json.loads((base / "resources" / f"{provider['AWS::SageMaker::ComputeQuota']}.json").read_text())
    return set(schema["definitions"]["ComputeQuotaResourceConfig"]["properties"]["InstanceType"]["enum"])


def test_every_catalog_type_is_accepted_by_cloudformation_compute_quota():
    accepted = _compute_quota_instance_types()
    unknown = sorted(set(catalog.CATALOG) - accepted)
    assert not unknown, f"not HyperPod ComputeQuota instance types: {unknown}"


@pytest.mark.parametrize("family", FAMILIES)
def test_catalog_covers_every_size_of_each_required_family(family):
    accepted = {t for t in _compute_quota_instance_types() if t.split(".")[1] == family}
    assert accepted, family
    assert accepted <= set(catalog.CATALOG), sorted(accepted - set(catalog.CATALOG))


def test_facts_are_consistent():
    for t in catalog.CATALOG.values():
        assert t.vcpu > 0 and t.memory_gib > 0 and t.max_pods > 0
        assert (t.accelerators > 0) == (t.accelerator_kind is not None), t.name
    assert catalog.lookup("ml.p5.48xlarge").accelerators == 8
    assert catalog.lookup("ml.trn1.32xlarge").accelerator_kind == catalog.NEURON_DEVICE


def test_task_governance_regions_match_cloudformation():
    base = Path(cfnlint.__file__).parent / "data" / "schemas" / "providers"
    needed = ("AWS::SageMaker::ClusterSchedulerConfig", "AWS::SageMaker::ComputeQuota", "AWS::SageMaker::Cluster")
    offered = {p.stem for p in base.glob("*.json") if all(t in json.loads(p.read_text()) for t in needed)}
    assert catalog.TASK_GOVERNANCE_REGIONS == offered
