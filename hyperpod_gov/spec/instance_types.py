"""Instance types the catalog does not know yet, declared in the spec (``instanceTypes``).

A declared type is usable wherever a catalogued one is (instance groups, quotas, rules, the plan, both
scheduler modes); the rules warn that the catalog lacks it. ``spec_catalog`` is the one place that turns a
spec into the ``catalog.Catalog`` every lookup goes through.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Literal, Optional

from pydantic import AfterValidator, Field, model_validator

from .. import catalog
from ._base import SpecModel, spec_error

if TYPE_CHECKING:
    from .models import GovernanceSpec

# ml.<family>.<size>: the shape of every HyperPod instance type (family letters, digits and '-', e.g. p6e-gb200).
INSTANCE_TYPE = re.compile(r"\Aml\.[a-z][a-z0-9-]{0,31}\.[a-z0-9]{1,16}\Z", re.ASCII)
MIG_PROFILE = re.compile(r"\Amig-[1-9]g\.[0-9]{1,4}gb\Z", re.ASCII)


def check_instance_type_name(value: str) -> str:
    """The format of an instance type; whether the catalog (or the spec) knows it is a rule (``rules/``)."""
    if not INSTANCE_TYPE.match(value):
        raise spec_error("is not a HyperPod instance type name", "write it as ml.<family>.<size>, e.g. ml.p5.48xlarge")
    return value


# An instance type name in a quota or an instance group: format checked here, existence by the rule
# ``instance_types_are_known`` (which sees the spec's ``instanceTypes``).
InstanceTypeRef = Annotated[str, AfterValidator(check_instance_type_name)]
MigProfileName = Annotated[str, AfterValidator(lambda v: check_mig_profile(v))]


def check_mig_profile(value: str) -> str:
    if not MIG_PROFILE.match(value):
        raise spec_error("is not a MIG profile name", "write it as HyperPod does, e.g. mig-1g.10gb")
    return value


class InstanceTypeFacts(SpecModel):
    """What one instance of a type the catalog lacks brings to a quota."""

    accelerators: int = Field(default=0, ge=0, le=64, description="Accelerators per instance (default: 0, CPU only).")
    accelerator_kind: Optional[Literal["nvidia.com/gpu", "aws.amazon.com/neurondevice"]] = Field(
        default=None,
        description="Kubernetes extended resource of the accelerators: nvidia.com/gpu or aws.amazon.com/neurondevice "
        "(required with accelerators).",
    )
    vcpu: int = Field(ge=1, le=4096, description="vCPUs per instance.")
    memory_gib: int = Field(ge=1, le=65536, description="Memory per instance in GiB.")
    mig_profiles: dict[MigProfileName, int] = Field(
        default_factory=dict,
        description="MIG profiles one GPU offers, with how many partitions of each fit one GPU "
        "(e.g. {mig-1g.10gb: 7}); only for nvidia.com/gpu (default: none).",
    )

    @model_validator(mode="after")
    def _consistent(self) -> "InstanceTypeFacts":
        if self.accelerators and self.accelerator_kind is None:
            raise spec_error("gives accelerators without acceleratorKind",
                             "add acceleratorKind: nvidia.com/gpu (or aws.amazon.com/neurondevice)")
        if not self.accelerators and self.accelerator_kind is not None:
            raise spec_error("gives acceleratorKind without accelerators", "add accelerators: N, or remove the kind")
        if self.mig_profiles and self.accelerator_kind != catalog.NVIDIA_GPU:
            raise spec_error("gives MIG profiles for a type without NVIDIA GPUs",
                             "remove migProfiles, or declare acceleratorKind: nvidia.com/gpu")
        for name, per_gpu in self.mig_profiles.items():
            if not 1 <= per_gpu <= 7:
                raise spec_error(f"gives {per_gpu} partitions of {name} per GPU", "MIG fits 1 to 7 per GPU")
        return self

    def instance_type(self, name: str) -> catalog.InstanceType:
        return catalog.InstanceType(
            name=name,
            accelerator_kind=self.accelerator_kind,
            accelerator_model=None,
            accelerators=self.accelerators,
            vcpu=self.vcpu,
            memory_gib=self.memory_gib,
            max_pods=None,
            mig_profiles=tuple(catalog.MigProfile(p, n) for p, n in sorted(self.mig_profiles.items())),
        )





def spec_catalog(spec: "GovernanceSpec") -> catalog.Catalog:
    """The catalog this spec sees: every catalogued type plus the ones it declares."""
    declared = getattr(spec, "instance_types", None) or {}
    return catalog.Catalog.with_declared({name: f.instance_type(name) for name, f in declared.items()})




def group_mig_profiles(spec: "GovernanceSpec") -> dict[str, Optional[str]]:
    """Per instance type of the cluster, the MIG profile its GPUs are partitioned into (None: whole GPUs).

    The rules keep every group of one type on the same setting; the first group decides otherwise.
    """
    out: dict[str, Optional[str]] = {}
    for g in spec.cluster.instance_groups:
        out.setdefault(g.instance_type, g.mig.profile if g.mig else None)
    return out


Units = tuple[int, int, int, tuple[tuple[str, int], ...]]  # accelerators, vCPU, GiB, ((MIG resource, count),)


def allocation_units(facts: catalog.InstanceType, *, count: Optional[int] = None,
                     accelerators: Optional[int] = None, vcpu: Optional[int] = None,
                     memory_gib: Optional[int] = None, partition: Optional[tuple[str, int]] = None,
                     mig_profile: Optional[str] = None) -> Units:
    """What one allocation on a type brings, the one arithmetic of rules and plan (``plan.quotas.Amounts``).

    Whole instances bring all of their resources (their GPUs as partitions of ``mig_profile`` when the type's
    groups are partitioned); accelerators and partitions bring vCPU and memory pro rata (a partition is
    1/per-GPU of a GPU), rounded down; vCPU with memory bring just those.
    """
    if vcpu is not None:
        return 0, vcpu, memory_gib or 0, ()
    if partition is not None:
        profile, n = partition
        found = facts.mig_profile(profile)
        slices = facts.accelerators * (found.per_gpu if found else 1) or 1
        resource = f"nvidia.com/{profile.removeprefix('nvidia.com/')}"
        return 0, n * facts.vcpu // slices, n * facts.memory_gib // slices, ((resource, n),)
    if accelerators is not None:
        per = facts.accelerators or 1
        return accelerators, accelerators * facts.vcpu // per, accelerators * facts.memory_gib // per, ()
    n = count or 0
    found = facts.mig_profile(mig_profile) if mig_profile else None
    if found is not None:
        return 0, n * facts.vcpu, n * facts.memory_gib, ((found.resource, n * facts.accelerators * found.per_gpu),)
    return n * facts.accelerators, n * facts.vcpu, n * facts.memory_gib, ()
