"""Shared storage and dedicated node groups, planned: pure data for the charts, constructs and views.

Shared storage (``cluster.sharedStorage.fsxLustre``): one FSx for Lustre file system and, per team, a statically
provisioned PersistentVolume of the team's own directory ``/<team>`` (a Lustre fileset mount: the FSx CSI driver
mounts ``<dnsname>@tcp:/<mountname>``, so the volume's mountname is ``<mountName>/<team>``) with a claim in the
team's namespace, each pinned to the other. A file system hyperpod-gov creates has its id and mount name only at
deploy: the plan holds :data:`PLACEHOLDERS` for them, which the stacks replace with the file system's attributes
(``constructs.shared_storage.fill_file_system``), so the plan never holds a CDK token.

Dedicated groups (``instanceGroups[].dedicatedTo``): per team and instance type, the groups dedicated to it and
what they bring; in kueue mode each is a ResourceFlavor of its own (:func:`names.dedicated_flavor`) that only
the team's ClusterQueue lists, with lendingLimit 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..catalog import Catalog
from ..spec.models import GovernanceSpec
from . import names
from .amounts import Amounts, amounts_for

CSI_DRIVER_ADDON = "aws-fsx-csi-driver"
CSI_DRIVER = "fsx.csi.aws.com"
# Deploy-time attributes of a created file system (AWS::FSx::FileSystem's Fn::GetAtt names), as placeholders.
PLACEHOLDERS = {attr: f"${{hyperpod-gov:fsx-lustre:{attr}}}" for attr in ("Id", "DNSName", "LustreMountName")}


@dataclass(frozen=True)
class FileSystemPlan:
    """The FSx for Lustre file system: created (its settings; id, DNS and mount names as placeholders) or existing."""

    created: bool
    file_system_id: str  # fs-..., or PLACEHOLDERS["Id"]
    dns_name: str
    mount_name: str
    storage_capacity_gib: Optional[int] = None  # created only
    deployment_type: Optional[str] = None
    per_unit_storage_throughput: Optional[int] = None
    csi_driver_version: Optional[str] = None  # created only: the add-on installed with it


@dataclass(frozen=True)
class TeamVolumePlan:
    """One team's PersistentVolume (its directory of the file system) and the claim bound to it."""

    team: str
    namespace: str
    volume: str  # PersistentVolume name, <namespace>.<claim>
    claim: str  # PersistentVolumeClaim name in the namespace
    directory: str  # /<team>, under the file system's root
    capacity_gib: int


@dataclass(frozen=True)
class SharedStoragePlan:
    file_system: FileSystemPlan
    volumes: tuple[TeamVolumePlan, ...]  # one per team, sorted by team

    def volume(self, team: str) -> Optional[TeamVolumePlan]:
        return next((v for v in self.volumes if v.team == team), None)


@dataclass(frozen=True)
class DedicatedPlan:
    """The instance groups of one type dedicated to one team, and what they bring."""

    team: str
    instance_type: str
    flavor: str  # the kueue-mode ResourceFlavor
    groups: tuple[str, ...]  # instance group names, sorted
    instances: int
    capacity: Amounts = Amounts(0, 0, 0)  # what the groups' instances bring (their GPUs as partitions under MIG)


def shared_storage_plan(spec: GovernanceSpec) -> Optional[SharedStoragePlan]:
    storage = spec.cluster.shared_storage
    if storage is None:
        return None
    fsx = storage.fsx_lustre
    if fsx.creates:
        fs = FileSystemPlan(True, PLACEHOLDERS["Id"], PLACEHOLDERS["DNSName"], PLACEHOLDERS["LustreMountName"],
                            storage_capacity_gib=fsx.storage_capacity_gib,
                            deployment_type=fsx.effective_deployment_type,
                            per_unit_storage_throughput=fsx.per_unit_storage_throughput,
                            csi_driver_version=fsx.csi_driver_version)
    else:
        fs = FileSystemPlan(False, fsx.file_system_id or "", fsx.dns_name or "", fsx.mount_name or "")
    volumes = tuple(
        TeamVolumePlan(team=t.name, namespace=names.namespace(t.name), volume=names.team_volume(t.name),
                       claim=names.SHARED_FSX_CLAIM, directory=f"/{t.name}", capacity_gib=fsx.team_capacity_gib)
        for t in sorted(spec.teams, key=lambda t: t.name)
    )
    return SharedStoragePlan(fs, volumes)


def csi_driver_addon(storage: Optional[SharedStoragePlan]) -> dict[str, Optional[str]]:
    """The FSx CSI driver add-on a created file system comes with ({} otherwise), for ``Plan.addon_versions``."""
    if storage is None or not storage.file_system.created:
        return {}
    return {CSI_DRIVER_ADDON: storage.file_system.csi_driver_version}


def dedicated_plans(spec: GovernanceSpec, cat: Catalog, migs: dict[str, Optional[str]]) -> tuple[DedicatedPlan, ...]:
    """Per (team, instance type), the groups dedicated to the team, sorted by team then type."""
    found: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for g in spec.cluster.instance_groups:
        if g.dedicated_to is not None:
            found.setdefault((g.dedicated_to, g.instance_type), []).append((g.name, g.count))
    out = []
    for (team, itype), groups in sorted(found.items()):
        n = sum(c for _, c in groups)
        out.append(DedicatedPlan(team, itype, names.dedicated_flavor(itype, team), tuple(sorted(g for g, _ in groups)),
                                 n, capacity=amounts_for(itype, count=n, mig_profile=migs.get(itype), catalog=cat)))
    return tuple(out)
