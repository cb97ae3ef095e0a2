"""A fleet member's MultiKueue credential stack, ``<member>-multikueue`` (plan/multikueue_credential.py): a worker's
secret, key and minter, or the manager's copier, in the member's account and region, deployed after the member's
governance stack (which applies the Kubernetes Role the function's access entry is bound to)."""

from __future__ import annotations

from typing import Any, Optional

from aws_cdk import Annotations, Fn, Stack, aws_ec2 as ec2
from constructs import Construct

from hyperpod_gov.constructs.multikueue_credential import ManagerCopier, WorkerCredential
from hyperpod_gov.constructs.multikueue_function import Placement
from hyperpod_gov.plan import Plan
from hyperpod_gov.plan.multikueue_credential import CredentialPlan

from .base import SpecStack
from .capacity import CapacityStack


def placement(scope: Construct, plan: Plan, capacity: Optional[CapacityStack]) -> Placement:
    """The cluster's private subnets and the EKS cluster security group (a new cluster: the capacity stack's), or
    an existing cluster's subnets and the security group its kubectl handler reaches the API with."""
    if capacity is not None:
        return Placement(capacity.network.vpc, capacity.network.private_subnets,
                         cluster_security_group_id=capacity.eks.cluster.cluster_security_group_id)
    existing = plan.cluster.existing
    if existing is None:
        raise ValueError(f"{plan.name}: a member without a capacity stack governs an existing cluster")
    vpc = ec2.Vpc.from_vpc_attributes(scope, "Vpc", vpc_id=existing.vpc_id, availability_zones=Fn.get_azs())
    Annotations.of(vpc).acknowledge_warning(
        "@aws-cdk/aws-ec2:vpcAttributeIsListTokenavailabilityZones",
        "only the credential function uses the imported VPC, with explicit subnets: no subnet is selected by zone")
    subnets = [ec2.Subnet.from_subnet_id(scope, f"Subnet-{s}", s) for s in existing.subnet_ids]
    for subnet in subnets:
        Annotations.of(subnet).acknowledge_warning(
            "@aws-cdk/aws-ec2:noSubnetRouteTableId", "the subnet only places the credential function")
    group = ec2.SecurityGroup.from_security_group_id(scope, "SecurityGroup", existing.security_group_id,
                                                     mutable=False)
    return Placement(vpc, ec2.SubnetSelection(subnets=subnets), security_group=group)


class MultiKueueCredentialStack(SpecStack):
    """The member's credential infrastructure: ``WorkerCredential`` or ``ManagerCopier``."""

    def __init__(self, scope: Construct, id: str, *, plan: Plan, cp: CredentialPlan,
                 capacity: Optional[CapacityStack], governance: Stack, **kwargs: Any) -> None:
        what = ("MultiKueue worker credential: secret, key, minter" if cp.role == "worker"
                else "MultiKueue copier of the workers' credentials")
        super().__init__(scope, id, plan=plan, what=what, **kwargs)
        self.add_stack_dependency(governance, "the Kubernetes Role the function's access entry is bound to")
        where = placement(self, plan, capacity)
        self.credential = (WorkerCredential(self, "Worker", cp=cp, placement=where) if cp.role == "worker"
                           else ManagerCopier(self, "Manager", cp=cp, placement=where))
