"""Synthesize a fleet: every member's stacks in one CDK app, and each member's files under a folder of its own.

``synth_fleet(fleet, out)`` writes ``out/cdk.out`` (one assembly: each member's stacks ``<fleet>-<cluster>-...`` in
its own account and region), and per member ``out/k8s/<cluster>/`` (cluster.yaml, teams/), ``out/contracts/
<cluster>/``, ``out/iam/<cluster>/`` and, for a Slurm member, ``out/slurm/<cluster>/`` instead of k8s. A
single-cluster spec keeps ``stacks.app.synth`` and its layout (``out/k8s/``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Mapping, Optional

import aws_cdk as cdk

from hyperpod_gov.charts import Manifests
from hyperpod_gov.contracts import write_records
from hyperpod_gov.plan.fleet import FleetPlan
from hyperpod_gov.slurm.render import files as slurm_files
from hyperpod_gov.spec.errors import SpecError

from .app import check_manifests, synth_failure, synth_in_place, write_governance_files, write_tools_documents
from .base import STACK_CONTEXT

FLEET_ID = "HyperPodFleet"  # the fleet construct's id in the apps the library builds (the CLI's, app.py's)


def build_fleet_app(fleet: FleetPlan, manifests: Mapping[str, Manifests], *, outdir: Optional[str] = None,
                    nag: bool = True) -> cdk.App:
    """A new app holding every member of the fleet (``HyperPodFleet``), CDK's template check inside its synth."""
    from ..fleet_construct import HyperPodFleet

    app = cdk.App(outdir=outdir, analytics_reporting=False, context=dict(STACK_CONTEXT))
    HyperPodFleet(app, FLEET_ID, plan=fleet, manifests=manifests, nag=nag)  # Slurm members render their files
    return app


def write_fleet_files(fleet: FleetPlan, manifests: Mapping[str, Manifests], out_dir: Path) -> None:
    """Each member's files in a folder of its own, named after its cluster; folders of clusters no longer in the
    fleet (or of the other orchestrator) are removed."""
    for kind in ("k8s", "slurm", "contracts", "iam"):
        if (out_dir / kind).is_dir():
            for stale in (out_dir / kind).iterdir():
                if stale.is_dir() and stale.name not in fleet.plans:
                    shutil.rmtree(stale)
                elif stale.is_file():  # a single-cluster synth's files: they would govern no member
                    stale.unlink()
    for cluster, plan in fleet.plans.items():
        if plan.slurm is not None:
            write_governance_files(slurm_files(plan), out_dir / "slurm" / cluster)
            shutil.rmtree(out_dir / "k8s" / cluster, ignore_errors=True)
        else:
            manifests[cluster].write(out_dir / "k8s" / cluster)
            shutil.rmtree(out_dir / "slurm" / cluster, ignore_errors=True)
            write_tools_documents(plan, out_dir / "iam" / cluster)
        write_records(plan, out_dir / "contracts" / cluster)


def synth_fleet(fleet: FleetPlan, out_dir: Path, *, nag: bool = True,
                manifests: Optional[Mapping[str, Manifests]] = None) -> cdk.cx_api.CloudAssembly:
    """Write the fleet's cloud assembly to ``out_dir/cdk.out`` and each member's files (module docstring).

    Raises ``PolicyValidationError`` on unacknowledged cdk-nag findings and template-check errors, and
    ``SpecError`` on anything else that fails during synth (a member's manifest too large, a CDK error)."""
    from ..fleet_construct import fleet_manifests

    manifests = dict(manifests) if manifests is not None else fleet_manifests(fleet)
    issues = []
    for cluster, plan in fleet.plans.items():
        try:
            check_manifests(plan, manifests[cluster])
        except SpecError as exc:
            issues += [(cluster, i) for i in exc.issues]
    if issues:
        raise SpecError(fleet.fleet.fleet_issues(issues))

    def synth_into(assembly_dir: Path) -> None:
        try:
            app = build_fleet_app(fleet, manifests, outdir=str(assembly_dir), nag=nag)
            app.synth()
        except SpecError:
            raise
        except Exception as exc:  # jsii surfaces CDK errors as RuntimeError/JSIIError
            raise synth_failure(exc, assembly_dir) from None
        finally:
            write_fleet_files(fleet, manifests, out_dir)

    return synth_in_place(out_dir, synth_into)
