"""A generated spec with many teams, for the CloudFormation-limit test and the benchmark."""

from __future__ import annotations

from typing import Any


def many_teams_spec(teams: int, *, mode: str = "task-governance") -> dict[str, Any]:
    return {
        "name": "scale",
        # 600 principals: over one access stack's budget (the plan says so and names this key).
        "deployment": {"accessStacks": 2},
        "accounts": {
            "capacity": {"id": "111111111111", "region": "us-east-1"},
            "consumers": [{"name": "data", "id": "222222222222", "region": "us-east-1"}],
        },
        "cluster": {
            "name": "big",
            "admins": ["arn:aws:iam::111111111111:role/PlatformAdmin"],
            "instanceGroups": [{"name": "gpu", "instanceType": "ml.g5.2xlarge", "count": teams}],
            "dependenciesChart": {"repository": "https://example.com/charts", "chart": "hyperpod", "version": "1.0.0"},
        },
        "scheduler": {"mode": mode, "priorityClasses": [{"name": "inference", "weight": 100},
                                                        {"name": "training", "weight": 50}]},
        "teams": [
            {
                "name": f"team-{i:03d}",
                "quota": [{"instanceType": "ml.g5.2xlarge", "count": 1}],
                "sharing": {"strategy": "LendAndBorrow", "borrowLimitPercent": 100},
                "access": {
                    "viewers": [f"arn:aws:iam::111111111111:role/team-{i:03d}-viewer"],
                    "submitters": [f"arn:aws:iam::111111111111:role/team-{i:03d}-scientist"],
                },
                "workloadIdentities": [
                    {"serviceAccount": "trainer", "targetRoleArn": f"arn:aws:iam::222222222222:role/team-{i:03d}-data"},
                    {"serviceAccount": "notebook"},
                ],
                "images": [f"111111111111.dkr.ecr.us-east-1.amazonaws.com/team-{i:03d}/"],  # HPG-A011
                "egress": [{"cidr": "10.50.0.0/16", "ports": [443, 5432]}],
                "contract": {
                    "businessOwner": f"lead-{i}@example.com", "operationsOwner": f"ops-{i}@example.com",
                    "costOwner": "finance@example.com", "dataClassification": "internal",
                    "approvedWorkloads": ["training"], "reviewBy": "2027-12-31",
                },
            }
            for i in range(teams)
        ],
    }
