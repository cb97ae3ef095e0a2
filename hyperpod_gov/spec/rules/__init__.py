"""Cross-field rules over a structurally valid spec, one small pure function each, with an id.

Each rule is a function of ``(spec, today)`` that yields ``SpecIssue`` s, made a ``Rule`` by
``@rule(id, level, explanation)`` (the id scheme is in ``spec.rulebook``) and listed in ``RULES``;
``check_spec`` runs them all so that every problem is reported at once, each stamped with its rule's id
and level. Field-level rules (formats, ranges) live on the models themselves.
"""

from ..cluster_options import (capacity_region_offers_hyperpod, instance_types_are_offered_in_the_region,
                               options_exist_in_the_regions_cloudformation, reservations_are_in_the_capacity_region)
from .access import (cluster_viewers_are_not_admins, consumer_accounts_are_used,
                     existing_cluster_is_in_the_capacity_account, existing_target_roles_stay_with_one_team,
                     identities_target_declared_accounts, principals_are_trusted,
                     target_roles_are_in_declared_accounts, target_roles_stay_with_their_team,
                     team_principals_are_not_admins)
from .contracts import (contracts_are_complete_enough, contracts_are_current, teams_have_contracts,
                        unified_studio_is_reachable)
from .dependencies import (CDK_WARN_NO_DEPENDENCIES_CHART, CREATED_CLUSTER_ONLY, OPERATOR_VERSION_KEYS, UNOWNED_ADDONS,
                           dependencies_chart_is_set, existing_cluster_keys, one_fsx_csi_driver,
                           operators_are_installable, shared_storage_matches_the_cluster,
                           training_operator_supports_the_kubernetes_version)
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
from .quotas import (MAX_KUEUE_FLAVORS, borrowing_needs_idle_sharing, dedicated_capacity_is_not_lent,
                     dedicated_groups_name_a_team, kueue_flavor_limit, quota_entries_fit_their_type,
                     quotas_fit_capacity, sharing_is_consistent, task_governance_addon_not_next_to_kueue,
                     team_priority_classes_are_defined)
from .registry import RULES, check_spec
from .scheduling import (gang_scheduling_is_applied_in_the_console, topology_needs_a_recent_addon,
                         topology_types_are_supported)
from .slurm_studio import slurm_studio_task_view_is_restricted, slurm_studio_user_is_a_team_user
from .slurm_keys import (EKS_ONLY_CLUSTER, EKS_ONLY_GROUP, EKS_ONLY_SCHEDULER, EKS_ONLY_TEAM,
                         slurm_accounting_database_needs_continuous, slurm_keys_match_the_orchestrator,
                         slurm_node_types_are_complete, slurm_refuses_eks_only_keys)
from .slurm_partitions import (SLURM_RESERVED_QOS, slurm_accelerator_quotas_need_gpu_tracking,
                               slurm_borrow_percent_is_a_static_cap, slurm_dont_lend_needs_a_dedicated_partition,
                               slurm_fair_share_zero_is_clamped, slurm_names_are_distinct,
                               slurm_partition_access_needs_merge, slurm_partitions_hold_one_governed_type,
                               slurm_quotas_fit_compute_capacity, slurm_users_have_an_account)
from .unified_studio import (project_roles_are_not_admins, projects_live_in_units_that_allow_their_profile,
                             studio_principals_are_groups, studio_types_exist_in_the_region)
from .kubernetes_support import kubernetes_version_is_supported
from .workload_operators import approved_workloads_have_their_operators, installed_operators

__all__ = [
    "CDK_WARN_NO_DEPENDENCIES_CHART", "CREATED_CLUSTER_ONLY", "EKS_ONLY_CLUSTER", "EKS_ONLY_GROUP",
    "EKS_ONLY_SCHEDULER", "EKS_ONLY_TEAM", "MAX_KUEUE_FLAVORS", "OPERATOR_VERSION_KEYS", "RULES", "SLURM_RESERVED_QOS",
    "UNOWNED_ADDONS", "admin_cidrs_stay_off_the_internet", "api_access_stays_off_the_internet",
    "approved_workloads_have_their_operators", "autoscaled_groups_have_no_min_count",
    "autoscaled_groups_run_no_deep_health_checks", "autoscaled_labels_fit_the_node_pool", "autoscaling_has_a_group",
    "autoscaling_has_the_health_agent", "shared_pool_has_no_flexible_group", "autoscaling_has_its_prerequisites",
    "autoscaling_is_on_a_new_eks_cluster", "flexible_groups_share_an_accelerator", "flexible_quotas_fit_together",
    "flexible_types_are_not_counted_in_instances", "inference_is_not_on_spot_only", "reserved_quotas_are_guaranteed",
    "slurm_refuses_eks_only_patching", "training_plan_groups_are_reserved",
    "kubernetes_version_is_supported",
    "availability_zones_are_in_the_region", "borrowing_needs_idle_sharing", "capacity_region_offers_hyperpod",
    "check_spec", "cluster_viewers_are_not_admins", "consumer_accounts_are_used", "contracts_are_complete_enough",
    "contracts_are_current", "declared_types_are_new", "declared_types_are_uncatalogued",
    "dedicated_capacity_is_not_lent", "dedicated_groups_name_a_team", "dependencies_chart_is_set",
    "egress_keeps_off_the_nodes", "egress_stays_off_the_internet", "existing_target_roles_stay_with_one_team",
    "endpoint_access_matches_cidrs", "existing_cluster_is_in_the_capacity_account", "existing_cluster_keys",
    "existing_cluster_states_network_policy_enforcement",
    "identities_target_declared_accounts", "installed_operators", "instance_types_are_known",
    "instance_types_are_offered_in_the_region",
    "kueue_flavor_limit", "mig_groups_are_consistent", "mig_types_are_listed_by_hyperpod", "one_fsx_csi_driver",
    "operators_are_installable", "options_exist_in_the_regions_cloudformation", "principals_are_trusted",
    "quota_entries_fit_their_type", "quotas_fit_capacity", "reservations_are_in_the_capacity_region",
    "shared_storage_matches_the_cluster", "sharing_is_consistent", "slurm_accelerator_quotas_need_gpu_tracking",
    "slurm_accounting_database_needs_continuous", "slurm_borrow_percent_is_a_static_cap",
    "slurm_dont_lend_needs_a_dedicated_partition", "slurm_fair_share_zero_is_clamped",
    "slurm_keys_match_the_orchestrator", "slurm_names_are_distinct", "slurm_node_types_are_complete",
    "slurm_partition_access_needs_merge", "slurm_partitions_hold_one_governed_type",
    "slurm_quotas_fit_compute_capacity", "slurm_refuses_eks_only_keys", "slurm_studio_task_view_is_restricted",
    "slurm_studio_user_is_a_team_user", "slurm_users_have_an_account",
    "target_roles_are_in_declared_accounts", "target_roles_stay_with_their_team",
    "task_governance_addon_not_next_to_kueue", "team_principals_are_not_admins", "team_priority_classes_are_defined",
    "teams_name_their_image_registries",
    "teams_have_contracts", "training_operator_supports_the_kubernetes_version", "unified_studio_is_reachable",
    "unique_names", "gang_scheduling_is_applied_in_the_console", "topology_needs_a_recent_addon",
    "topology_types_are_supported", "project_roles_are_not_admins", "projects_live_in_units_that_allow_their_profile",
    "studio_principals_are_groups", "studio_types_exist_in_the_region",
]
