"""Deployable stacks that compose the constructs; thin by design."""

from .capacity import CapacityStack
from .governance import GovernanceStack, TeamsStack

__all__ = ["CapacityStack", "GovernanceStack", "TeamsStack"]
