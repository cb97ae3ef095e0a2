"""Synthesis helpers for tests: one jsii process per session, templates normalised for snapshots, cfn-lint with its
rule set loaded once per process."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from hyperpod_gov.spec.models import GovernanceSpec

HASH = re.compile(r"\b[0-9a-f]{64}\b")


@dataclass
class Synthesized:
    """Templates (by stack name) and construct warnings of one synthesized spec."""

    spec: GovernanceSpec
    out_dir: Path
    templates: dict[str, dict[str, Any]]
    warnings: list[str]

    def template(self, role: str) -> dict[str, Any]:
        return self.templates[f"{self.spec.name}-{role}"]

    def template_files(self) -> list[Path]:
        return sorted((self.out_dir / "cdk.out").glob("*.template.json"))


def synthesize(spec: GovernanceSpec, out_dir: Path, *, nag: bool = True) -> Synthesized:
    """``stacks.app.synth`` of the spec (``nag=False``: without cdk-nag, for a test of what constructs attach)."""
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.stacks.app import synth

    return _synthesized(spec, out_dir, synth(build_plan(spec), out_dir, nag=nag))


def synthesized_in(spec: GovernanceSpec, out_dir: Path) -> Synthesized:
    """What ``synthesize(spec, out_dir)`` returned, read back from the folder it wrote (by another test process)."""
    import aws_cdk as cdk

    return _synthesized(spec, out_dir, cdk.cx_api.CloudAssembly(str(out_dir / "cdk.out")))


def _synthesized(spec: GovernanceSpec, out_dir: Path, assembly) -> Synthesized:
    from hyperpod_gov.stacks.app import assembly_warnings

    templates = {s.stack_name: s.template for s in assembly.stacks}
    return Synthesized(spec, out_dir, templates, assembly_warnings(assembly))


def normalise(template: dict[str, Any]) -> dict[str, Any]:
    """Mask what changes without a change of ours: asset hashes (content of CDK-bundled handlers)."""
    return json.loads(HASH.sub("<asset-hash>", json.dumps(template, sort_keys=True)))


def snapshot_parts(templates: dict[str, dict[str, Any]], team_stacks: dict[str, tuple[str, ...]]
                   ) -> dict[str, dict[str, Any]]:
    """Normalised templates cut into one part per stack and, in a team stack, one part per team.

    A team's part holds the resources of its construct scope (logical ids start with the team name without its
    dashes; the longest such name wins); the stack's part keeps the rest (parameters, shared topics). The parts
    are a partition: merging each team's resources back into its stack gives the template again.
    """
    parts: dict[str, dict[str, Any]] = {}
    for name, template in sorted(templates.items()):
        t = normalise(template)
        prefixes = sorted(((re.sub(r"[^A-Za-z0-9]", "", team), team) for team in team_stacks.get(name, ())),
                          key=lambda p: -len(p[0]))
        own: dict[str, dict[str, Any]] = {team: {} for _, team in prefixes}
        shared = {}
        for logical_id, r in t["Resources"].items():
            team = next((team for prefix, team in prefixes if logical_id.startswith(prefix)), None)
            (own[team] if team else shared)[logical_id] = r
        parts[name] = {**t, "Resources": shared}
        parts.update({f"{name}.{team}": {"Resources": rs} for team, rs in own.items()})
    return parts


def resources(template: dict[str, Any], type_: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for logical_id, r in sorted(template["Resources"].items()):
        if r["Type"] == type_:
            yield logical_id, r.get("Properties", {})


# What the CDK CLI's ``cdk synth`` adds to the app's context by default (path and asset metadata on the resources):
# an app built in the tests with it writes the templates the CLI writes.
CDK_CLI_CONTEXT = {"aws:cdk:enable-path-metadata": True, "aws:cdk:enable-asset-metadata": True}
# What `cdk synth` of this repository's app.py adds besides: cdk.json's context (the feature flags; CDK's built-in
# template check reads @aws-cdk/core:validateAgainstDefaultRules from the app, where an error fails the synth).
REFERENCE_APP_CONTEXT = {**json.loads((Path(__file__).resolve().parents[1] / "cdk.json").read_text())["context"],
                         **CDK_CLI_CONTEXT}


def minimal_app(**kwargs: Any):
    """A ``cdk.App`` for a test of its own stacks (a construct alone on a ``cdk.Stack``, a pipeline's layout):
    CDK's template check off unless asked for. Building its engine costs 2 to 5 s of CPU in a test process that
    has not built it yet, and checking each template a little more: the construct modules run alone take a fifth
    less CPU without it (docs/test-suite.md). Every app the suite synthesizes whole is checked: ``synthesize``
    (``stacks.app.synth``) and the session fixtures, the ``pipeline`` fixture by CDK's own plugin."""
    import aws_cdk as cdk

    kwargs.setdefault("builtin_cloud_formation_validation", False)
    return cdk.App(**kwargs)


def build_app_for(spec: GovernanceSpec, **kwargs: Any):
    """The CDK app of a spec, as ``cdk synth`` builds it (not synthesized yet)."""
    from hyperpod_gov.charts import render
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.stacks.app import build_app

    plan = build_plan(spec)
    return build_app(plan, render(plan), **kwargs)


def build_pipeline_app_for(spec: GovernanceSpec, **kwargs: Any):
    from stacks.pipeline import build_pipeline_app

    return build_pipeline_app(spec, **kwargs)



# CDK stages a file asset by copying it into the assembly folder when the asset is constructed, and keeps a staged
# file that is there already (aws-cdk-lib core/lib/asset-staging: the file's name is the hash of its content). An app
# with the EKS cluster carries two Lambda layers (kubectl 35 MB, the AWS CLI 21 MB): about 90 copies and 2.6 GB
# written per test run. With ``use_asset_pool`` those are hard links to the run's first copy instead.
POOLED_BYTES = 1 << 20  # smaller staged files are copied as CDK does
_asset_pool: Optional[Path] = None


def use_asset_pool(folder: Path) -> None:
    """From now on in this process, a ``cdk.App`` given an ``outdir`` starts with the pool's staged files linked
    into it under their staged names, so that CDK finds them staged, and its ``synth`` then takes out those no asset
    manifest of the assembly names (the folder holds what CDK writes, no more) and adds the large files CDK staged
    itself to the pool. ``folder``: on the file system of the run's temporary folders, shared by the workers
    (tests/conftest.py)."""
    global _asset_pool
    folder.mkdir(parents=True, exist_ok=True)
    _pool_apps()
    _asset_pool = folder


@functools.cache
def _pool_apps() -> None:
    """``cdk.App``'s ``__init__`` and ``synth`` wrapped for the pool, once per process."""
    import aws_cdk as cdk

    init, synth = cdk.App.__init__, cdk.App.synth

    def pooled_init(self, **kwargs: Any) -> None:
        if kwargs.get("outdir") is None and _asset_pool is not None and not os.environ.get("CDK_OUTDIR"):
            # CDK would make a folder of its own in the system's temporary folder (removed when its Node.js ends)
            # and copy the layers into it; one beside the pool, among the run's temporary folders, gets them linked
            kwargs["outdir"] = tempfile.mkdtemp(prefix="cdk.out", dir=_asset_pool.parent)
        init(self, **kwargs)
        if kwargs.get("outdir") is not None:
            _seed(Path(kwargs["outdir"]))

    def pooled_synth(self, **kwargs: Any):
        assembly = synth(self, **kwargs)
        _settle(Path(assembly.directory))
        return assembly

    cdk.App.__init__, cdk.App.synth = pooled_init, pooled_synth


_SEEDED: dict[Path, list[Path]] = {}  # assembly folder -> the pool's files linked into it and not settled yet


def _seed(assembly_dir: Path) -> None:
    pool = _asset_pool
    if pool is None:
        return
    assembly_dir.mkdir(parents=True, exist_ok=True)
    seeded = _SEEDED.setdefault(assembly_dir.resolve(), [])
    for staged in pool.iterdir():
        target = assembly_dir / staged.name
        if not target.exists():
            with contextlib.suppress(OSError):  # another file system: CDK copies it
                os.link(staged, target)
                seeded.append(target)


def _settle(assembly_dir: Path) -> None:
    pool = _asset_pool
    named = _named_assets(assembly_dir)
    for target in _SEEDED.pop(assembly_dir.resolve(), []):
        if target.name not in named:
            target.unlink(missing_ok=True)
    if pool is None:
        return
    for staged in assembly_dir.glob("asset.*"):
        if staged.name in named and staged.is_file() and staged.stat().st_size >= POOLED_BYTES:
            with contextlib.suppress(OSError):  # there already (another worker's), or another file system
                os.link(staged, pool / staged.name)


def _named_assets(assembly_dir: Path) -> set[str]:
    """The file names of the file assets the asset manifests of an assembly (and of its stages' nested ones) stage."""
    names = set()
    for manifest in assembly_dir.rglob("*.assets.json"):
        for asset in json.loads(manifest.read_text()).get("files", {}).values():
            names.add(Path(asset["source"]["path"]).name)
    return names


@functools.cache
def _cfn_lint_rules():
    """cfn-lint's default rule set. Building it reads every rule module and several data files (about half a second
    of CPU); cfn-lint's own command line builds it once and runs it over every template it is given, as here."""
    from cfnlint.config import ConfigMixIn
    from cfnlint.runner import Runner

    return Runner(ConfigMixIn([])).rules



_LINTED: dict[tuple[str, str], tuple] = {}  # (sha-256 of the template's bytes, region) -> matches


def cfn_lint(path: Path, region: str) -> list:
    """cfn-lint's matches for one template file in one region: what ``cfnlint.api.lint_file(path,
    config=ManualArgs(regions=[region]))`` returns, without building the rule set again for every file.

    A template whose bytes were linted for the region already in this process gets the same matches again (the
    tests' variant apps share stacks byte for byte); such a match names the first file it was found in.
    """
    from cfnlint.config import ConfigMixIn
    from cfnlint.runner import run_template_by_file_path

    path = Path(path)
    key = (hashlib.sha256(path.read_bytes()).hexdigest(), region)
    if key not in _LINTED:
        config = ConfigMixIn(["--template", str(path)], regions=[region])
        _LINTED[key] = tuple(run_template_by_file_path(str(path), config, _cfn_lint_rules(), False))
    return list(_LINTED[key])
