"""cdk8s charts, one concern per module. ``render`` builds them all for a spec."""

from .render import Manifests, governance_manifests, render

__all__ = ["Manifests", "governance_manifests", "render"]
