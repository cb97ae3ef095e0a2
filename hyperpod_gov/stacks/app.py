"""Compose every stack of a plan into a CDK app, synthesize it, and report any failure like a spec error.

This is the one place that turns a ``Plan`` into stacks: ``app.py`` (``cdk synth``),
``hyperpod-gov synth``, ``hyperpod_gov.testing`` and the pipeline's stages all
call it, so ``cdk deploy`` and the pipeline deploy stacks of the same names.
"""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from functools import partial
from pathlib import Path
from typing import Callable, Mapping, Optional, Sequence

import aws_cdk as cdk

from hyperpod_gov.charts import Manifests, governance_manifests, render
from hyperpod_gov.constructs.manifests import MAX_MANIFEST_BYTES, manifest_size
from hyperpod_gov.contracts import write_records
from hyperpod_gov.plan import Plan
from hyperpod_gov.plan.tools_policy import foreign_documents, hyperpod_cluster_pattern
from hyperpod_gov.slurm.render import files as slurm_files
from hyperpod_gov.spec.errors import SpecError, SpecIssue
from hyperpod_gov.template_checks import LARGE_PLAN_TEAMS, TemplateChecks
from hyperpod_gov.template_checks import environment as template_environment
from hyperpod_gov.template_checks import shared as shared_template_checks

from .base import STACK_CONTEXT
from .predicted import Predictions

def build_app(plan: Plan, manifests: Manifests, *, app: Optional[cdk.App] = None, outdir: Optional[str] = None,
              nag: bool = True, governance_files: Optional[Mapping[str, str]] = None,
              builtin_template_checks: bool = True, predictions: Optional[Predictions] = None) -> cdk.App:
    """Every stack of the plan in ``app`` (a new one unless given), through the public construct
    (``hyperpod_gov.HyperPodGovernance``, id ``GOVERNANCE_ID``), as ``hyperpod-gov synth``, ``app.py`` and
    ``hyperpod_gov.testing`` build it. ``governance_files``: a Slurm plan's rendered files (``slurm_files(plan)``
    unless given); ``manifests`` are empty for it (``governance_manifests``). ``builtin_template_checks=False``: a
    new app leaves CDK's template check to the caller (``hyperpod_gov.template_checks``, as ``synth`` runs it);
    ``predictions``: given each access and teams stack once built, for the check to take it before CDK writes it
    (``stacks.predicted``)."""
    from ..construct import HyperPodGovernance

    if app is None:  # the app's own context: the stacks set the flags on themselves (base.apply_feature_flags)
        app = cdk.App(outdir=outdir, analytics_reporting=False, context=dict(STACK_CONTEXT),
                      builtin_cloud_formation_validation=builtin_template_checks)
    HyperPodGovernance(app, GOVERNANCE_ID, plan=plan, manifests=manifests, nag=nag,
                       governance_files=governance_files,
                       built=predictions.offer if predictions is not None else None)
    return app


# The id of the governance construct in the apps the library builds itself (the CLI's, the reference app's).
GOVERNANCE_ID = "HyperPodGovernance"


class PolicyValidationError(Exception):
    """cdk-nag (or another validation plugin) found unacknowledged violations."""

    def __init__(self, violations: list[str], report: Path):
        self.violations = violations
        self.report = report
        super().__init__(f"{len(violations)} policy violation(s); report: {report}")


def _violations(report: Path) -> list[str]:
    data = json.loads(report.read_text())
    out = []
    for plugin in data.get("pluginReports", []):
        for v in plugin.get("violations", []):
            for c in v.get("violatingConstructs", []):
                out.append(f"{c['constructPath']}: {v['ruleName']}: {v['description']}")
    return sorted(out)


def check_manifests(plan: Plan, manifests: Manifests) -> None:
    """Each manifest travels in one custom resource request: over the limit, say which team and what to do."""
    issues = []
    if manifest_size(manifests.cluster) > MAX_MANIFEST_BYTES:
        issues.append(SpecIssue("scheduler", f"the cluster-wide Kubernetes objects take "
                                f"{manifest_size(manifests.cluster)} bytes, over {MAX_MANIFEST_BYTES}",
                                len(plan.flavors), "use fewer instance types or priority classes"))
    for name, objects in manifests.teams.items():
        size = manifest_size(objects)
        if size > MAX_MANIFEST_BYTES:
            issues.append(SpecIssue(f"teams[{name}]", f"the team's Kubernetes objects take {size} bytes, over "
                                    f"{MAX_MANIFEST_BYTES}", name,
                                    "split the team, or give it fewer egress rules and service accounts"))
    if issues:
        raise SpecError(issues)


def synth_error(exc: BaseException) -> SpecError:
    """A failure during synth that the plan's invariants did not foresee, reported like a spec error (no traceback).

    jsii raises CDK's own errors as ``RuntimeError`` (``JSIIError``): those name a construct path or a value of the
    spec. Anything else is a defect of hyperpod-gov itself, and says so.
    """
    text = str(exc).strip().splitlines()
    message = next((line.strip() for line in text if line.strip() and not line.startswith("    at ")), repr(exc))
    if isinstance(exc, RuntimeError):
        return SpecError([SpecIssue(
            "(synth)", f"CDK could not synthesize the app: {message}", type(exc).__name__,
            "this spec passed every check but not CDK: change the value the message names, and report the spec to "
            "hyperpod-gov so that the plan checks it before synth",
        )])
    return SpecError([SpecIssue(
        "(synth)", f"hyperpod-gov failed while building the app: {message}", type(exc).__name__,
        "this is a defect of hyperpod-gov, not of the spec: report it with the spec",
    )])


def write_tools_documents(plan: Plan, directory: Path) -> list[Path]:
    """``<team>.json``: the tools policy document of each team with principals in other accounts, for those
    accounts' administrators to attach (this app cannot attach a policy in another account); stale files go."""
    arn = hyperpod_cluster_pattern(plan.hyperpod_cluster_arn, partition=plan.partition, region=plan.region,
                                   account=plan.account)
    documents = foreign_documents((t.tools_policy for t in plan.teams), arn)
    written = []
    if documents:
        directory.mkdir(parents=True, exist_ok=True)
        for team, text in sorted(documents.items()):
            path = directory / f"{team}.json"
            path.write_text(text)
            written.append(path)
    if directory.is_dir():
        for stale in set(directory.glob("*.json")) - set(written):
            stale.unlink()
    return written


def write_governance_files(files: Mapping[str, str], directory: Path) -> list[Path]:
    """A Slurm plan's rendered files (relative path -> text) under ``directory``, shell scripts executable; files
    of an earlier synth that the plan no longer renders go (the directory holds nothing else)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in sorted(files.items()):
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o755 if name.endswith(".sh") else 0o644)
        written.append(path)
    for stale in sorted(set(p for p in directory.rglob("*") if p.is_file()) - set(written)):
        stale.unlink()
    for folder in sorted((p for p in directory.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        if not any(folder.iterdir()):
            folder.rmdir()
    return written



def synth_failure(exc: Exception, assembly_dir: Path) -> Exception:
    """What a failed ``app.synth()`` raises: the policy violations of its validation report where cdk-nag's or the
    template checks' validation failed, else the CDK error as a ``SpecError`` (``synth_error``)."""
    report = assembly_dir / "validation-report.json"
    if "ValidationFailed" in str(exc) and report.exists():
        return PolicyValidationError(_violations(report), report)
    return synth_error(exc)

def synth(plan: Plan, out_dir: Path, *, nag: bool = True, manifests: Optional[Manifests] = None,
          checks: Optional[TemplateChecks] = None,
          resource_counts: Optional[dict[str, int]] = None) -> cdk.cx_api.CloudAssembly:
    """Write the cloud assembly to ``out_dir/cdk.out``, the manifests to ``out_dir/k8s`` (for a Slurm cluster
    its governance files to ``out_dir/slurm`` instead, and no ``k8s``), the contract records to
    ``out_dir/contracts`` and, for teams with principals in other accounts, their tools policy documents to
    ``out_dir/iam/<team>.json``.

    CDK's template check runs in a process of its own (``hyperpod_gov.template_checks``; ``checks``: one the
    caller started earlier, else this process's ``shared()`` one), so that its engine is built while the app is;
    where it is not available, CDK runs it inside the synth as usual. Either way its report is in
    ``validation-report.json``.

    ``resource_counts``, when given, is filled with the number of resources in each stack's template (by its file
    name in the assembly), read from the written files by the second thread while the template check finishes (at
    300 teams a third of a second that came after it).

    Raises ``PolicyValidationError`` on unacknowledged cdk-nag findings and template-check errors, and
    ``SpecError`` on anything else that fails during synth.
    """
    checks = checks or shared_template_checks()
    return synth_in_place(out_dir, lambda assembly_dir: _synth_into(
        plan, out_dir, assembly_dir, nag=nag, manifests=manifests, checks=checks, resource_counts=resource_counts))


def synth_in_place(out_dir: Path, synth_into: Callable[[Path], object]) -> cdk.cx_api.CloudAssembly:
    """``synth_into(assembly_dir)`` writes a cloud assembly to ``assembly_dir``, beside ``out_dir/cdk.out``; once
    whole it takes that place (a ``PolicyValidationError``'s assembly too, its report then named there), so an
    earlier synth's templates (another spec's stacks) never stay beside the new ones, and a synth that fails
    otherwise leaves the last one as it was. Returns the assembly as ``out_dir/cdk.out`` holds it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    assembly_dir = out_dir / f".cdk.out.{os.getpid()}.tmp"
    shutil.rmtree(assembly_dir, ignore_errors=True)
    try:
        synth_into(assembly_dir)
    except PolicyValidationError as exc:  # a whole assembly, with its validation report: it takes the place too
        _replace(assembly_dir, out_dir / "cdk.out")
        raise PolicyValidationError(exc.violations, _moved(exc.report, assembly_dir, out_dir / "cdk.out")) from None
    except BaseException:
        shutil.rmtree(assembly_dir, ignore_errors=True)
        raise
    _replace(assembly_dir, out_dir / "cdk.out")
    return cdk.cx_api.CloudAssembly(str(out_dir / "cdk.out"))


def _replace(new: Path, old: Path) -> None:
    """``new`` takes the place of the folder ``old`` (two renames in one folder; the old one is deleted after)."""
    gone = old.with_name(f".{old.name}.{os.getpid()}.old")
    shutil.rmtree(gone, ignore_errors=True)
    if old.exists():
        old.rename(gone)
    new.rename(old)
    shutil.rmtree(gone, ignore_errors=True)


def _moved(path: Optional[Path], before: Path, after: Path) -> Optional[Path]:
    """``path`` inside ``before``, as it is named once ``before`` became ``after``."""
    if path is None:
        return None
    try:
        return after / Path(path).relative_to(before)
    except ValueError:
        return path


def _synth_into(plan: Plan, out_dir: Path, assembly_dir: Path, *, nag: bool, manifests: Optional[Manifests],
                checks: Optional[TemplateChecks], resource_counts: Optional[dict[str, int]]
                ) -> cdk.cx_api.CloudAssembly:
    """``synth``'s work, with the assembly written to ``assembly_dir``."""
    files: Optional[dict[str, str]] = None
    if plan.slurm is not None:
        files = slurm_files(plan)
        manifests = governance_manifests(plan)
        write_governance_files(files, out_dir / "slurm")
        # What an earlier EKS synth into the same directory wrote there would govern nothing here.
        for stale in ((out_dir / "k8s" / "cluster.yaml"), *sorted((out_dir / "k8s" / "teams").glob("*.yaml")),
                      *sorted((out_dir / "iam").glob("*.json"))):  # no tools policy reaches a Slurm cluster
            stale.unlink(missing_ok=True)
        for folder in (out_dir / "k8s" / "teams", out_dir / "k8s", out_dir / "iam"):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        write_files = partial(write_records, plan, out_dir / "contracts")
    else:
        manifests = manifests or render(plan)
        check_manifests(plan, manifests)
        write_files = partial(_write_files, plan, manifests, out_dir)
    # The files written in Python (k8s/, contracts/, iam/) are written by a second thread while this one waits
    # for Node.js to synthesize the app and the templates to be checked: on two cores they cost no wall time. Not
    # while the app is built: that thread would hold the GIL when each of this one's jsii replies comes (a 300-team
    # capacity stack took 3.6 s beside it, 0.9 s alone). Both are done before this returns or raises.
    large = len(plan.tenants) >= LARGE_PLAN_TEAMS
    predictions: Optional[Predictions] = None
    if checks is not None and large:
        predictions = Predictions(checks, plan)
        checks.warm_up()  # on the other core, while the app is built
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="synth-files") as pool:
        written: Optional[Future[None]] = None
        counted: Optional[Future[dict[str, int]]] = None
        try:
            with predictions or nullcontext():  # each plain stack's template checked once built, before it is written
                app = build_app(plan, manifests, outdir=str(assembly_dir), nag=nag, governance_files=files,
                                builtin_template_checks=checks is None, predictions=predictions)
            if checks is not None and large:  # each template checked once written, while the synth writes the next ones
                checks.watch(_templates(app, assembly_dir))
            written = pool.submit(write_files)
            assembly = app.synth()
            if resource_counts is not None:  # after the files, on the same thread: every stack the assembly holds
                counted = pool.submit(_resource_counts, [assembly_dir / s.template_file for s in assembly.stacks])
            errors, report = checks.check(assembly_dir) if checks is not None else ([], None)
        except SpecError:
            raise
        except Exception as exc:  # jsii surfaces CDK errors as RuntimeError/JSIIError
            raise synth_failure(exc, assembly_dir) from None
        finally:
            if written is None:  # the app failed to build: the files are still written, as they were before
                written = pool.submit(write_files)
        written.result()  # an error writing them is raised here
        if counted is not None and resource_counts is not None:
            resource_counts.update(counted.result())
    if errors:
        raise PolicyValidationError(errors, report)
    return assembly


def _templates(app: cdk.App, assembly_dir: Path) -> list[tuple[Path, Optional[str], Optional[str]]]:
    """Each stack's template file as the assembly will hold it, with its account and region (two jsii reads a
    stack)."""
    return [(assembly_dir / stack.template_file, *template_environment(stack.environment))
            for stack in app.node.children if isinstance(stack, cdk.Stack)]


def _resource_counts(templates: Sequence[Path]) -> dict[str, int]:
    """Each template's number of resources by its file name, read from the file CDK wrote (through jsii,
    ``stack.template``, Node.js sends each template whole: seconds at 300 teams)."""
    return {path.name: len(json.loads(path.read_text()).get("Resources", {})) for path in templates}


def _write_files(plan: Plan, manifests: Manifests, out_dir: Path) -> None:
    manifests.write(out_dir / "k8s")
    write_records(plan, out_dir / "contracts")
    write_tools_documents(plan, out_dir / "iam")


def assembly_warnings(assembly: cdk.cx_api.CloudAssembly) -> list[str]:
    """Warnings that constructs attached to the app (stable ids first), sorted."""
    out = []
    for stack in assembly.stacks:
        for message in stack.messages:
            if message.level == cdk.cx_api.SynthesisMessageLevel.WARNING:
                out.append(f"{message.id}: {message.entry.data}")
    return sorted(out)
