"""What CloudFormation cannot create in Amazon Managed Grafana, as files applied once after deploy: a folder and a
dashboard per team (Grafana's HTTP API bodies) and the workspace admins (the ``UpdatePermissions`` batch).

``python -m hyperpod_gov.grafana_export SPEC OUT_DIR`` writes ``OUT_DIR/<team>.json`` (``{"folder", "dashboard"}``:
the bodies of ``POST /api/folders`` and ``POST /api/dashboards/db``) and ``OUT_DIR/permissions.json`` (the
``--update-instruction-batch`` of ``aws grafana update-permissions``); docs/observability.md gives the commands.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .plan.prometheus import GrafanaPlan

KINDS = {"group": "SSO_GROUP", "user": "SSO_USER"}


def folder_uid(team: str) -> str:
    return f"hpg-{team}"[:40]


def team_files(grafana: GrafanaPlan) -> dict[str, dict[str, Any]]:
    """File name -> content: per team its folder and its dashboard in that folder."""
    out = {}
    for team, dashboard in grafana.dashboards:
        out[f"{team}.json"] = {"folder": {"uid": folder_uid(team), "title": team},
                               "dashboard": {"dashboard": json.loads(dashboard), "folderUid": folder_uid(team),
                                             "overwrite": True}}
    return out


def permissions(grafana: GrafanaPlan) -> list[dict[str, Any]]:
    """The UpdatePermissions batch that makes ``grafana.admins`` the workspace's admins."""
    if not grafana.admins:
        return []
    users = [{"id": entry.split(":", 1)[1], "type": KINDS[entry.split(":", 1)[0]]} for entry in grafana.admins]
    return [{"action": "ADD", "role": "ADMIN", "users": users}]


def write(grafana: GrafanaPlan, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in {**team_files(grafana), "permissions.json": permissions(grafana)}.items():
        path = out / name
        path.write_text(json.dumps(content, indent=1, sort_keys=True) + "\n")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    from .plan import build_plan
    from .spec import load_spec

    if len(argv) != 2:
        print("usage: python -m hyperpod_gov.grafana_export SPEC OUT_DIR", file=sys.stderr)
        return 2
    plan = build_plan(load_spec(Path(argv[0])))
    if plan.prometheus is None or plan.prometheus.grafana is None:
        print("the spec has no monitoring.grafana", file=sys.stderr)
        return 1
    for path in write(plan.prometheus.grafana, Path(argv[1])):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
