"""A SageMaker Unified Studio project's connection to the HyperPod cluster (``AWS::DataZone::Connection``)."""

from __future__ import annotations

from aws_cdk import aws_datazone as datazone
from constructs import Construct

from ..plan.contracts import ConnectionPlan


class StudioConnection(Construct):
    """The HyperPod connection of one team's Unified Studio project, created in the domain's account and region.

    ``HyperPodProperties`` takes only the cluster's name (cfn-lint's schema for the type); ``AwsLocation`` says
    which account and region the cluster runs in, and the access role, if the contract names one. The project
    role's cluster access is not granted here: it is an EKS access entry in the capacity account's access stacks,
    onto the team's submitters group.
    """

    def __init__(self, scope: Construct, id: str, *, connection: ConnectionPlan) -> None:
        super().__init__(scope, id)
        self.resource = datazone.CfnConnection(
            self,
            "Resource",
            domain_identifier=connection.domain_id,
            project_identifier=connection.project_id,
            name=connection.name,
            description=connection.description,
            aws_location=datazone.CfnConnection.AwsLocationProperty(
                aws_account_id=connection.cluster_account, aws_region=connection.cluster_region,
                access_role=connection.access_role_arn,
            ),
            props=datazone.CfnConnection.ConnectionPropertiesInputProperty(
                hyper_pod_properties=datazone.CfnConnection.HyperPodPropertiesInputProperty(
                    cluster_name=connection.cluster_name,
                ),
            ),
        )
