"""Facts per HyperPod instance type that quota arithmetic relies on.

Every entry is a type that CloudFormation accepts for
``AWS::SageMaker::ComputeQuota`` (a test cross-checks this against the schema
that cfn-lint ships). Memory is the instance's nominal memory in GiB, vCPU its
nominal vCPU count; Kubernetes allocatable is lower, which Kueue's quota does
not need to know because the nodes themselves cap what is scheduled.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

NVIDIA_GPU = "nvidia.com/gpu"
NEURON_DEVICE = "aws.amazon.com/neurondevice"


@dataclass(frozen=True)
class InstanceType:
    """What one instance of a HyperPod instance type brings to a quota."""

    name: str
    accelerator_kind: str | None  # Kubernetes extended resource, None for CPU-only
    accelerator_model: str | None
    accelerators: int
    vcpu: int
    memory_gib: int
    max_pods: int  # VPC CNI limit without prefix delegation (ENIs x (IPs - 1) + 2)

    @property
    def family(self) -> str:
        return self.name.split(".")[1]


def _gpu(name: str, model: str, gpus: int, vcpu: int, mem: int, pods: int) -> InstanceType:
    return InstanceType(name, NVIDIA_GPU, model, gpus, vcpu, mem, pods)


def _neuron(name: str, model: str, chips: int, vcpu: int, mem: int, pods: int) -> InstanceType:
    return InstanceType(name, NEURON_DEVICE, model, chips, vcpu, mem, pods)


def _cpu(name: str, vcpu: int, mem: int, pods: int) -> InstanceType:
    return InstanceType(name, None, None, 0, vcpu, mem, pods)


_ENTRIES: tuple[InstanceType, ...] = (
    # NVIDIA A10G
    _gpu("ml.g5.xlarge", "A10G", 1, 4, 16, 58),
    _gpu("ml.g5.2xlarge", "A10G", 1, 8, 32, 58),
    _gpu("ml.g5.4xlarge", "A10G", 1, 16, 64, 234),
    _gpu("ml.g5.8xlarge", "A10G", 1, 32, 128, 234),
    _gpu("ml.g5.12xlarge", "A10G", 4, 48, 192, 737),
    _gpu("ml.g5.16xlarge", "A10G", 1, 64, 256, 234),
    _gpu("ml.g5.24xlarge", "A10G", 4, 96, 384, 737),
    _gpu("ml.g5.48xlarge", "A10G", 8, 192, 768, 345),
    # NVIDIA L4
    _gpu("ml.g6.xlarge", "L4", 1, 4, 16, 58),
    _gpu("ml.g6.2xlarge", "L4", 1, 8, 32, 58),
    _gpu("ml.g6.4xlarge", "L4", 1, 16, 64, 234),
    _gpu("ml.g6.8xlarge", "L4", 1, 32, 128, 234),
    _gpu("ml.g6.12xlarge", "L4", 4, 48, 192, 234),
    _gpu("ml.g6.16xlarge", "L4", 1, 64, 256, 737),
    _gpu("ml.g6.24xlarge", "L4", 4, 96, 384, 737),
    _gpu("ml.g6.48xlarge", "L4", 8, 192, 768, 737),
    # NVIDIA L40S
    _gpu("ml.g6e.xlarge", "L40S", 1, 4, 32, 58),
    _gpu("ml.g6e.2xlarge", "L40S", 1, 8, 64, 58),
    _gpu("ml.g6e.4xlarge", "L40S", 1, 16, 128, 234),
    _gpu("ml.g6e.8xlarge", "L40S", 1, 32, 256, 234),
    _gpu("ml.g6e.12xlarge", "L40S", 4, 48, 384, 234),
    _gpu("ml.g6e.16xlarge", "L40S", 1, 64, 512, 737),
    _gpu("ml.g6e.24xlarge", "L40S", 4, 96, 768, 737),
    _gpu("ml.g6e.48xlarge", "L40S", 8, 192, 1536, 737),
    # NVIDIA A100 / H100 / H200
    _gpu("ml.p4d.24xlarge", "A100", 8, 96, 1152, 737),
    _gpu("ml.p4de.24xlarge", "A100-80GB", 8, 96, 1152, 737),
    _gpu("ml.p5.4xlarge", "H100", 1, 16, 256, 58),
    _gpu("ml.p5.48xlarge", "H100", 8, 192, 2048, 100),
    _gpu("ml.p5e.48xlarge", "H200", 8, 192, 2048, 100),
    _gpu("ml.p5en.48xlarge", "H200", 8, 192, 2048, 100),
    # AWS Trainium (accelerators are Neuron devices, i.e. chips)
    _neuron("ml.trn1.32xlarge", "Trainium", 16, 128, 512, 247),
    _neuron("ml.trn1n.32xlarge", "Trainium", 16, 128, 512, 247),
    _neuron("ml.trn2.3xlarge", "Trainium2", 1, 12, 128, 58),
    _neuron("ml.trn2.48xlarge", "Trainium2", 16, 192, 2048, 100),
    # CPU
    _cpu("ml.c5.large", 2, 4, 29),
    _cpu("ml.c5.xlarge", 4, 8, 58),
    _cpu("ml.c5.2xlarge", 8, 16, 58),
    _cpu("ml.c5.4xlarge", 16, 32, 234),
    _cpu("ml.c5.9xlarge", 36, 72, 234),
    _cpu("ml.c5.12xlarge", 48, 96, 234),
    _cpu("ml.c5.18xlarge", 72, 144, 737),
    _cpu("ml.c5.24xlarge", 96, 192, 737),
    _cpu("ml.m5.large", 2, 8, 29),
    _cpu("ml.m5.xlarge", 4, 16, 58),
    _cpu("ml.m5.2xlarge", 8, 32, 58),
    _cpu("ml.m5.4xlarge", 16, 64, 234),
    _cpu("ml.m5.8xlarge", 32, 128, 234),
    _cpu("ml.m5.12xlarge", 48, 192, 234),
    _cpu("ml.m5.16xlarge", 64, 256, 737),
    _cpu("ml.m5.24xlarge", 96, 384, 737),
    _cpu("ml.t3.medium", 2, 4, 17),
    _cpu("ml.t3.large", 2, 8, 35),
    _cpu("ml.t3.xlarge", 4, 16, 58),
    _cpu("ml.t3.2xlarge", 8, 32, 58),
)

CATALOG: Mapping[str, InstanceType] = MappingProxyType({e.name: e for e in _ENTRIES})


def lookup(name: str) -> InstanceType:
    """Return the facts for ``name``; raises ``KeyError`` for an unknown type."""
    return CATALOG[name]


def known_types() -> tuple[str, ...]:
    """Every instance type the spec accepts, sorted."""
    return tuple(sorted(CATALOG))


# Regions where CloudFormation offers both AWS::SageMaker::ClusterSchedulerConfig and
# AWS::SageMaker::ComputeQuota (task-governance mode). A test keeps this in step with
# the resource specification cfn-lint ships.
TASK_GOVERNANCE_REGIONS: frozenset[str] = frozenset(
    {
        "ap-south-1",
        "eu-central-1",
        "eu-isoe-west-1",
        "eusc-de-east-1",
        "us-east-1",
        "us-iso-east-1",
        "us-iso-west-1",
        "us-isob-east-1",
        "us-isob-west-1",
        "us-isof-east-1",
        "us-isof-south-1",
    }
)
