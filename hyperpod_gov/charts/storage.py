"""Shared storage: each team's PersistentVolume of its own directory and the claim bound to it, and admission
that lets a claim bind only its own team's volumes.

Static provisioning with the FSx for Lustre CSI driver (``fsx.csi.aws.com``): the driver mounts
``<dnsname>@tcp:/<mountname>`` (``pkg/driver/node.go`` NodePublishVolume), so a volume whose mountname is
``<mountName>/<team>`` mounts the Lustre fileset of the team's directory only, the subdirectory mount FSx
documents ("Mounting specific filesets"). The directory must exist on the file system before a pod mounts it
(docs/storage-and-nodes.md). The volume's ``claimRef`` names the team's claim and the claim's ``volumeName`` the
volume, so neither binds anything else. Team pods reach volumes only through claims of their own namespace, and
submitters hold no rights on PersistentVolumes; a claim that names another team's volume is refused by
:func:`claim_policy`, which knows a team's volumes by name (``<namespace>.<claim>``; team names hold no '.').
"""

from __future__ import annotations

from typing import Any

from constructs import Construct

from ..plan import Plan, TeamPlan
from ..plan import names
from ..plan.names import TEAM_LABEL
from ..plan.storage import CSI_DRIVER, TeamVolumePlan
from ._objects import api_object
from .admission import ADMISSION_API, POLICY_PREFIX
from .dedicated import team_namespaces_binding

CLAIM_POLICY = f"{POLICY_PREFIX}-team-volumes"
# kube-controller-manager's PV binder sets volumeName when it binds a claim; its choice is bound by the volumes'
# claimRef, so its updates are not the team's.
VOLUME_BINDER = "system:serviceaccount:kube-system:persistent-volume-binder"
MOUNT_OPTIONS = ("flock",)  # as the driver's static provisioning example: POSIX locks across nodes


def volume_handle(file_system_id: str, volume: TeamVolumePlan) -> str:
    """A handle per team (the driver mounts by the volume's attributes, not its handle): two volumes of one file
    system must not share a handle, which Kubernetes takes for the same volume."""
    return f"{file_system_id}::{volume.team}"


def persistent_volume(plan: Plan, volume: TeamVolumePlan) -> dict[str, Any]:
    """The ``spec`` of a team's PersistentVolume."""
    storage = plan.shared_storage
    if storage is None:
        raise ValueError("a team volume needs cluster.sharedStorage")
    fs = storage.file_system
    return {
        "capacity": {"storage": f"{volume.capacity_gib}Gi"},
        "volumeMode": "Filesystem",
        "accessModes": ["ReadWriteMany"],
        # The team's data outlives its claim: deleting the claim leaves the directory as it is.
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": "",
        "mountOptions": list(MOUNT_OPTIONS),
        "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": volume.namespace,
                     "name": volume.claim},
        "csi": {
            "driver": CSI_DRIVER,
            "volumeHandle": volume_handle(fs.file_system_id, volume),
            "volumeAttributes": {"dnsname": fs.dns_name, "mountname": f"{fs.mount_name}{volume.directory}"},
        },
    }


def persistent_volume_claim(volume: TeamVolumePlan) -> dict[str, Any]:
    """The ``spec`` of the claim in the team's namespace, pinned to the team's volume."""
    return {
        "accessModes": ["ReadWriteMany"],
        "storageClassName": "",
        "volumeName": volume.volume,
        "resources": {"requests": {"storage": f"{volume.capacity_gib}Gi"}},
    }


def team_storage(scope: Construct, *, plan: Plan, team: TeamPlan) -> None:
    """The team's volume and claim (nothing without cluster.sharedStorage)."""
    volume = team.volume
    if volume is None:
        return
    labels = {TEAM_LABEL: team.name}
    api_object(scope, "SharedFsxVolume", api_version="v1", kind="PersistentVolume", name=volume.volume,
               labels=labels, body={"spec": persistent_volume(plan, volume)})
    api_object(scope, "SharedFsxClaim", api_version="v1", kind="PersistentVolumeClaim", name=volume.claim,
               namespace=volume.namespace, labels=labels, body={"spec": persistent_volume_claim(volume)})


def claim_policy() -> dict[str, Any]:
    """The ``spec`` of the policy that lets a claim of a team namespace name only that team's volumes."""
    own = f"request.namespace + '{names.TEAM_VOLUME_SEPARATOR}'"
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["*"],
                                                "resources": ["persistentvolumeclaims"],
                                                "operations": ["CREATE", "UPDATE"]}]},
        "matchConditions": [{"name": "not-the-volume-binder",
                             "expression": f"request.userInfo.username != '{VOLUME_BINDER}'"}],
        "validations": [{
            "expression": f"!has(object.spec.volumeName) || object.spec.volumeName == '' || "
                          f"object.spec.volumeName.startsWith({own})",
            "messageExpression": f"'spec.volumeName ' + object.spec.volumeName + ' is not a volume of this team: "
                                 f"claims in ' + request.namespace + ' bind only volumes named ' + {own} + '<name>'",
            "reason": "Forbidden",
        }],
    }


def storage_objects(scope: Construct, *, plan: Plan) -> None:
    """The claim policy and its binding, with cluster.sharedStorage (cluster-wide objects)."""
    if plan.shared_storage is None or not plan.tenants:
        return
    api_object(scope, "TeamVolumes", api_version=ADMISSION_API, kind="ValidatingAdmissionPolicy",
               name=CLAIM_POLICY, body={"spec": claim_policy()})
    team_namespaces_binding(scope, "TeamVolumesBinding", policy=CLAIM_POLICY, plan=plan)
