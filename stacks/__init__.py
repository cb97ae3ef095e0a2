"""Deployable stacks that compose the constructs; thin by design."""

from .capacity import CapacityStack

__all__ = ["CapacityStack"]
