"""hyperpod-gov: govern a shared Amazon SageMaker HyperPod cluster from one typed spec.

The public API (docs/library.md)::

    import aws_cdk as cdk
    from hyperpod_gov import HyperPodGovernance, HyperPodGovernanceStage, load_spec

    app = cdk.App()
    gov = HyperPodGovernance(app, "Gov", spec=load_spec("governance.yaml"))

The names are imported on first use, so that ``import hyperpod_gov`` (and the ``hyperpod-gov`` command's
validate, explain and diff) does not start the CDK's Node.js.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .cdk_start import resolve_modules_once
    from .construct import HyperPodGovernance, HyperPodGovernanceStage
    from .fleet_construct import HyperPodFleet, add_credential_stack, fleet_manifests
    from .plan.fleet import build_fleet
    from .spec import GovernanceSpec, SpecError, SpecIssue, load_spec
    from .spec.fleet import FleetSpec, is_fleet_spec, load_fleet

__all__ = ["FleetSpec", "GovernanceSpec", "HyperPodFleet", "HyperPodGovernance", "HyperPodGovernanceStage",
           "SpecError", "SpecIssue", "__version__", "add_credential_stack", "build_fleet", "fleet_manifests",
           "is_fleet_spec", "load_fleet", "load_spec", "resolve_modules_once"]

_LAZY = {"HyperPodGovernance": ".construct", "HyperPodGovernanceStage": ".construct", "GovernanceSpec": ".spec",
         "SpecError": ".spec", "SpecIssue": ".spec", "load_spec": ".spec", "resolve_modules_once": ".cdk_start",
         "HyperPodFleet": ".fleet_construct", "FleetSpec": ".spec.fleet", "load_fleet": ".spec.fleet",
         "is_fleet_spec": ".spec.fleet", "build_fleet": ".plan.fleet", "fleet_manifests": ".fleet_construct",
         "add_credential_stack": ".fleet_construct"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hyperpod_gov' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
