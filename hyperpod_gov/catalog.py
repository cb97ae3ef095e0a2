"""Facts per HyperPod instance type that quota arithmetic relies on.

The catalog holds exactly the instance types CloudFormation accepts for
``AWS::SageMaker::ComputeQuota`` (a test compares it with the schema cfn-lint
ships, so a cfn-lint upgrade that adds a type fails until the type is added
here). Memory is the instance's nominal memory in GiB, vCPU its nominal vCPU
count; Kubernetes allocatable is lower, which Kueue's quota does not need to
know because the nodes themselves cap what is scheduled.

Where the facts come from (``SOURCES`` names the pages per family):

- vCPU, memory and accelerator count: the Amazon EC2 instance type
  specifications (``EC2_SPECS``), transcribed from the EC2 DescribeInstanceTypes
  data as published in the AWS Karpenter provider's generated instance type
  reference (github.com/aws/karpenter-provider-aws,
  website/content/en/preview/reference/instance-types.md, 2026-08-21) and
  checked against ``INSTANCE_RESOURCES`` of AWS's HyperPod CLI
  (github.com/aws/sagemaker-hyperpod-cli,
  src/sagemaker/hyperpod/training/constants.py, 2026-06-22). Every value agrees
  between the two except ml.c5n.large memory (see its entry); ml.trn2.3xlarge
  and ml.p6e-gb200.36xlarge are missing from the Karpenter table and rest on
  the HyperPod CLI alone (see their entries).
- max pods: ``misc/eni-max-pods.txt`` of the Amazon VPC CNI
  (github.com/aws/amazon-vpc-cni-k8s, 2026-08-20), generated from the EC2 API
  with ENIs x (IPv4 per ENI - 1) + 2.
- MIG profiles and partitions per GPU: the NVIDIA MIG User Guide
  (``MIG_GUIDE``) and the per-GPU tables of NVIDIA's mig-parted default
  configuration (github.com/NVIDIA/mig-parted,
  deployments/systemd/config-default.yaml, 2026-08-21); the profile sets per
  instance type agree with ``INSTANCE_TYPE_MIG_PROFILES`` of AWS's HyperPod CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

NVIDIA_GPU = "nvidia.com/gpu"
NEURON_DEVICE = "aws.amazon.com/neurondevice"

EC2_SPECS = "https://docs.aws.amazon.com/ec2/latest/instancetypes/"
MIG_GUIDE = "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html"
HYPERPOD_MIG = "https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-eks-gpu-partitioning.html"


@dataclass(frozen=True)
class MigProfile:
    """One NVIDIA Multi-Instance GPU profile of a GPU model.

    ``name`` is the profile as HyperPod and the GPU operator's mixed strategy
    name it (the extended resource is ``nvidia.com/<name>``); ``per_gpu`` is how
    many partitions of this profile alone fit on one GPU.
    """

    name: str
    per_gpu: int

    @property
    def resource(self) -> str:
        """The Kubernetes extended resource, e.g. ``nvidia.com/mig-1g.10gb``."""
        return f"nvidia.com/{self.name}"


def _mig(*profiles: tuple[str, int]) -> tuple[MigProfile, ...]:
    return tuple(MigProfile(f"mig-{name}", n) for name, n in profiles)


# Per GPU model, the profiles without media extensions (+me, +gfx and -me variants are left out: at most one of
# them fits a GPU and HyperPod does not list them). Counts are "Number of Instances Available" in the MIG User
# Guide tables and the all-<profile> entries of mig-parted's default configuration.
# A100-SXM4-40GB (PCI id 0x20B0): 1g.10gb gives 4 per GPU on the 40 GB part.
_MIG_A100_40GB = _mig(("1g.5gb", 7), ("1g.10gb", 4), ("2g.10gb", 3), ("3g.20gb", 2), ("4g.20gb", 1), ("7g.40gb", 1))
# A100-SXM4-80GB and H100-SXM5-80GB share one profile set.
_MIG_80GB = _mig(("1g.10gb", 7), ("1g.20gb", 4), ("2g.20gb", 3), ("3g.40gb", 2), ("4g.40gb", 1), ("7g.80gb", 1))
# H200-SXM5 141 GB (0x2335).
_MIG_H200_141GB = _mig(("1g.18gb", 7), ("1g.35gb", 4), ("2g.35gb", 3), ("3g.71gb", 2), ("4g.71gb", 1), ("7g.141gb", 1))
# B200 180 GB (0x2901).
_MIG_B200_180GB = _mig(("1g.23gb", 7), ("1g.45gb", 4), ("2g.45gb", 3), ("3g.90gb", 2), ("4g.90gb", 1), ("7g.180gb", 1))
# GB200 186 GB (0x2941).
_MIG_GB200_186GB = _mig(("1g.23gb", 7), ("1g.47gb", 4), ("2g.47gb", 3), ("3g.93gb", 2), ("4g.93gb", 1), ("7g.186gb", 1))
# B300 288 GB (0x3182); the MIG User Guide read here predates B300, the counts are mig-parted's.
_MIG_B300_269GB = _mig(
    ("1g.34gb", 7), ("1g.67gb", 4), ("2g.67gb", 3), ("3g.135gb", 2), ("4g.135gb", 1), ("7g.269gb", 1)
)
# RTX PRO 6000 Blackwell Server Edition 96 GB (0x2BB5): at most 4 instances.
_MIG_RTX_PRO_6000_96GB = _mig(("1g.24gb", 4), ("2g.48gb", 2), ("4g.96gb", 1))


@dataclass(frozen=True)
class InstanceType:
    """What one instance of a HyperPod instance type brings to a quota."""

    name: str
    accelerator_kind: str | None  # Kubernetes extended resource, None for CPU-only
    accelerator_model: str | None
    accelerators: int
    vcpu: int
    memory_gib: int
    # VPC CNI limit without prefix delegation (ENIs x (IPs - 1) + 2); None where AWS publishes no ENI limits
    # for the type (ml.p6e-gb200.36xlarge).
    max_pods: int | None
    # MIG profiles one accelerator of this type supports; empty where MIG does not exist (A10G, L4, L40S, T4,
    # Trainium) or is not catalogued (RTX PRO 4500, see the g7 entries).
    mig_profiles: tuple[MigProfile, ...] = ()

    @property
    def family(self) -> str:
        return self.name.split(".")[1]

    def mig_profile(self, profile: str) -> MigProfile | None:
        """The MIG profile called ``profile`` (``mig-1g.10gb`` or ``nvidia.com/mig-1g.10gb``), or None."""
        name = profile.removeprefix("nvidia.com/")
        return next((p for p in self.mig_profiles if p.name == name), None)


def _gpu(
    name: str, model: str, gpus: int, vcpu: int, mem: int, pods: int | None, mig: tuple[MigProfile, ...] = ()
) -> InstanceType:
    return InstanceType(name, NVIDIA_GPU, model, gpus, vcpu, mem, pods, mig)


def _neuron(name: str, model: str, chips: int, vcpu: int, mem: int, pods: int) -> InstanceType:
    return InstanceType(name, NEURON_DEVICE, model, chips, vcpu, mem, pods)


def _cpu(name: str, vcpu: int, mem: int, pods: int) -> InstanceType:
    return InstanceType(name, None, None, 0, vcpu, mem, pods)


_ENTRIES: tuple[InstanceType, ...] = (
    # c5
    _cpu("ml.c5.large", 2, 4, 29),
    _cpu("ml.c5.xlarge", 4, 8, 58),
    _cpu("ml.c5.2xlarge", 8, 16, 58),
    _cpu("ml.c5.4xlarge", 16, 32, 234),
    _cpu("ml.c5.9xlarge", 36, 72, 234),
    _cpu("ml.c5.12xlarge", 48, 96, 234),
    _cpu("ml.c5.18xlarge", 72, 144, 737),
    _cpu("ml.c5.24xlarge", 96, 192, 737),
    # c5n
    _cpu("ml.c5n.large", 2, 5, 29),  # 5.25 GiB, rounded down: a quota must not promise memory the node lacks
    _cpu("ml.c5n.2xlarge", 8, 21, 58),
    _cpu("ml.c5n.4xlarge", 16, 42, 234),
    _cpu("ml.c5n.9xlarge", 36, 96, 234),
    _cpu("ml.c5n.18xlarge", 72, 192, 737),
    # c6a
    _cpu("ml.c6a.large", 2, 4, 29),
    _cpu("ml.c6a.xlarge", 4, 8, 58),
    _cpu("ml.c6a.2xlarge", 8, 16, 58),
    _cpu("ml.c6a.4xlarge", 16, 32, 234),
    _cpu("ml.c6a.8xlarge", 32, 64, 234),
    _cpu("ml.c6a.12xlarge", 48, 96, 234),
    _cpu("ml.c6a.16xlarge", 64, 128, 737),
    _cpu("ml.c6a.24xlarge", 96, 192, 737),
    _cpu("ml.c6a.32xlarge", 128, 256, 737),
    _cpu("ml.c6a.48xlarge", 192, 384, 737),
    # c6g
    _cpu("ml.c6g.medium", 1, 2, 8),
    _cpu("ml.c6g.large", 2, 4, 29),
    _cpu("ml.c6g.xlarge", 4, 8, 58),
    _cpu("ml.c6g.2xlarge", 8, 16, 58),
    _cpu("ml.c6g.4xlarge", 16, 32, 234),
    _cpu("ml.c6g.8xlarge", 32, 64, 234),
    _cpu("ml.c6g.12xlarge", 48, 96, 234),
    _cpu("ml.c6g.16xlarge", 64, 128, 737),
    # c6i
    _cpu("ml.c6i.large", 2, 4, 29),
    _cpu("ml.c6i.xlarge", 4, 8, 58),
    _cpu("ml.c6i.2xlarge", 8, 16, 58),
    _cpu("ml.c6i.4xlarge", 16, 32, 234),
    _cpu("ml.c6i.8xlarge", 32, 64, 234),
    _cpu("ml.c6i.12xlarge", 48, 96, 234),
    _cpu("ml.c6i.16xlarge", 64, 128, 737),
    _cpu("ml.c6i.24xlarge", 96, 192, 737),
    _cpu("ml.c6i.32xlarge", 128, 256, 737),
    # c7g
    _cpu("ml.c7g.medium", 1, 2, 8),
    _cpu("ml.c7g.large", 2, 4, 29),
    _cpu("ml.c7g.xlarge", 4, 8, 58),
    _cpu("ml.c7g.2xlarge", 8, 16, 58),
    _cpu("ml.c7g.4xlarge", 16, 32, 234),
    _cpu("ml.c7g.8xlarge", 32, 64, 234),
    _cpu("ml.c7g.12xlarge", 48, 96, 234),
    _cpu("ml.c7g.16xlarge", 64, 128, 737),
    # c8a
    _cpu("ml.c8a.16xlarge", 64, 128, 1010),
    # c8g
    _cpu("ml.c8g.medium", 1, 2, 8),
    _cpu("ml.c8g.large", 2, 4, 29),
    _cpu("ml.c8g.xlarge", 4, 8, 58),
    _cpu("ml.c8g.2xlarge", 8, 16, 58),
    _cpu("ml.c8g.4xlarge", 16, 32, 234),
    _cpu("ml.c8g.8xlarge", 32, 64, 234),
    _cpu("ml.c8g.12xlarge", 48, 96, 234),
    _cpu("ml.c8g.16xlarge", 64, 128, 737),
    _cpu("ml.c8g.24xlarge", 96, 192, 737),
    _cpu("ml.c8g.48xlarge", 192, 384, 737),
    # g4dn: NVIDIA T4; no MIG
    _gpu("ml.g4dn.xlarge", "T4", 1, 4, 16, 29),
    _gpu("ml.g4dn.2xlarge", "T4", 1, 8, 32, 29),
    _gpu("ml.g4dn.4xlarge", "T4", 1, 16, 64, 29),
    _gpu("ml.g4dn.8xlarge", "T4", 1, 32, 128, 58),
    _gpu("ml.g4dn.12xlarge", "T4", 4, 48, 192, 234),
    _gpu("ml.g4dn.16xlarge", "T4", 1, 64, 256, 58),
    # g5: NVIDIA A10G; no MIG
    _gpu("ml.g5.xlarge", "A10G", 1, 4, 16, 58),
    _gpu("ml.g5.2xlarge", "A10G", 1, 8, 32, 58),
    _gpu("ml.g5.4xlarge", "A10G", 1, 16, 64, 234),
    _gpu("ml.g5.8xlarge", "A10G", 1, 32, 128, 234),
    _gpu("ml.g5.12xlarge", "A10G", 4, 48, 192, 737),
    _gpu("ml.g5.16xlarge", "A10G", 1, 64, 256, 234),
    _gpu("ml.g5.24xlarge", "A10G", 4, 96, 384, 737),
    _gpu("ml.g5.48xlarge", "A10G", 8, 192, 768, 345),
    # g6: NVIDIA L4; no MIG
    _gpu("ml.g6.xlarge", "L4", 1, 4, 16, 58),
    _gpu("ml.g6.2xlarge", "L4", 1, 8, 32, 58),
    _gpu("ml.g6.4xlarge", "L4", 1, 16, 64, 234),
    _gpu("ml.g6.8xlarge", "L4", 1, 32, 128, 234),
    _gpu("ml.g6.12xlarge", "L4", 4, 48, 192, 234),
    _gpu("ml.g6.16xlarge", "L4", 1, 64, 256, 737),
    _gpu("ml.g6.24xlarge", "L4", 4, 96, 384, 737),
    _gpu("ml.g6.48xlarge", "L4", 8, 192, 768, 737),
    # g6e: NVIDIA L40S; no MIG
    _gpu("ml.g6e.xlarge", "L40S", 1, 4, 32, 58),
    _gpu("ml.g6e.2xlarge", "L40S", 1, 8, 64, 58),
    _gpu("ml.g6e.4xlarge", "L40S", 1, 16, 128, 234),
    _gpu("ml.g6e.8xlarge", "L40S", 1, 32, 256, 234),
    _gpu("ml.g6e.12xlarge", "L40S", 4, 48, 384, 292),
    _gpu("ml.g6e.16xlarge", "L40S", 1, 64, 512, 737),
    _gpu("ml.g6e.24xlarge", "L40S", 4, 96, 768, 492),
    _gpu("ml.g6e.48xlarge", "L40S", 8, 192, 1536, 492),
    # g7: NVIDIA RTX PRO 4500 Blackwell Server Edition 32 GB. NVIDIA lists it as MIG-capable (at most
    # 2 instances) but no source found names its profiles, so none are catalogued (see _MIG note)
    _gpu("ml.g7.2xlarge", "RTX PRO 4500", 1, 8, 32, 254),
    _gpu("ml.g7.4xlarge", "RTX PRO 4500", 1, 16, 64, 506),
    _gpu("ml.g7.8xlarge", "RTX PRO 4500", 1, 32, 128, 632),
    _gpu("ml.g7.12xlarge", "RTX PRO 4500", 2, 48, 192, 758),
    _gpu("ml.g7.24xlarge", "RTX PRO 4500", 4, 96, 384, 1514),
    _gpu("ml.g7.48xlarge", "RTX PRO 4500", 8, 192, 768, 758),
    # g7e: NVIDIA RTX PRO 6000 Blackwell Server Edition 96 GB
    _gpu("ml.g7e.2xlarge", "RTX PRO 6000", 1, 8, 64, 254, _MIG_RTX_PRO_6000_96GB),
    _gpu("ml.g7e.4xlarge", "RTX PRO 6000", 1, 16, 128, 506, _MIG_RTX_PRO_6000_96GB),
    _gpu("ml.g7e.8xlarge", "RTX PRO 6000", 1, 32, 256, 506, _MIG_RTX_PRO_6000_96GB),
    _gpu("ml.g7e.12xlarge", "RTX PRO 6000", 2, 48, 512, 632, _MIG_RTX_PRO_6000_96GB),
    _gpu("ml.g7e.24xlarge", "RTX PRO 6000", 4, 96, 1024, 632, _MIG_RTX_PRO_6000_96GB),
    _gpu("ml.g7e.48xlarge", "RTX PRO 6000", 8, 192, 2048, 632, _MIG_RTX_PRO_6000_96GB),
    # gr6: NVIDIA L4, more memory per vCPU than g6; no MIG
    _gpu("ml.gr6.4xlarge", "L4", 1, 16, 128, 234),
    _gpu("ml.gr6.8xlarge", "L4", 1, 32, 256, 234),
    # i3en
    _cpu("ml.i3en.large", 2, 16, 29),
    _cpu("ml.i3en.xlarge", 4, 32, 58),
    _cpu("ml.i3en.2xlarge", 8, 64, 58),
    _cpu("ml.i3en.3xlarge", 12, 96, 58),
    _cpu("ml.i3en.6xlarge", 24, 192, 234),
    _cpu("ml.i3en.12xlarge", 48, 384, 234),
    _cpu("ml.i3en.24xlarge", 96, 768, 737),
    # m5
    _cpu("ml.m5.large", 2, 8, 29),
    _cpu("ml.m5.xlarge", 4, 16, 58),
    _cpu("ml.m5.2xlarge", 8, 32, 58),
    _cpu("ml.m5.4xlarge", 16, 64, 234),
    _cpu("ml.m5.8xlarge", 32, 128, 234),
    _cpu("ml.m5.12xlarge", 48, 192, 234),
    _cpu("ml.m5.16xlarge", 64, 256, 737),
    _cpu("ml.m5.24xlarge", 96, 384, 737),
    # m6a
    _cpu("ml.m6a.large", 2, 8, 29),
    _cpu("ml.m6a.xlarge", 4, 16, 58),
    _cpu("ml.m6a.2xlarge", 8, 32, 58),
    _cpu("ml.m6a.4xlarge", 16, 64, 234),
    _cpu("ml.m6a.8xlarge", 32, 128, 234),
    _cpu("ml.m6a.12xlarge", 48, 192, 234),
    _cpu("ml.m6a.16xlarge", 64, 256, 737),
    _cpu("ml.m6a.24xlarge", 96, 384, 737),
    _cpu("ml.m6a.32xlarge", 128, 512, 737),
    _cpu("ml.m6a.48xlarge", 192, 768, 737),
    # m6g
    _cpu("ml.m6g.medium", 1, 4, 8),
    _cpu("ml.m6g.large", 2, 8, 29),
    _cpu("ml.m6g.xlarge", 4, 16, 58),
    _cpu("ml.m6g.2xlarge", 8, 32, 58),
    _cpu("ml.m6g.4xlarge", 16, 64, 234),
    _cpu("ml.m6g.8xlarge", 32, 128, 234),
    _cpu("ml.m6g.12xlarge", 48, 192, 234),
    _cpu("ml.m6g.16xlarge", 64, 256, 737),
    # m6i
    _cpu("ml.m6i.large", 2, 8, 29),
    _cpu("ml.m6i.xlarge", 4, 16, 58),
    _cpu("ml.m6i.2xlarge", 8, 32, 58),
    _cpu("ml.m6i.4xlarge", 16, 64, 234),
    _cpu("ml.m6i.8xlarge", 32, 128, 234),
    _cpu("ml.m6i.12xlarge", 48, 192, 234),
    _cpu("ml.m6i.16xlarge", 64, 256, 737),
    _cpu("ml.m6i.24xlarge", 96, 384, 737),
    _cpu("ml.m6i.32xlarge", 128, 512, 737),
    # m7g
    _cpu("ml.m7g.medium", 1, 4, 8),
    _cpu("ml.m7g.large", 2, 8, 29),
    _cpu("ml.m7g.xlarge", 4, 16, 58),
    _cpu("ml.m7g.2xlarge", 8, 32, 58),
    _cpu("ml.m7g.4xlarge", 16, 64, 234),
    _cpu("ml.m7g.8xlarge", 32, 128, 234),
    _cpu("ml.m7g.12xlarge", 48, 192, 234),
    _cpu("ml.m7g.16xlarge", 64, 256, 737),
    # m7i
    _cpu("ml.m7i.large", 2, 8, 29),
    _cpu("ml.m7i.xlarge", 4, 16, 58),
    _cpu("ml.m7i.2xlarge", 8, 32, 58),
    _cpu("ml.m7i.4xlarge", 16, 64, 234),
    _cpu("ml.m7i.8xlarge", 32, 128, 234),
    _cpu("ml.m7i.12xlarge", 48, 192, 234),
    _cpu("ml.m7i.16xlarge", 64, 256, 737),
    _cpu("ml.m7i.24xlarge", 96, 384, 737),
    _cpu("ml.m7i.48xlarge", 192, 768, 737),
    # m8a
    _cpu("ml.m8a.16xlarge", 64, 256, 1010),
    # m8g
    _cpu("ml.m8g.medium", 1, 4, 8),
    _cpu("ml.m8g.large", 2, 8, 29),
    _cpu("ml.m8g.xlarge", 4, 16, 58),
    _cpu("ml.m8g.2xlarge", 8, 32, 58),
    _cpu("ml.m8g.4xlarge", 16, 64, 234),
    _cpu("ml.m8g.8xlarge", 32, 128, 234),
    _cpu("ml.m8g.12xlarge", 48, 192, 234),
    _cpu("ml.m8g.16xlarge", 64, 256, 737),
    _cpu("ml.m8g.24xlarge", 96, 384, 737),
    _cpu("ml.m8g.48xlarge", 192, 768, 737),
    # p4d: NVIDIA A100 40 GB (SXM4)
    _gpu("ml.p4d.24xlarge", "A100", 8, 96, 1152, 737, _MIG_A100_40GB),
    # p4de: NVIDIA A100 80 GB (SXM4)
    _gpu("ml.p4de.24xlarge", "A100-80GB", 8, 96, 1152, 737, _MIG_80GB),
    # p5: NVIDIA H100 80 GB (SXM5)
    _gpu("ml.p5.4xlarge", "H100", 1, 16, 256, 118, _MIG_80GB),
    _gpu("ml.p5.48xlarge", "H100", 8, 192, 2048, 100, _MIG_80GB),
    # p5e: NVIDIA H200 141 GB
    _gpu("ml.p5e.48xlarge", "H200", 8, 192, 2048, 100, _MIG_H200_141GB),
    # p5en: NVIDIA H200 141 GB
    _gpu("ml.p5en.48xlarge", "H200", 8, 192, 2048, 198, _MIG_H200_141GB),
    # p6-b200: NVIDIA B200 180 GB
    _gpu("ml.p6-b200.48xlarge", "B200", 8, 192, 2048, 198, _MIG_B200_180GB),
    # p6-b300: NVIDIA B300 (Blackwell Ultra) 288 GB, about 269 GB of it in MIG profiles
    _gpu("ml.p6-b300.48xlarge", "B300", 8, 192, 4096, 198, _MIG_B300_269GB),
    # p6e-gb200: NVIDIA GB200 (Blackwell GPUs of Grace Blackwell superchips) 186 GB
    # vCPU and memory as AWS's HyperPod CLI gives them (INSTANCE_RESOURCES; not confirmed in the EC2 docs read
    # here), 4 GPUs per the EKS user guide (ml-eks-nvidia-ultraserver). Max pods unknown: the VPC CNI limits table
    # does not list the type (it is sold only inside P6e-GB200 UltraServers).
    _gpu("ml.p6e-gb200.36xlarge", "GB200", 4, 144, 960, None, _MIG_GB200_186GB),
    # r5d
    _cpu("ml.r5d.16xlarge", 64, 512, 737),
    # r6i
    _cpu("ml.r6i.large", 2, 16, 29),
    _cpu("ml.r6i.xlarge", 4, 32, 58),
    _cpu("ml.r6i.2xlarge", 8, 64, 58),
    _cpu("ml.r6i.4xlarge", 16, 128, 234),
    _cpu("ml.r6i.8xlarge", 32, 256, 234),
    _cpu("ml.r6i.12xlarge", 48, 384, 234),
    _cpu("ml.r6i.16xlarge", 64, 512, 737),
    _cpu("ml.r6i.24xlarge", 96, 768, 737),
    _cpu("ml.r6i.32xlarge", 128, 1024, 737),
    # r7i
    _cpu("ml.r7i.large", 2, 16, 29),
    _cpu("ml.r7i.xlarge", 4, 32, 58),
    _cpu("ml.r7i.2xlarge", 8, 64, 58),
    _cpu("ml.r7i.4xlarge", 16, 128, 234),
    _cpu("ml.r7i.8xlarge", 32, 256, 234),
    _cpu("ml.r7i.12xlarge", 48, 384, 234),
    _cpu("ml.r7i.16xlarge", 64, 512, 737),
    _cpu("ml.r7i.24xlarge", 96, 768, 737),
    _cpu("ml.r7i.48xlarge", 192, 1536, 737),
    # t3
    _cpu("ml.t3.medium", 2, 4, 17),
    _cpu("ml.t3.large", 2, 8, 35),
    _cpu("ml.t3.xlarge", 4, 16, 58),
    _cpu("ml.t3.2xlarge", 8, 32, 58),
    # trn1: AWS Trainium; accelerators are Neuron devices (chips); no MIG
    _neuron("ml.trn1.32xlarge", "Trainium", 16, 128, 512, 247),
    # trn1n: AWS Trainium; no MIG
    _neuron("ml.trn1n.32xlarge", "Trainium", 16, 128, 512, 247),
    # trn2: AWS Trainium2; no MIG
    # trn2.3xlarge is absent from the Karpenter table; vCPU and memory as AWS's HyperPod CLI gives them.
    _neuron("ml.trn2.3xlarge", "Trainium2", 1, 12, 128, 30),
    _neuron("ml.trn2.48xlarge", "Trainium2", 16, 192, 2048, 100),
)

CATALOG: Mapping[str, InstanceType] = MappingProxyType({e.name: e for e in _ENTRIES})

# Types whose MIG partitions HyperPod itself manages, per AWS's GPU partitioning page (p4d, p5, p5e and p5en
# were read there; the copy read was cut off after them) and INSTANCE_TYPE_MIG_PROFILES of AWS's HyperPod CLI
# (which adds p4de, p6-b200, p6-b300 and p6e-gb200). ml.p5.4xlarge and the g7e sizes have MIG-capable GPUs but
# are in neither list as read here.
HYPERPOD_MIG_TYPES: frozenset[str] = frozenset(
    {
        "ml.p4d.24xlarge",
        "ml.p4de.24xlarge",
        "ml.p5.48xlarge",
        "ml.p5e.48xlarge",
        "ml.p5en.48xlarge",
        "ml.p6-b200.48xlarge",
        "ml.p6-b300.48xlarge",
        "ml.p6e-gb200.36xlarge",
    }
)

# The MIG profiles CloudFormation accepts in a ComputeQuota's AcceleratorPartition.Type (task-governance mode).
# A test keeps this equal to the schema cfn-lint ships. As of cfn-lint 1.58 it lacks the B300 (p6-b300) and
# RTX PRO 6000 (g7e) profiles, so partition quotas on those types cannot be expressed in CloudFormation yet.
COMPUTE_QUOTA_MIG_PROFILES: frozenset[str] = frozenset(
    {
        "mig-1g.5gb",
        "mig-1g.10gb",
        "mig-1g.18gb",
        "mig-1g.20gb",
        "mig-1g.23gb",
        "mig-1g.35gb",
        "mig-1g.45gb",
        "mig-1g.47gb",
        "mig-2g.10gb",
        "mig-2g.20gb",
        "mig-2g.35gb",
        "mig-2g.45gb",
        "mig-2g.47gb",
        "mig-3g.20gb",
        "mig-3g.40gb",
        "mig-3g.71gb",
        "mig-3g.90gb",
        "mig-3g.93gb",
        "mig-4g.20gb",
        "mig-4g.40gb",
        "mig-4g.71gb",
        "mig-4g.90gb",
        "mig-4g.93gb",
        "mig-7g.40gb",
        "mig-7g.80gb",
        "mig-7g.141gb",
        "mig-7g.180gb",
        "mig-7g.186gb",
    }
)

_ACCELERATED = EC2_SPECS + "ac.html"
_PAGE = {"c": "co.html", "m": "gp.html", "t": "gp.html", "r": "mo.html", "i": "so.html"}


def _sources(family: str) -> tuple[str, ...]:
    types = [t for t in CATALOG.values() if t.family == family]
    if not any(t.accelerators for t in types):
        return (EC2_SPECS + _PAGE[family[0]],)
    mig = (MIG_GUIDE,) if any(t.mig_profiles for t in types) else ()
    hyperpod = (HYPERPOD_MIG,) if any(t.name in HYPERPOD_MIG_TYPES for t in types) else ()
    return (_ACCELERATED, *mig, *hyperpod)


# Where each family's facts are published: the EC2 specification page (accelerated computing, general purpose,
# compute optimized, memory optimized or storage optimized), for MIG-capable GPUs NVIDIA's MIG User Guide, and
# for the types HyperPod partitions, HyperPod's GPU partitioning page.
SOURCES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {family: _sources(family) for family in sorted({t.family for t in CATALOG.values()})}
)


def lookup(name: str) -> InstanceType:
    """Return the facts for ``name``; raises ``KeyError`` for an unknown type."""
    return CATALOG[name]


def known_types() -> tuple[str, ...]:
    """Every instance type the spec accepts, sorted."""
    return tuple(sorted(CATALOG))


def mig_partitions(instance_type: str, profile: str) -> int | None:
    """Partitions of MIG ``profile`` one instance of ``instance_type`` offers with every GPU in that profile.

    ``profile`` is written as HyperPod writes it (``mig-1g.10gb``) or as the extended resource
    (``nvidia.com/mig-1g.10gb``). Returns None when the type's GPUs do not offer that profile (or have no
    MIG at all); raises ``KeyError`` for an unknown instance type. Example: ``ml.p5.48xlarge`` has 8 H100
    GPUs with 7 ``mig-1g.10gb`` each, so 56.
    """
    facts = lookup(instance_type)
    found = facts.mig_profile(profile)
    return None if found is None else facts.accelerators * found.per_gpu


def known_mig_profiles() -> tuple[str, ...]:
    """Every MIG profile name some catalogued instance type offers, sorted."""
    return tuple(sorted({p.name for t in CATALOG.values() for p in t.mig_profiles}))


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


@dataclass(frozen=True)
class Catalog:
    """The instance types one spec may use: ``CATALOG`` plus the types the spec declares (``instanceTypes``).

    Every lookup of instance type facts outside this module goes through a ``Catalog`` value (the plan carries
    one as ``Plan.catalog``; ``spec.instance_types.spec_catalog`` builds it from a spec), so a declared type is
    usable wherever a catalogued one is, without module-level mutable state.
    """

    types: Mapping[str, InstanceType]
    declared: frozenset[str] = frozenset()  # the names the spec declared (not in CATALOG)

    @classmethod
    def with_declared(cls, declared: Mapping[str, InstanceType]) -> "Catalog":
        """``CATALOG`` plus ``declared`` (a name already in ``CATALOG`` keeps the catalogued facts)."""
        if not declared:
            return BASE
        extra = {name: t for name, t in declared.items() if name not in CATALOG}
        return cls(MappingProxyType({**CATALOG, **extra}), frozenset(extra))

    def __contains__(self, name: object) -> bool:
        return name in self.types

    def get(self, name: str) -> InstanceType | None:
        return self.types.get(name)

    def lookup(self, name: str) -> InstanceType:
        """The facts of ``name``; raises ``KeyError`` for a type neither catalogued nor declared."""
        return self.types[name]

    def known_types(self) -> tuple[str, ...]:
        return tuple(sorted(self.types))

    def mig_partitions(self, instance_type: str, profile: str) -> int | None:
        """As the module-level ``mig_partitions``, for catalogued and declared types."""
        facts = self.lookup(instance_type)
        found = facts.mig_profile(profile)
        return None if found is None else facts.accelerators * found.per_gpu


BASE = Catalog(CATALOG)
