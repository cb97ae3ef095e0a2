"""Deployable stacks that compose the constructs; thin by design."""

from .capacity import CapacityStack
from .consumer import ConsumerAccountStack
from .governance import GovernanceStack, TeamsStack

__all__ = ["CapacityStack", "ConsumerAccountStack", "GovernanceStack", "TeamsStack"]
