"""Shared file systems: an FSx for Lustre file system every team gets its own directory of.

What CloudFormation and the FSx API accept for a Lustre file system (``AWS::FSx::FileSystem``), checked here so
that a spec ``validate`` accepts deploys. Sources: the FSx API model (botocore ``fsx/2018-03-01``:
``LustreDeploymentType``; ``CreateFileSystemRequest.StorageCapacity``,
``CreateFileSystemLustreConfiguration.PerUnitStorageThroughput`` and ``KmsKeyId`` documentation) and cfn-lint's
schema extension for the resource (``aws_fsx_filesystem/storage_capacity.json``: LUSTRE at least 1200 GiB).
SSD storage only (``StorageType`` is left at its SSD default): HDD's capacity steps follow its throughput.
"""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from ._base import SpecModel, spec_error

LustreDeploymentType = Literal["SCRATCH_1", "SCRATCH_2", "PERSISTENT_1", "PERSISTENT_2"]
# KmsKeyId applies to PERSISTENT_1 and PERSISTENT_2 only: SCRATCH types are encrypted with the FSx service key.
KMS_DEPLOYMENT_TYPES = ("PERSISTENT_1", "PERSISTENT_2")
# PerUnitStorageThroughput (MB/s/TiB) per deployment type, SSD storage.
THROUGHPUT: dict[str, tuple[int, ...]] = {"PERSISTENT_1": (50, 100, 200), "PERSISTENT_2": (125, 250, 500, 1000)}
# StorageCapacity (GiB), SSD storage: the two smallest sizes, then increments of the step.
CAPACITY_STEPS: dict[str, int] = {"SCRATCH_1": 3600, "SCRATCH_2": 2400, "PERSISTENT_1": 2400, "PERSISTENT_2": 2400}
SMALL_CAPACITIES = (1200, 2400)
MAX_CAPACITY_GIB = 2_147_483_647  # the API's integer maximum; the account's FSx quota is usually lower

FILE_SYSTEM_ID = re.compile(r"\Afs-[0-9a-f]{8,21}\Z", re.ASCII)
# fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com (or .com.cn in China), or an alias the owner created.
DNS_NAME = re.compile(r"\A(?=.{1,253}\Z)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+\Z", re.ASCII)
MOUNT_NAME = re.compile(r"\A[a-z0-9]{1,8}\Z", re.ASCII)  # "fsx" (SCRATCH_1) or the service's 8 characters
ADDON_VERSION = re.compile(r"\Av\d+\.\d+\.\d+-eksbuild\.\d+\Z", re.ASCII)


def valid_capacities(deployment_type: str, near: int) -> list[int]:
    """Capacities the type accepts around ``near`` (for the fix of an error)."""
    step = CAPACITY_STEPS[deployment_type]
    above = max(step, -(-near // step) * step)
    below = (near // step) * step
    return sorted({c for c in (*SMALL_CAPACITIES, below, above) if c >= 1200})[:4]


def capacity_is_valid(deployment_type: str, gib: int) -> bool:
    return gib in SMALL_CAPACITIES or (gib > 0 and gib % CAPACITY_STEPS[deployment_type] == 0)


class FsxLustre(SpecModel):
    """An FSx for Lustre file system: one hyperpod-gov creates (storageCapacityGiB, deploymentType,
    perUnitStorageThroughput), or, with cluster.existing, one that exists (fileSystemId, dnsName, mountName)."""

    storage_capacity_gib: Optional[int] = Field(
        default=None, ge=1200, alias="storageCapacityGiB", le=MAX_CAPACITY_GIB,
        description="Creates a file system of this size (GiB): 1200, 2400, then steps of 2400 (SCRATCH_1: 3600).",
    )
    deployment_type: Optional[LustreDeploymentType] = Field(
        default=None,
        description="PERSISTENT_1 | PERSISTENT_2 (default for a created file system: PERSISTENT_2). SCRATCH types "
        "are refused: they cannot be encrypted with the file system's own KMS key and lose data when a server fails.",
    )
    per_unit_storage_throughput: Optional[int] = Field(
        default=None,
        description="MB/s per TiB of a created file system: PERSISTENT_1 50, 100 or 200; PERSISTENT_2 125, 250, "
        "500 or 1000 (required for both).",
    )
    file_system_id: Optional[str] = Field(
        default=None, description="With cluster.existing: the existing file system's id, fs-... (with dnsName and "
        "mountName).",
    )
    dns_name: Optional[str] = Field(
        default=None, description="With cluster.existing: its DNSName, e.g. fs-0123456789abcdef0.fsx.us-east-1."
        "amazonaws.com (`aws fsx describe-file-systems`).",
    )
    mount_name: Optional[str] = Field(
        default=None, description="With cluster.existing: its LustreConfiguration.MountName, e.g. abcdef12.",
    )
    csi_driver_version: str = Field(
        default="v1.9.0-eksbuild.1",
        description="Version of the aws-fsx-csi-driver EKS add-on installed with a created file system (default: "
        "v1.9.0-eksbuild.1, driver v1.9.0; check a region with `aws eks describe-addon-versions --addon-name "
        "aws-fsx-csi-driver`). With cluster.existing the driver is expected to run on the cluster already.",
    )
    team_capacity_gib: int = Field(
        default=1200, ge=1, alias="teamCapacityGiB", le=MAX_CAPACITY_GIB,
        description="The capacity each team's PersistentVolume and claim state (default: 1200). Lustre enforces "
        "no per-directory size from it: it is what Kubernetes matches the claim against.",
    )

    @field_validator("file_system_id")
    @classmethod
    def _id(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not FILE_SYSTEM_ID.match(v):
            raise spec_error("is not an FSx file system id", "copy FileSystemId from `aws fsx describe-file-systems`, "
                             "e.g. fs-0123456789abcdef0")
        return v

    @field_validator("dns_name")
    @classmethod
    def _dns(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not DNS_NAME.match(v):
            raise spec_error("is not a DNS name", "copy DNSName from `aws fsx describe-file-systems`, e.g. "
                             "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com")
        return v

    @field_validator("mount_name")
    @classmethod
    def _mount(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not MOUNT_NAME.match(v):
            raise spec_error("is not a Lustre mount name", "copy LustreConfiguration.MountName from `aws fsx "
                             "describe-file-systems`: 'fsx' or 8 lowercase letters and digits, e.g. abcdef12")
        return v

    @field_validator("csi_driver_version")
    @classmethod
    def _version(cls, v: str) -> str:
        if not ADDON_VERSION.match(v):
            raise spec_error("is not an EKS add-on version", "write it as EKS lists it, e.g. v1.9.0-eksbuild.1")
        return v

    @model_validator(mode="after")
    def _one_form(self) -> "FsxLustre":
        created = [k for k, a in (("storageCapacityGiB", "storage_capacity_gib"), ("deploymentType", "deployment_type"),
                                  ("perUnitStorageThroughput", "per_unit_storage_throughput"),
                                  ("csiDriverVersion", "csi_driver_version")) if a in self.model_fields_set]
        existing = [k for k, a in (("fileSystemId", "file_system_id"), ("dnsName", "dns_name"),
                                   ("mountName", "mount_name")) if a in self.model_fields_set]
        if created and existing:
            raise spec_error(f"mixes the keys of a created file system ({', '.join(created)}) with those of an "
                             f"existing one ({', '.join(existing)})",
                             "give storageCapacityGiB, deploymentType and perUnitStorageThroughput to create one, "
                             "or fileSystemId, dnsName and mountName (with cluster.existing) to name one")
        if existing:
            if len(existing) < 3:
                missing = [k for k in ("fileSystemId", "dnsName", "mountName") if k not in existing]
                raise spec_error(f"names an existing file system without {', '.join(missing)}",
                                 "give all three, as `aws fsx describe-file-systems` shows them (nothing is looked "
                                 "up at synth)")
            return self
        if self.storage_capacity_gib is None:
            raise spec_error("gives neither storageCapacityGiB (a file system to create) nor fileSystemId",
                             "add storageCapacityGiB: 1200, perUnitStorageThroughput: 125 (PERSISTENT_2), or name "
                             "an existing file system with fileSystemId, dnsName and mountName")
        kind = self.effective_deployment_type
        if kind not in KMS_DEPLOYMENT_TYPES:
            raise spec_error(f"{kind} cannot be encrypted with the file system's own KMS key (the FSx service key "
                             "encrypts SCRATCH types) and keeps no data when a file server fails",
                             "use deploymentType: PERSISTENT_2 (or PERSISTENT_1)")
        if not capacity_is_valid(kind, self.storage_capacity_gib):
            options = ", ".join(map(str, valid_capacities(kind, self.storage_capacity_gib)))
            raise spec_error(f"storageCapacityGiB {self.storage_capacity_gib} is not a size {kind} offers (1200, "
                             f"2400, then steps of {CAPACITY_STEPS[kind]} GiB)", f"use one of {options}")
        allowed = THROUGHPUT[kind]
        if self.per_unit_storage_throughput not in allowed:
            given = self.per_unit_storage_throughput
            raise spec_error(f"perUnitStorageThroughput {'is missing' if given is None else f'{given} is not offered'}"
                             f" for {kind}", f"use one of {', '.join(map(str, allowed))} (MB/s per TiB)")
        return self

    @property
    def creates(self) -> bool:
        """The spec asks hyperpod-gov to create the file system (else it names an existing one)."""
        return self.file_system_id is None

    @property
    def effective_deployment_type(self) -> str:
        return self.deployment_type or "PERSISTENT_2"


class SharedStorage(SpecModel):
    """File systems every team shares, each team in its own directory."""

    fsx_lustre: FsxLustre = Field(
        description="An FSx for Lustre file system in the cluster's first private subnet, encrypted with its own "
        "KMS key, reachable from the HyperPod nodes only; each team gets a PersistentVolume and claim of its own "
        "directory /<team>.",
    )
