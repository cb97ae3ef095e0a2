"""Deployable stacks that compose the constructs; thin by design. ``stacks.app`` composes them into an app."""

from .capacity import CapacityStack, SlurmCapacityStack
from .consumer import ConsumerAccountStack
from .governance import AccessStack, DashboardsStack, GovernanceStack, MonitoringStack, TeamsStack

__all__ = ["AccessStack", "CapacityStack", "ConsumerAccountStack", "DashboardsStack", "GovernanceStack",
           "MonitoringStack", "SlurmCapacityStack", "TeamsStack"]
