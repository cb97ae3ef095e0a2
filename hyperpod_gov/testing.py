"""Snapshot testing of a governance spec in users' own pull requests.

    from hyperpod_gov.testing import synth_snapshot

    def test_governance_matches_snapshot(snapshot):
        assert synth_snapshot("governance.yaml") == snapshot

``synth_snapshot`` synthesizes the spec exactly as ``hyperpod-gov synth`` does
(cdk-nag included) and returns a plain, stable structure: every stack's
template and every Kubernetes object, with the hashes of CDK-bundled assets
masked, so a snapshot changes only when the spec or this library changes what
it generates.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import tempfile
from pathlib import Path
from typing import Any, Union

from .plan import Plan, build_plan
from .spec import GovernanceSpec, load_spec

ASSET_HASH = re.compile(r"\b[0-9a-f]{64}\b")
MASK = "<asset-hash>"


def normalise(value: Any) -> Any:
    """Mask asset hashes (content hashes of handler code and uploaded files) and sort mapping keys."""
    return json.loads(ASSET_HASH.sub(MASK, json.dumps(value, sort_keys=True)))


def synth_snapshot(spec: Union[str, Path, GovernanceSpec, "Plan"], *, today: dt.date | None = None) -> dict[str, Any]:
    """``{"templates": {stack: template}, "manifests": {"cluster": [...], "teams": {team: [...]}}}``.

    ``spec``: a spec file, a ``GovernanceSpec``, or a plan already built from one.
    """
    from hyperpod_gov.stacks.app import governance_manifests, synth  # the composition root

    if isinstance(spec, Plan):
        plan = spec
    else:
        base_dir = None
        if not isinstance(spec, GovernanceSpec):
            base_dir = Path(spec).resolve().parent
            spec = load_spec(spec, today=today)
        plan = build_plan(spec, base_dir=base_dir)
    manifests = governance_manifests(plan)  # none for a Slurm cluster
    with tempfile.TemporaryDirectory(prefix="hyperpod-gov-") as tmp:
        assembly = synth(plan, Path(tmp), manifests=manifests)
        templates = {s.stack_name: s.template for s in assembly.stacks}
    out: dict[str, Any] = {
        "templates": dict(sorted(templates.items())),
        "manifests": {"cluster": manifests.cluster, "teams": manifests.teams},
    }
    if plan.slurm is not None:  # a Slurm cluster's governance: the files synth writes under slurm/
        from .slurm.render import files

        out["slurm"] = dict(sorted(files(plan).items()))
    return normalise(out)
