"""A spec that governs a Unified Studio domain: one unit with creators, owners and an override, one project
profile, and team-a's project created by name in the unit (issue 59, "Delegation in code")."""

from __future__ import annotations

from typing import Any

from tests.contracts.helpers import PROJECT_ROLE, connected, contract

DOMAIN = "dzd_4p9n6sw4qt9xgn"
ROOT_UNIT = "4p9n6sw4qt9xgn"


def domain(**extra: Any) -> dict[str, Any]:
    d = {
        "id": DOMAIN, "account": "444444444444", "region": "us-east-1", "rootDomainUnitId": ROOT_UNIT,
        "domainUnits": [{
            "name": "ml-research",
            "description": "Research teams' projects on the shared HyperPod cluster",
            "owners": {"groups": ["ml-platform-admins"]},
            "projectProfiles": ["hyperpod-training"],
            "projectCreators": {"groups": ["research-leads"]},
            "projectOwnersOverride": {"groups": ["ml-platform-admins"]},
        }],
        "projectProfiles": [{
            "name": "hyperpod-training",
            "description": "Projects that submit training work to the shared HyperPod cluster",
            "useDefaultConfigurations": False,
            "environmentConfigurations": [{
                "name": "Tooling", "blueprintId": "cjegf7f6kky6w7", "deploymentMode": "ON_CREATE",
                "deploymentOrder": 0,
                "parameterOverrides": [{"name": "maxEbsVolumeSize", "value": "100", "editable": False}],
            }],
        }],
    }
    d.update(extra)
    return d


def by_name(**extra: Any) -> dict[str, Any]:
    s = {"domain": DOMAIN, "domainUnit": "ml-research", "project": "research", "projectRoleArn": PROJECT_ROLE,
         "owners": {"groups": ["research-leads"]}, "members": {"groups": ["research-scientists"]}}
    s.update(extra)
    return s


def delegated() -> dict[str, Any]:
    """team-a's project is created by name in ml-research; team-b keeps a plain contract."""
    data = connected()
    data["unifiedStudio"] = {"domains": [domain()]}
    data["teams"][0]["contract"] = contract(unifiedStudio=by_name())
    return data
