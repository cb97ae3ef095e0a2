"""Specs with connection contracts, built from the shared small spec."""

from __future__ import annotations

import copy
from typing import Any

from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY

PROJECT_ROLE = "arn:aws:iam::111111111111:role/datazone_usr_role_5b3jcjsy4ar7zr_c1ncty2ag0mhmf"


def contract(**extra: Any) -> dict[str, Any]:
    c = {
        "businessOwner": "lead@example.com",
        "operationsOwner": "ops@example.com",
        "costOwner": "finance@example.com",
        "dataClassification": "internal",
        "approvedWorkloads": ["training"],
        "reviewBy": "2027-06-30",
        "exceptionOwner": "lead@example.com",
        "monitoring": "alarms answered within 1 business day",
        "support": "platform on-call, business hours",
        "retirement": "checkpoints kept 90 days",
    }
    c.update(extra)
    return c


def studio(**extra: Any) -> dict[str, Any]:
    s = {"domainId": "dzd_4p9n6sw4qt9xgn", "domainUnitId": "3bc7r1dkxeo8hj", "projectId": "5b3jcjsy4ar7zr",
         "projectRoleArn": PROJECT_ROLE, "account": "444444444444"}
    s.update(extra)
    return s


def connected() -> dict[str, Any]:
    """team-a connects through Unified Studio; team-b has a plain contract."""
    data = copy.deepcopy(BASE)
    data["teams"][0]["contract"] = contract(unifiedStudio=studio())
    data["teams"][0]["access"]["viewers"] = ["arn:aws:iam::111111111111:role/AViewer"]
    data["teams"][1]["contract"] = contract(dataClassification="confidential", reviewBy="2026-12-10")
    return data


def plan_of(data: dict[str, Any]):
    return build_plan(parse_spec(data, today=TODAY))
