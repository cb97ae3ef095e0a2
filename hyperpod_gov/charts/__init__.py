"""cdk8s charts, one concern per module. ``render`` builds them all for a spec."""

from .render import Manifests, render

__all__ = ["Manifests", "render"]
