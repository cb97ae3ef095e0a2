"""Spec keys that no governance view, table or team-object row names, and why ``diff`` and ``explain`` need none.

``tests/plan/test_spec_coverage.py`` walks every key path of the spec's JSON Schema (lists as ``[]``, the values of
a map as ``*``) and fails for a path that no row of ``views.VIEWS``, ``tables.TABLES`` or
``charts.fields.TEAM_OBJECTS`` names (itself or through an ancestor) and that is not listed here (itself or
through an ancestor); it also fails for an entry here that names no spec path any more, or a path a row covers.
"""

from __future__ import annotations

from typing import Mapping

__all__ = ["SPEC_NOT_GOVERNED"]

SPEC_NOT_GOVERNED: Mapping[str, str] = {
    "name": "prefixes every generated name (stacks, roles, alarms, policy); a rename is a new deployment, which the "
            "resource diff shows object by object",
    "accounts.capacity": "the deployment's target account and region; a change is a new deployment, not a change "
                         "of the governed cluster",
    "acknowledgements": "accept findings of the spec rules and plan invariants, each with its reason, at review "
                        "time (validate, review); they change no governed object",
    "environments": "merged into the spec before the plan is built; each environment's merged spec is validated, "
                    "planned and diffed as a whole, so its keys reach diff through the keys they override",
    "deployment.pipeline.account": "where the reference delivery pipeline runs, not the governed cluster; where it "
                                   "takes the spec from is the cluster view's delivery source row",
    "deployment.pipeline.region": "where the reference delivery pipeline runs, not the governed cluster",
    "deployment.accessStacks": "stack sharding: moves resources between stacks and changes stack names only, "
                               "which the resource diff shows",
    "deployment.teamStacks": "stack sharding: moves resources between stacks and changes stack names only, "
                             "which the resource diff shows",
    "instanceTypes": "declares catalog facts (accelerators, memory, vCPUs, MIG profiles) of instance types the "
                     "catalog lacks; they reach governed state only through the quotas, whose rows show the amounts",
    "teams[].allowInternetEgress": "a validation gate: lets the spec declare egress rules that reach the internet; "
                                   "the rules themselves are the team view's egress row (privilege-marked)",
    # Governed, and shown by diff, but not through a view row: candidates for a row in the views' owners' modules.
    "teams[].retiring": "diff words it in its retirement section (contracts.events.retirement_notes: which "
                        "principals lose cluster access, which workload identities go); the access entries and Pod "
                        "Identity associations it removes are in the resource diff",
    "cluster.existing.vpcId": "shown by the cluster view's VPC row (its words name the existing VPC), whose spec "
                              "path names cluster.vpc only; naming it there (views_cluster.py) makes this entry "
                              "stale, and the coverage test asks for its removal",
}
