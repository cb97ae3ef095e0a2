"""The catalog holds exactly the instance types CloudFormation accepts for compute quotas, with checked facts."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import cfnlint
import pytest

from hyperpod_gov import catalog

GPU, NEURON = catalog.NVIDIA_GPU, catalog.NEURON_DEVICE


@cache
def _compute_quota_schema() -> dict:
    base = Path(cfnlint.__file__).parent / "data" / "schemas"
    provider = json.loads((base / "providers" / "us-west-2.json").read_text())
    return json.loads((base / "resources" / f"{provider['AWS::SageMaker::ComputeQuota']}.json").read_text())


def _compute_quota_instance_types() -> frozenset[str]:
    definitions = _compute_quota_schema()["definitions"]
    return frozenset(definitions["ComputeQuotaResourceConfig"]["properties"]["InstanceType"]["enum"])


def _compute_quota_mig_profiles() -> frozenset[str]:
    return frozenset(_compute_quota_schema()["definitions"]["AcceleratorPartitionConfig"]["properties"]["Type"]["enum"])


def _coverage_gaps(catalogued: set[str], accepted: frozenset[str]) -> str:
    missing, extra = sorted(accepted - catalogued), sorted(catalogued - accepted)
    return "; ".join(
        part
        for part in (
            f"accepted by ComputeQuota but not in the catalog: {missing}; add them to hyperpod_gov/catalog.py"
            if missing
            else "",
            f"in the catalog but not accepted by ComputeQuota: {extra}; remove them" if extra else "",
        )
        if part
    )


def test_catalog_is_exactly_the_compute_quota_instance_types():
    assert _coverage_gaps(set(catalog.CATALOG), _compute_quota_instance_types()) == ""


def test_coverage_check_reports_a_removed_entry():
    accepted = _compute_quota_instance_types()
    removed = _coverage_gaps(set(catalog.CATALOG) - {"ml.p5.48xlarge"}, accepted)
    assert removed == (
        "accepted by ComputeQuota but not in the catalog: ['ml.p5.48xlarge']; add them to hyperpod_gov/catalog.py"
    )
    invented = _coverage_gaps(set(catalog.CATALOG) | {"ml.x9.huge"}, accepted)
    assert invented == "in the catalog but not accepted by ComputeQuota: ['ml.x9.huge']; remove them"


def test_catalog_size_as_of_cfn_lint_1_58():
    # 209 types in 39 families when this was written; shrinking means an entry was dropped.
    assert len(catalog.CATALOG) >= 209
    assert len({t.family for t in catalog.CATALOG.values()}) >= 39


# One size per family, checked by hand against the EC2 specification pages (accelerator count, vCPU, memory GiB),
# the VPC CNI max-pods table and the accelerator model AWS names for the family.
SAMPLES = [
    # name, kind, model, accelerators, vcpu, memory_gib, max_pods
    ("ml.c5.9xlarge", None, None, 0, 36, 72, 234),
    ("ml.c5n.large", None, None, 0, 2, 5, 29),
    ("ml.c6a.48xlarge", None, None, 0, 192, 384, 737),
    ("ml.c6g.medium", None, None, 0, 1, 2, 8),
    ("ml.c6i.32xlarge", None, None, 0, 128, 256, 737),
    ("ml.c7g.16xlarge", None, None, 0, 64, 128, 737),
    ("ml.c8a.16xlarge", None, None, 0, 64, 128, 1010),
    ("ml.c8g.48xlarge", None, None, 0, 192, 384, 737),
    ("ml.g4dn.12xlarge", GPU, "T4", 4, 48, 192, 234),
    ("ml.g5.48xlarge", GPU, "A10G", 8, 192, 768, 345),
    ("ml.g6.16xlarge", GPU, "L4", 1, 64, 256, 737),
    ("ml.g6e.12xlarge", GPU, "L40S", 4, 48, 384, 292),
    ("ml.g7.12xlarge", GPU, "RTX PRO 4500", 2, 48, 192, 758),
    ("ml.g7e.12xlarge", GPU, "RTX PRO 6000", 2, 48, 512, 632),
    ("ml.gr6.8xlarge", GPU, "L4", 1, 32, 256, 234),
    ("ml.i3en.3xlarge", None, None, 0, 12, 96, 58),
    ("ml.m5.large", None, None, 0, 2, 8, 29),
    ("ml.m6a.32xlarge", None, None, 0, 128, 512, 737),
    ("ml.m6g.medium", None, None, 0, 1, 4, 8),
    ("ml.m6i.24xlarge", None, None, 0, 96, 384, 737),
    ("ml.m7g.12xlarge", None, None, 0, 48, 192, 234),
    ("ml.m7i.48xlarge", None, None, 0, 192, 768, 737),
    ("ml.m8a.16xlarge", None, None, 0, 64, 256, 1010),
    ("ml.m8g.medium", None, None, 0, 1, 4, 8),
    ("ml.p4d.24xlarge", GPU, "A100", 8, 96, 1152, 737),
    ("ml.p4de.24xlarge", GPU, "A100-80GB", 8, 96, 1152, 737),
    ("ml.p5.4xlarge", GPU, "H100", 1, 16, 256, 118),
    ("ml.p5e.48xlarge", GPU, "H200", 8, 192, 2048, 100),
    ("ml.p5en.48xlarge", GPU, "H200", 8, 192, 2048, 198),
    ("ml.p6-b200.48xlarge", GPU, "B200", 8, 192, 2048, 198),
    ("ml.p6-b300.48xlarge", GPU, "B300", 8, 192, 4096, 198),
    ("ml.p6e-gb200.36xlarge", GPU, "GB200", 4, 144, 960, None),
    ("ml.r5d.16xlarge", None, None, 0, 64, 512, 737),
    ("ml.r6i.large", None, None, 0, 2, 16, 29),
    ("ml.r7i.48xlarge", None, None, 0, 192, 1536, 737),
    ("ml.t3.medium", None, None, 0, 2, 4, 17),
    ("ml.trn1n.32xlarge", NEURON, "Trainium", 16, 128, 512, 247),
    ("ml.trn1.32xlarge", NEURON, "Trainium", 16, 128, 512, 247),
    ("ml.trn2.3xlarge", NEURON, "Trainium2", 1, 12, 128, 30),
]


def test_samples_cover_every_family():
    assert {name.split(".")[1] for name, *_ in SAMPLES} == {t.family for t in catalog.CATALOG.values()}


@pytest.mark.parametrize(("name", "kind", "model", "accelerators", "vcpu", "memory_gib", "max_pods"), SAMPLES)
def test_hand_checked_facts(name, kind, model, accelerators, vcpu, memory_gib, max_pods):
    t = catalog.lookup(name)
    assert (t.accelerator_kind, t.accelerator_model, t.accelerators, t.vcpu, t.memory_gib, t.max_pods) == (
        kind,
        model,
        accelerators,
        vcpu,
        memory_gib,
        max_pods,
    )


# The entries that existed before the catalog covered every ComputeQuota type; the plan snapshots depend on
# their accelerators, vCPU and memory, so these must not drift.
ORIGINAL = {
    "ml.g5.xlarge": (1, 4, 16), "ml.g5.2xlarge": (1, 8, 32), "ml.g5.4xlarge": (1, 16, 64),
    "ml.g5.8xlarge": (1, 32, 128), "ml.g5.12xlarge": (4, 48, 192), "ml.g5.16xlarge": (1, 64, 256),
    "ml.g5.24xlarge": (4, 96, 384), "ml.g5.48xlarge": (8, 192, 768),
    "ml.g6.xlarge": (1, 4, 16), "ml.g6.2xlarge": (1, 8, 32), "ml.g6.4xlarge": (1, 16, 64),
    "ml.g6.8xlarge": (1, 32, 128), "ml.g6.12xlarge": (4, 48, 192), "ml.g6.16xlarge": (1, 64, 256),
    "ml.g6.24xlarge": (4, 96, 384), "ml.g6.48xlarge": (8, 192, 768),
    "ml.g6e.xlarge": (1, 4, 32), "ml.g6e.2xlarge": (1, 8, 64), "ml.g6e.4xlarge": (1, 16, 128),
    "ml.g6e.8xlarge": (1, 32, 256), "ml.g6e.12xlarge": (4, 48, 384), "ml.g6e.16xlarge": (1, 64, 512),
    "ml.g6e.24xlarge": (4, 96, 768), "ml.g6e.48xlarge": (8, 192, 1536),
    "ml.p4d.24xlarge": (8, 96, 1152), "ml.p4de.24xlarge": (8, 96, 1152), "ml.p5.4xlarge": (1, 16, 256),
    "ml.p5.48xlarge": (8, 192, 2048), "ml.p5e.48xlarge": (8, 192, 2048), "ml.p5en.48xlarge": (8, 192, 2048),
    "ml.trn1.32xlarge": (16, 128, 512), "ml.trn1n.32xlarge": (16, 128, 512), "ml.trn2.3xlarge": (1, 12, 128),
    "ml.trn2.48xlarge": (16, 192, 2048),
    "ml.c5.large": (0, 2, 4), "ml.c5.xlarge": (0, 4, 8), "ml.c5.2xlarge": (0, 8, 16), "ml.c5.4xlarge": (0, 16, 32),
    "ml.c5.9xlarge": (0, 36, 72), "ml.c5.12xlarge": (0, 48, 96), "ml.c5.18xlarge": (0, 72, 144),
    "ml.c5.24xlarge": (0, 96, 192),
    "ml.m5.large": (0, 2, 8), "ml.m5.xlarge": (0, 4, 16), "ml.m5.2xlarge": (0, 8, 32), "ml.m5.4xlarge": (0, 16, 64),
    "ml.m5.8xlarge": (0, 32, 128), "ml.m5.12xlarge": (0, 48, 192), "ml.m5.16xlarge": (0, 64, 256),
    "ml.m5.24xlarge": (0, 96, 384),
    "ml.t3.medium": (0, 2, 4), "ml.t3.large": (0, 2, 8), "ml.t3.xlarge": (0, 4, 16), "ml.t3.2xlarge": (0, 8, 32),
}  # fmt: skip


def test_original_entries_keep_their_quota_facts():
    drift = {
        name: (t.accelerators, t.vcpu, t.memory_gib)
        for name, want in ORIGINAL.items()
        if (t := catalog.lookup(name)) and (t.accelerators, t.vcpu, t.memory_gib) != want
    }
    assert drift == {}


def test_facts_are_consistent():
    for t in catalog.CATALOG.values():
        assert t.vcpu > 0 and t.memory_gib > 0, t.name
        assert t.max_pods is None or t.max_pods > 0, t.name
        assert (t.accelerators > 0) == (t.accelerator_kind is not None) == (t.accelerator_model is not None), t.name
        assert not t.mig_profiles or t.accelerator_kind == catalog.NVIDIA_GPU, t.name
    assert [t.name for t in catalog.CATALOG.values() if t.max_pods is None] == ["ml.p6e-gb200.36xlarge"]
    assert catalog.lookup("ml.p5.48xlarge").accelerators == 8
    assert catalog.lookup("ml.trn1.32xlarge").accelerator_kind == catalog.NEURON_DEVICE


def test_every_family_cites_its_sources():
    assert set(catalog.SOURCES) == {t.family for t in catalog.CATALOG.values()}
    assert catalog.SOURCES["p5"] == (
        "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html",
        catalog.MIG_GUIDE,
        catalog.HYPERPOD_MIG,
    )
    assert catalog.SOURCES["g7e"] == ("https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html", catalog.MIG_GUIDE)
    assert catalog.SOURCES["r7i"] == ("https://docs.aws.amazon.com/ec2/latest/instancetypes/mo.html",)
    assert catalog.SOURCES["g5"] == ("https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html",)


def _profiles(name: str) -> dict[str, int]:
    return {p.name: p.per_gpu for p in catalog.lookup(name).mig_profiles}


# Per GPU model, checked against the NVIDIA MIG User Guide and mig-parted's per-GPU configuration.
MIG_BY_MODEL = {
    "ml.p4d.24xlarge": {  # A100 40 GB
        "mig-1g.5gb": 7, "mig-1g.10gb": 4, "mig-2g.10gb": 3, "mig-3g.20gb": 2, "mig-4g.20gb": 1, "mig-7g.40gb": 1,
    },
    "ml.p4de.24xlarge": {  # A100 80 GB
        "mig-1g.10gb": 7, "mig-1g.20gb": 4, "mig-2g.20gb": 3, "mig-3g.40gb": 2, "mig-4g.40gb": 1, "mig-7g.80gb": 1,
    },
    "ml.p5.48xlarge": {  # H100 80 GB
        "mig-1g.10gb": 7, "mig-1g.20gb": 4, "mig-2g.20gb": 3, "mig-3g.40gb": 2, "mig-4g.40gb": 1, "mig-7g.80gb": 1,
    },
    "ml.p5en.48xlarge": {  # H200 141 GB
        "mig-1g.18gb": 7, "mig-1g.35gb": 4, "mig-2g.35gb": 3, "mig-3g.71gb": 2, "mig-4g.71gb": 1, "mig-7g.141gb": 1,
    },
    "ml.p6-b200.48xlarge": {  # B200 180 GB
        "mig-1g.23gb": 7, "mig-1g.45gb": 4, "mig-2g.45gb": 3, "mig-3g.90gb": 2, "mig-4g.90gb": 1, "mig-7g.180gb": 1,
    },
    "ml.p6e-gb200.36xlarge": {  # GB200 186 GB
        "mig-1g.23gb": 7, "mig-1g.47gb": 4, "mig-2g.47gb": 3, "mig-3g.93gb": 2, "mig-4g.93gb": 1, "mig-7g.186gb": 1,
    },
    "ml.p6-b300.48xlarge": {  # B300, about 269 GB usable
        "mig-1g.34gb": 7, "mig-1g.67gb": 4, "mig-2g.67gb": 3, "mig-3g.135gb": 2, "mig-4g.135gb": 1,
        "mig-7g.269gb": 1,
    },
    "ml.g7e.48xlarge": {"mig-1g.24gb": 4, "mig-2g.48gb": 2, "mig-4g.96gb": 1},  # RTX PRO 6000 96 GB
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MIG_BY_MODEL))
def test_mig_profiles_per_gpu_model(name):
    assert _profiles(name) == MIG_BY_MODEL[name]


def test_same_gpu_model_same_mig_profiles():
    by_model: dict[str, set[tuple[catalog.MigProfile, ...]]] = {}
    for t in catalog.CATALOG.values():
        by_model.setdefault(t.accelerator_model or "", set()).add(t.mig_profiles)
    assert {model: len(sets) for model, sets in by_model.items() if len(sets) > 1} == {}


@pytest.mark.parametrize("model", ["A10G", "L4", "L40S", "T4", "Trainium", "Trainium2", "RTX PRO 4500", ""])
def test_no_mig_where_the_accelerator_has_none_or_it_is_not_catalogued(model):
    assert [t.name for t in catalog.CATALOG.values() if t.accelerator_model == (model or None) and t.mig_profiles] == []


def test_mig_slices_fit_on_one_gpu():
    # A profile "<g>g.<mem>gb" uses g compute slices; all partitions of one profile must fit the GPU's slices
    # (7 on A100/H100/H200/Blackwell data-centre GPUs, 4 on RTX PRO 6000).
    for t in catalog.CATALOG.values():
        if not t.mig_profiles:
            continue
        slices = max(int(re.match(r"mig-(\d)g", p.name).group(1)) for p in t.mig_profiles)
        for p in t.mig_profiles:
            assert int(re.match(r"mig-(\d)g", p.name).group(1)) * p.per_gpu <= slices, (t.name, p)


def test_two_p5_instances_offer_112_one_g_partitions():
    # 2 x ml.p5.48xlarge = 16 H100 GPUs, 7 mig-1g.10gb each.
    assert 2 * catalog.mig_partitions("ml.p5.48xlarge", "mig-1g.10gb") == 112


@pytest.mark.parametrize(
    ("instance_type", "profile", "partitions"),
    [
        ("ml.p5.48xlarge", "mig-1g.10gb", 56),
        ("ml.p5.48xlarge", "nvidia.com/mig-3g.40gb", 16),
        ("ml.p5.4xlarge", "mig-1g.20gb", 4),
        ("ml.p4d.24xlarge", "mig-1g.5gb", 56),
        ("ml.p4d.24xlarge", "mig-1g.10gb", 32),
        ("ml.p5e.48xlarge", "mig-7g.141gb", 8),
        ("ml.p6e-gb200.36xlarge", "mig-1g.23gb", 28),
        ("ml.g7e.12xlarge", "mig-1g.24gb", 8),
        ("ml.p6-b300.48xlarge", "mig-1g.34gb", 56),
        ("ml.p4d.24xlarge", "mig-1g.10gb+me", None),
        ("ml.p4d.24xlarge", "mig-7g.80gb", None),  # an 80 GB profile on a 40 GB GPU
        ("ml.g5.48xlarge", "mig-1g.10gb", None),
        ("ml.m5.large", "mig-1g.10gb", None),
    ],
)
def test_mig_partitions(instance_type, profile, partitions):
    assert catalog.mig_partitions(instance_type, profile) == partitions


def test_mig_partitions_rejects_an_unknown_instance_type():
    with pytest.raises(KeyError):
        catalog.mig_partitions("ml.p9.48xlarge", "mig-1g.10gb")


def test_mig_profile_resource_name():
    assert catalog.lookup("ml.p5.48xlarge").mig_profiles[0].resource == "nvidia.com/mig-1g.10gb"
    assert "mig-1g.10gb" in catalog.known_mig_profiles() and "mig-1g.24gb" in catalog.known_mig_profiles()


def test_hyperpod_mig_types_have_mig_profiles():
    assert sorted(t for t in catalog.HYPERPOD_MIG_TYPES if not catalog.lookup(t).mig_profiles) == []


def test_compute_quota_mig_profiles_match_cloudformation():
    assert catalog.COMPUTE_QUOTA_MIG_PROFILES == _compute_quota_mig_profiles()


def test_every_mig_profile_cloudformation_accepts_is_offered_by_a_hyperpod_mig_type():
    offered = {p.name for t in catalog.HYPERPOD_MIG_TYPES for p in catalog.lookup(t).mig_profiles}
    assert sorted(catalog.COMPUTE_QUOTA_MIG_PROFILES - offered) == []
    # What CloudFormation cannot express yet (cfn-lint 1.58): B300 partitions.
    assert sorted(offered - catalog.COMPUTE_QUOTA_MIG_PROFILES) == [
        "mig-1g.34gb", "mig-1g.67gb", "mig-2g.67gb", "mig-3g.135gb", "mig-4g.135gb", "mig-7g.269gb",
    ]  # fmt: skip


def test_task_governance_regions_match_cloudformation():
    base = Path(cfnlint.__file__).parent / "data" / "schemas" / "providers"
    needed = ("AWS::SageMaker::ClusterSchedulerConfig", "AWS::SageMaker::ComputeQuota", "AWS::SageMaker::Cluster")
    offered = {p.stem for p in base.glob("*.json") if all(t in json.loads(p.read_text()) for t in needed)}
    assert catalog.TASK_GOVERNANCE_REGIONS == offered


def test_catalog_value_adds_declared_types_without_touching_the_module_catalog():
    declared = catalog.InstanceType("ml.example.48xlarge", GPU, None, 8, 192, 2048, None,
                                    (catalog.MigProfile("mig-1g.10gb", 7),))
    shadow = catalog.InstanceType("ml.p5.48xlarge", GPU, None, 1, 1, 1, None)
    cat = catalog.Catalog.with_declared({declared.name: declared, shadow.name: shadow})
    assert cat.declared == frozenset({"ml.example.48xlarge"})  # a catalogued name keeps the catalogued facts
    assert cat.lookup("ml.p5.48xlarge") is catalog.lookup("ml.p5.48xlarge")
    assert cat.mig_partitions("ml.example.48xlarge", "nvidia.com/mig-1g.10gb") == 56
    assert "ml.example.48xlarge" in cat.known_types() and "ml.example.48xlarge" in cat
    assert "ml.example.48xlarge" not in catalog.CATALOG and catalog.BASE.get("ml.example.48xlarge") is None
    assert catalog.Catalog.with_declared({}) is catalog.BASE
    with pytest.raises(KeyError):
        cat.lookup("ml.p9.48xlarge")
