"""Write one member of a fleet spec as a single-cluster spec file, for the fleet pipeline's drift check and evidence
record of that member (``hyperpod-gov drift`` and ``evidence`` read single-cluster specs):

    python -m stacks.fleet_member FLEET.yaml ENVIRONMENT|- CLUSTER OUT.yaml

The member is what ``load_fleet`` validated for that cluster (``FleetSpec.members``: its team overrides merged on),
written back as the keys it was given (``model_dump(exclude_unset=True)``, camelCase). Write OUT beside the fleet
spec: a member's relative paths (chart directories) are the fleet's. Imports no CDK: CodeBuild runs it before the
drift check and the evidence record.
"""

from __future__ import annotations

import sys
from typing import Optional

import yaml

from hyperpod_gov import load_fleet


def write_member(fleet_path: str, environment: Optional[str], cluster: str, out: str) -> None:
    members = load_fleet(fleet_path, environment=environment).members
    if cluster not in members:
        raise SystemExit(f"{fleet_path}: no cluster {cluster!r} (clusters: {', '.join(members)})")
    with open(out, "w") as f:
        yaml.safe_dump(members[cluster].model_dump(mode="json", by_alias=True, exclude_unset=True), f,
                       sort_keys=False)


if __name__ == "__main__":
    path, env, name, target = sys.argv[1:5]
    write_member(path, None if env == "-" else env, name, target)
