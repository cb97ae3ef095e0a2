"""The shared FSx for Lustre file system: one L1 ``AWS::FSx::FileSystem``, its KMS key, a security group that
admits only the HyperPod nodes, and the FSx CSI driver EKS add-on with its Pod Identity role.

Where it goes: FSx for Lustre takes exactly one subnet (``CreateFileSystemRequest.SubnetIds``: "for ... all Lustre
deployment types, provide exactly one subnet ID"); it is the cluster's first private subnet (the first availability
zone's), always the same one, so a synth never moves the file system. Nodes in other zones reach it across zones.

Lustre's ports (FSx for Lustre User Guide, "Amazon VPC security groups"): TCP 988 and 1018-1023, between the
file system's servers and from and to the clients. The clients are the HyperPod nodes (the CSI node plugin mounts
on the node), so the group admits exactly the node security group and itself.

The driver's controller needs no AWS call for static provisioning but ``fsx:DescribeFileSystems`` to validate a
volume, so its role may describe this file system only (AWS's guide attaches AmazonFSxFullAccess, which would let
the controller create and delete any file system). The add-on takes the role through EKS Pod Identity, which the
EKS user guide documents for the FSx CSI driver add-on ("Deploy the FSx for Lustre driver", prerequisites).
"""

from __future__ import annotations

import copy
import json
from typing import Any, Mapping, Optional, Sequence

from aws_cdk import RemovalPolicy, aws_ec2 as ec2, aws_eks_v2 as eks, aws_fsx as fsx, aws_iam as iam, aws_kms as kms
from constructs import Construct

from ..plan.storage import CSI_DRIVER_ADDON, PLACEHOLDERS, SharedStoragePlan
from ..plan.tables_addon import addon_part
from .addons import EksAddon
from .network import Network
from .observability import pod_identity_trust

CONTROLLER_SERVICE_ACCOUNT = "fsx-csi-controller-sa"  # the add-on's controller (driver's deploy manifests)
LUSTRE_PORTS = ((988, 988), (1018, 1023))
LUSTRE_VERSION = "2.15"  # the FSx API's recommendation for new file systems (FileSystemTypeVersion)
BACKUP_RETENTION_DAYS = 7


def _ports() -> list[ec2.Port]:
    return [ec2.Port.tcp(lo) if lo == hi else ec2.Port.tcp_range(lo, hi) for lo, hi in LUSTRE_PORTS]


class SharedFileSystem(Construct):
    """The file system the plan's ``shared_storage`` creates, reachable from ``nodes`` only.

    ``values`` maps each of ``plan.storage.PLACEHOLDERS``' attributes to the file system's deploy-time value, for
    :func:`fill_file_system`.
    """

    def __init__(self, scope: Construct, id: str, *, storage: SharedStoragePlan, network: Network,
                 nodes: ec2.ISecurityGroup, cluster: Optional[eks.ICluster], account: str, cluster_arn: str,
                 install_driver: bool = True) -> None:
        super().__init__(scope, id)
        plan = storage.file_system
        if not plan.created:
            raise ValueError("SharedFileSystem creates a file system: the plan names an existing one")
        self.key = kms.Key(self, "Key", enable_key_rotation=True,
                           description="Encrypts the shared FSx for Lustre file system")
        self.security_group = ec2.SecurityGroup(self, "SecurityGroup", vpc=network.vpc, allow_all_outbound=False,
                                                description="FSx for Lustre: Lustre from the HyperPod nodes only")
        for port in _ports():
            self.security_group.add_ingress_rule(nodes, port, "Lustre from the HyperPod nodes")
            self.security_group.add_ingress_rule(self.security_group, port, "Lustre between the file servers")
            self.security_group.add_egress_rule(nodes, port, "Lustre to the HyperPod nodes")
            self.security_group.add_egress_rule(self.security_group, port, "Lustre between the file servers")
            nodes.add_ingress_rule(self.security_group, port, "Lustre from the shared file system")
        subnet = network.vpc.select_subnets(**_selection(network.private_subnets)).subnet_ids[0]
        self.resource = fsx.CfnFileSystem(
            self, "Resource",
            file_system_type="LUSTRE",
            file_system_type_version=LUSTRE_VERSION,
            storage_capacity=plan.storage_capacity_gib,
            storage_type="SSD",
            subnet_ids=[subnet],
            security_group_ids=[self.security_group.security_group_id],
            kms_key_id=self.key.key_arn,
            lustre_configuration=fsx.CfnFileSystem.LustreConfigurationProperty(
                deployment_type=plan.deployment_type,
                per_unit_storage_throughput=plan.per_unit_storage_throughput,
                automatic_backup_retention_days=BACKUP_RETENTION_DAYS,
                copy_tags_to_backups=True,
            ),
        )
        # The teams' data: deleting the stack leaves the file system (and its key) for the platform to delete.
        self.resource.apply_removal_policy(RemovalPolicy.RETAIN)
        self.values: dict[str, str] = {"Id": self.resource.ref, "DNSName": self.resource.attr_dns_name,
                                       "LustreMountName": self.resource.attr_lustre_mount_name}

        self.addon: Optional[EksAddon] = None
        if not install_driver:  # the inference operator's FSx CSI driver (constructs/operators.py) serves both
            return
        if cluster is None:
            raise ValueError("the FSx CSI driver is an EKS add-on: installing it needs the EKS cluster")
        self.driver_role = iam.Role(
            self, "CsiDriverRole", assumed_by=pod_identity_trust(account=account, cluster_arn=cluster_arn),
            description="FSx CSI driver controller: describes the shared file system (static provisioning only)",
        )
        self.driver_role.add_to_policy(iam.PolicyStatement(actions=["fsx:DescribeFileSystems"],
                                                           resources=[self.resource.attr_resource_arn]))
        self.addon = EksAddon(self, "CsiDriver", part=addon_part(CSI_DRIVER_ADDON, plan.csi_driver_version),
                              cluster=cluster, pod_identity_associations=[
                                  {"serviceAccount": CONTROLLER_SERVICE_ACCOUNT, "roleArn": self.driver_role.role_arn}])


def _selection(selection: ec2.SubnetSelection) -> dict[str, Any]:
    return {"subnet_type": selection.subnet_type} if selection.subnet_type else {}


def fill_file_system(manifest: Sequence[Mapping[str, Any]],
                     values: Optional[Mapping[str, str]]) -> list[dict[str, Any]]:
    """``manifest`` with each of the plan's file system placeholders replaced by its deploy-time value; a
    placeholder left with no value (no created file system) is an error, never applied."""
    if not values:  # the manifest's text searched once for all the placeholders (it was dumped once for each)
        text = json.dumps(list(manifest))
        if not any(p in text for p in PLACEHOLDERS.values()):
            return list(manifest)  # nothing to fill (the common case: no created file system)
    by_text = {PLACEHOLDERS[attr]: value for attr, value in (values or {}).items()}

    def fill(value: Any) -> Any:
        if isinstance(value, str):
            for text, token in by_text.items():
                if text in value:
                    value = token if value == text else value.replace(text, token)
            if any(p in value for p in PLACEHOLDERS.values()):
                raise ValueError(f"a Kubernetes object names the shared file system, which is not created: {value}")
            return value
        if isinstance(value, Mapping):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [fill(v) for v in value]
        return value

    return [fill(copy.deepcopy(dict(obj))) for obj in manifest]
