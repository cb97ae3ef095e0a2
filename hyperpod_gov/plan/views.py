"""The governance view of a plan: every decision a reviewer cares about, declared once as rows.

``diff`` (governance changes in words, privilege changes marked) and ``explain`` (the team table) are each one
generic function over these views; ``tables.py`` holds the API objects the emitters, ``drift`` and ``import``
use. A test checks that every spec path a table row reads has a row here, and that every attribute of the plan
parts is read by a row of a view or a table (or is named in ``NOT_GOVERNED`` with the reason), so a new key
cannot reach an emitter and skip ``diff``.

The views are declared by part: the ``Row``/``View`` machinery in ``views_base.py``, the cluster's views in
``views_cluster.py``, the team view in ``views_team.py``, the Slurm views in ``views_slurm.py``, the monitoring
view in ``views_monitoring.py``; this module lists them, names what no view reads, and re-exports their names.
"""

from __future__ import annotations

from typing import Mapping

# Re-exported: diff.py, explain.py and the tests import these names from here.
from .views_base import Row, TeamPart, View
from .views_cluster import (CAPACITY, CLUSTER, INSTANCE_GROUPS, PRIORITY_CLASSES, dedicated_groups,
                            network_policy_enforcement, running_operators, shared_file_system)
from .views_monitoring import MONITORING
from .views_slurm import SLURM, SLURM_GROUPS, SLURM_TEAMS
from .views_studio import STUDIO
from .views_team import TEAM, team_columns

__all__ = ["Row", "View", "TeamPart", "VIEWS", "MONITORING", "STUDIO", "TEAM", "SLURM", "SLURM_GROUPS", "SLURM_TEAMS",
           "team_columns", "NOT_GOVERNED", "dedicated_groups", "network_policy_enforcement", "running_operators",
           "shared_file_system"]


# The monitoring view, then the Unified Studio view, last: the other views' output order stays as it was.
VIEWS = (CLUSTER, CAPACITY, INSTANCE_GROUPS, PRIORITY_CLASSES, TEAM, SLURM, SLURM_GROUPS, SLURM_TEAMS, MONITORING,
         STUDIO)

# Plan attributes that no view or table reads, and why they need none.
NOT_GOVERNED: Mapping[str, str] = {
    "Plan.name": "prefixes every generated name; a rename is a new deployment",
    "Plan.account": "the capacity account; a change is a new deployment",
    "Plan.region": "the capacity region; a change is a new deployment",
    "Plan.partition": "follows the region",
    "Plan.cluster": "its parts are rows of the cluster view and the tables",
    "Plan.cohort": "generated from the spec's name",
    "Plan.teams": "the team view",
    "Plan.flavors": "the capacity view",
    "Plan.priority_classes": "the priority-class view",
    "Plan.covered_resources": "follows the instance types (capacity view)",
    "Plan.principals": "follows the teams' access (team view) and the access-entry table",
    "Plan.identities": "the team view's workload identities and the Pod Identity table",
    "Plan.policy_name": "generated from the spec's name",
    "Plan.kueue_config": "follows idle compute (cluster view)",
    "Plan.shared_pool_asked": "whether the spec asks for a shared pool: read by the invariants (the pool row)",
    "Plan.monitoring": "alarms, dashboards and topics follow the teams, their owners and alerting (read by emitters)",
    "Plan.catalog": "instance type facts",
    "Plan.contracts": "the contract row and `review`",
    "Plan.tools_policies": "the team view's tools policy row",
    "ClusterPlan.eks_name": "follows the cluster name",
    "ClusterPlan.eks_arn": "follows the cluster name",
    "ClusterPlan.instance_groups": "the instance-group view",
    "ClusterPlan.lifecycle_bucket": "generated from the spec's name and account",
    "FlavorPlan.name": "the ResourceFlavor's name, generated from the instance type",
    "FlavorPlan.accelerator_kind": "a fact of the instance type (catalog)",
    "FlavorPlan.mig_resource": "follows instanceGroups[].mig (the instance-group view)",
    "FlavorPlan.per_instance": "facts of the instance type (catalog) and its MIG profile",
    "FlavorPlan.capacity": "follows the instance groups' counts (the instance-group view)",
    "InstanceGroupPlan.path": "where the spec declares it, for findings",
    "AdminPlan.path": "where the spec lists it, for findings",
    "TeamPlan.namespace": "generated from the team name",
    "TeamPlan.cluster_queue": "generated from the team name",
    "TeamPlan.local_queue": "generated from the team name",
    "TeamPlan.is_shared_pool": "the shared pool row",
    "TeamPlan.quota_name": "generated from the team name",
    "TeamPlan.queue_reader": "generated from the team name",
    "TeamPlan.path": "where the spec declares the team, for findings",
    "TeamPlan.alarms": "the monitoring view's team alarm thresholds row (it reads them through Plan.teams)",
    "IdentityPlan.team": "the team view's key",
    "IdentityPlan.namespace": "generated from the team name",
    "IdentityPlan.source_role_name": "generated from the spec, team and service account names",
    "IdentityPlan.source_role_arn": "generated from the spec, team and service account names",
    "IdentityPlan.target_role_arn": "the workload identity row",
    "IdentityPlan.created_target": "the workload identity and data grant rows",
    "IdentityPlan.consumer": "the workload identity row",
    "IdentityPlan.consumer_account": "the consumer accounts row",
    "IdentityPlan.path": "where the spec declares it, for findings",
    # Per-team data
    "IdentityPlan.grants": "the data grant row",
    "Plan.storage": "the team view's team bucket rows",
    "PrincipalAccess.key": "the construct id",
    "PrincipalAccess.path": "where the spec first names the principal, for findings",
    # Slurm-orchestrated clusters (docs/slurm.md)
    "SlurmGroupPlan.path": "where the spec declares the group, for findings",
    "SlurmTeamPlan.path": "where the spec declares the team, for findings",
}
