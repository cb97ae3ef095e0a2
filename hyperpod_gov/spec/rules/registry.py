"""Every spec rule in one rule book, and the runner.

The rules live by area beside this module; HPG-D002, HPG-D003, HPG-I006 and HPG-R001 (what CloudFormation and the
region accept) in ``spec.cluster_options``.
"""

from __future__ import annotations

import datetime as dt

from ..cluster_options import (capacity_region_offers_hyperpod, instance_types_are_offered_in_the_region,
                               options_exist_in_the_regions_cloudformation, reservations_are_in_the_capacity_region)
from ..errors import SpecIssue
from ..models import GovernanceSpec
from ..rulebook import RuleBook
from .access import (cluster_viewers_are_not_admins, consumer_accounts_are_used,
                     existing_cluster_is_in_the_capacity_account, existing_target_roles_stay_with_one_team,
                     identities_target_declared_accounts, principals_are_trusted,
                     target_roles_are_in_declared_accounts, target_roles_stay_with_their_team,
                     team_principals_are_not_admins)
from .contracts import (contracts_are_complete_enough, contracts_are_current, teams_have_contracts,
                        unified_studio_is_reachable)
from .dependencies import (dependencies_chart_is_set, existing_cluster_keys, one_fsx_csi_driver,
                           operators_are_installable, shared_storage_matches_the_cluster,
                           training_operator_supports_the_kubernetes_version)
from .isolation import dedicated_cluster_is_not_shared, dedicated_nodes_hold_the_teams_work, network_paths_exist
from .instance_types import (declared_types_are_new, declared_types_are_uncatalogued, instance_types_are_known,
                             mig_groups_are_consistent, mig_types_are_listed_by_hyperpod)
from .naming import unique_names
from .egress import egress_keeps_off_the_nodes
from .elastic import (autoscaled_groups_have_no_min_count, autoscaled_groups_run_no_deep_health_checks,
                      autoscaled_labels_fit_the_node_pool, autoscaling_has_the_health_agent,
                      autoscaling_has_a_group, autoscaling_has_its_prerequisites, autoscaling_is_on_a_new_eks_cluster,
                      flexible_groups_share_an_accelerator, slurm_refuses_eks_only_patching,
                      training_plan_groups_are_reserved)
from .elastic_quotas import (flexible_quotas_fit_together, flexible_types_are_not_counted_in_instances,
                             inference_is_not_on_spot_only, reserved_quotas_are_guaranteed,
                             shared_pool_has_no_flexible_group)
from .images import teams_name_their_image_registries
from .network import (admin_cidrs_stay_off_the_internet, api_access_stays_off_the_internet,
                      availability_zones_are_in_the_region, egress_stays_off_the_internet,
                      endpoint_access_matches_cidrs, existing_cluster_states_network_policy_enforcement)
from .quotas import (borrowing_needs_idle_sharing, dedicated_capacity_is_not_lent, dedicated_groups_name_a_team,
                     kueue_flavor_limit, quota_entries_fit_their_type, quotas_fit_capacity, sharing_is_consistent,
                     task_governance_addon_not_next_to_kueue, team_priority_classes_are_defined)
from .scheduling import (gang_scheduling_is_applied_in_the_console, topology_needs_a_recent_addon,
                         topology_types_are_supported)
from .slurm_studio import slurm_studio_task_view_is_restricted, slurm_studio_user_is_a_team_user
from .slurm_prometheus import slurm_prometheus_needs_the_extension
from .slurm_keys import (slurm_accounting_database_needs_continuous, slurm_keys_match_the_orchestrator,
                         slurm_node_types_are_complete, slurm_refuses_eks_only_keys)
from .slurm_partitions import (slurm_accelerator_quotas_need_gpu_tracking, slurm_borrow_percent_is_a_static_cap,
                               slurm_dont_lend_needs_a_dedicated_partition, slurm_fair_share_zero_is_clamped,
                               slurm_names_are_distinct, slurm_partition_access_needs_merge,
                               slurm_partitions_hold_one_governed_type, slurm_quotas_fit_compute_capacity,
                               slurm_users_have_an_account)
from .unified_studio import (project_roles_are_not_admins, projects_live_in_units_that_allow_their_profile,
                             studio_principals_are_groups, studio_types_exist_in_the_region)
from .kubernetes_support import kubernetes_version_is_supported
from .workload_operators import approved_workloads_have_their_operators


RULES = RuleBook("spec rules", tuple(sorted((
    autoscaled_labels_fit_the_node_pool,
    autoscaling_has_the_health_agent,
    shared_pool_has_no_flexible_group,
    unique_names,
    declared_types_are_new,
    declared_types_are_uncatalogued,
    instance_types_are_known,
    mig_groups_are_consistent,
    mig_types_are_listed_by_hyperpod,
    quota_entries_fit_their_type,
    quotas_fit_capacity,
    sharing_is_consistent,
    borrowing_needs_idle_sharing,
    kueue_flavor_limit,
    identities_target_declared_accounts,
    target_roles_are_in_declared_accounts,
    target_roles_stay_with_their_team,
    existing_target_roles_stay_with_one_team,
    egress_keeps_off_the_nodes,
    teams_name_their_image_registries,
    team_principals_are_not_admins,
    principals_are_trusted,
    consumer_accounts_are_used,
    endpoint_access_matches_cidrs,
    admin_cidrs_stay_off_the_internet,
    api_access_stays_off_the_internet,
    egress_stays_off_the_internet,
    availability_zones_are_in_the_region,
    teams_have_contracts,
    contracts_are_current,
    contracts_are_complete_enough,
    unified_studio_is_reachable,
    network_paths_exist,
    dedicated_nodes_hold_the_teams_work,
    dedicated_cluster_is_not_shared,
    dependencies_chart_is_set,
    options_exist_in_the_regions_cloudformation,
    reservations_are_in_the_capacity_region,
    capacity_region_offers_hyperpod,
    instance_types_are_offered_in_the_region,
    existing_cluster_keys,
    existing_cluster_is_in_the_capacity_account,
    existing_cluster_states_network_policy_enforcement,
    task_governance_addon_not_next_to_kueue,
    operators_are_installable,
    training_operator_supports_the_kubernetes_version,
    cluster_viewers_are_not_admins,
    team_priority_classes_are_defined,
    dedicated_groups_name_a_team,
    dedicated_capacity_is_not_lent,
    shared_storage_matches_the_cluster,
    one_fsx_csi_driver,
    approved_workloads_have_their_operators,
    kubernetes_version_is_supported,
    topology_needs_a_recent_addon,
    gang_scheduling_is_applied_in_the_console,
    topology_types_are_supported,
    # Slurm-orchestrated clusters
    slurm_keys_match_the_orchestrator,
    slurm_node_types_are_complete,
    slurm_refuses_eks_only_keys,
    slurm_prometheus_needs_the_extension,
    slurm_partitions_hold_one_governed_type,
    slurm_quotas_fit_compute_capacity,
    slurm_dont_lend_needs_a_dedicated_partition,
    slurm_partition_access_needs_merge,
    slurm_accelerator_quotas_need_gpu_tracking,
    slurm_borrow_percent_is_a_static_cap,
    slurm_fair_share_zero_is_clamped,
    slurm_names_are_distinct,
    slurm_users_have_an_account,
    slurm_accounting_database_needs_continuous,
    slurm_studio_user_is_a_team_user,
    slurm_studio_task_view_is_restricted,
    # Elastic capacity
    autoscaling_has_its_prerequisites,
    autoscaling_is_on_a_new_eks_cluster,
    autoscaled_groups_have_no_min_count,
    training_plan_groups_are_reserved,
    autoscaled_groups_run_no_deep_health_checks,
    flexible_groups_share_an_accelerator,
    flexible_types_are_not_counted_in_instances,
    flexible_quotas_fit_together,
    reserved_quotas_are_guaranteed,
    inference_is_not_on_spot_only,
    slurm_refuses_eks_only_patching,
    autoscaling_has_a_group,
    # Unified Studio delegation
    projects_live_in_units_that_allow_their_profile,
    studio_principals_are_groups,
    project_roles_are_not_admins,
    studio_types_exist_in_the_region,
), key=lambda r: r.id)))
"""Every spec rule, in id order (docs/rules.md lists them)."""


def check_spec(spec: GovernanceSpec, *, today: dt.date) -> list[SpecIssue]:
    """Every finding of every rule, errors and warnings, each with its rule's id, in a stable order."""
    # The rule book ``spec.rules.RULES`` names when called, as when check_spec lived beside it in rules.py (a test
    # swaps in a book with a broken rule there).
    from . import RULES as book

    return book.run(spec, today)
