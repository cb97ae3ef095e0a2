"""Admission policies that hold in every team namespace, in both modes, without owning the namespace.

In ``task-governance`` mode HyperPod creates and reconciles each team namespace,
so a label on it is not ours to keep. A ``ValidatingAdmissionPolicy`` (cluster
scoped, admissionregistration.k8s.io/v1, GA since Kubernetes 1.30) with one
binding per team, selecting the team's namespace by name, is one mechanism for
both modes:

- **Pod Security** (``pod_security_policy``): the Pod Security Standards at the
  team's level (``baseline`` or ``restricted``), checked on every Pod (and on
  ``kubectl debug``'s ephemeral containers, the ``pods/ephemeralcontainers``
  subresource) and on the pod templates of every workload kind of
  ``plan/workloads.py``, so a job is refused at submission rather than its pods
  failing later. The exceptions distributed training needs are explicit
  (``TRAINING_EXCEPTIONS``).
- **Queue** (``queue_policy``): every workload, and every Pod no managed controller
  made, names the team's own LocalQueue in ``kueue.x-k8s.io/queue-name``, so
  nothing in a team namespace runs outside the team's quota (kueue mode also has
  Kueue's ``manageJobsWithoutQueueName``; task-governance mode has only this);
  and no pod names its own node (``spec.nodeName`` skips the scheduler, and with
  it the nodes of the flavor the queue admitted the job to).
- **Team limits** (``team_limits_policy``): the per-team values (priority classes,
  image registries, inference model sources) come from a ConfigMap per team in the platform's namespace
  (``PARAMS_NAMESPACE``), the binding's ``paramRef``, so one policy serves every
  team and no team can change its own values (no team role reaches that
  namespace; a ConfigMap in the team's namespace would be the team's to edit
  where ``writeConfigMaps`` is on). With the per-team values it checks the
  fields that are the same for everyone: a container without a GPU request sets
  ``NVIDIA_VISIBLE_DEVICES=void``, and accelerator requests equal their limits.

The policies are cluster-wide objects (``cluster.yaml``) and match every kind of the table, the union over all
teams: a kind a team may not create is refused by RBAC alone (the team's roles grant no verb on it), so a policy
never needs to know which team may create what. Each team's bindings and parameters travel with the team's
manifest, so adding a team adds three bindings and one ConfigMap.
"""

from __future__ import annotations

from constructs import Construct

from typing import Optional

from ..plan import TeamPlan
from ..plan import names
from ..plan.storage import FileSystemPlan
from ._objects import api_object
from ._policy import (  # noqa: F401  (re-exported: other modules and the tests import them from here)
    ADMISSION_API,
    CONTAINER_LISTS,
    EPHEMERAL_CONTAINERS,
    POD_SPECS,
    POLICY_PREFIX,
    kind_resources,
)
from .pod_security import (  # noqa: F401  (re-exported)
    BASELINE_CAPABILITIES,
    EXCEPTIONS_ANNOTATION,
    LEVELS,
    PSA_PREFIX,
    RESTRICTED_CAPABILITIES,
    RESTRICTED_VOLUMES,
    SAFE_SYSCTLS,
    SELINUX_TYPES,
    TRAINING_EXCEPTIONS,
    baseline_checks,
    namespace_labels,
    pod_security_policy,
    pod_security_policy_name,
    restricted_checks,
)
from .queue_policy import LOCAL_QUEUE_SUFFIX, QUEUE_POLICY, queue_policy  # noqa: F401  (re-exported)
from .team_limits import (  # noqa: F401  (re-exported)
    DEVICE_MOUNTS,
    GPU_ENV,
    IMAGE_KEY,
    IMAGES_KEY,
    MODEL_FSX_DIRECTORY,
    MODEL_FSX_ID,
    MODEL_S3_KEY,
    PARAMS_NAMESPACE,
    PRIORITY_KEY,
    TEAM_LIMITS_POLICY,
    team_limits_policy,
    team_params,
)


def admission_policies(scope: Construct) -> None:
    """The cluster-wide policies (both modes); they act only where a team binding selects a namespace. Also the
    platform namespace that holds each team's parameters."""
    for level in LEVELS:
        api_object(
            scope, f"PodSecurity-{level}", api_version=ADMISSION_API, kind="ValidatingAdmissionPolicy",
            name=pod_security_policy_name(level),
            annotations={EXCEPTIONS_ANNOTATION: "capabilities: IPC_LOCK (EFA); volumes: emptyDir medium Memory at "
                         "/dev/shm (NCCL)"},
            body={"spec": pod_security_policy(level)},
        )
    api_object(scope, "TeamQueue", api_version=ADMISSION_API, kind="ValidatingAdmissionPolicy", name=QUEUE_POLICY,
               body={"spec": queue_policy()})
    api_object(scope, "TeamLimits", api_version=ADMISSION_API, kind="ValidatingAdmissionPolicy",
               name=TEAM_LIMITS_POLICY, body={"spec": team_limits_policy()})
    api_object(scope, "ParamsNamespace", api_version="v1", kind="Namespace", name=PARAMS_NAMESPACE)


def binding_name(policy: str, team: TeamPlan) -> str:
    return f"{policy}-{team.name}"


def team_bindings(scope: Construct, *, team: TeamPlan, priority_classes: tuple[str, ...],
                  file_system: Optional[FileSystemPlan] = None) -> None:
    """Bind the team's Pod Security level, the queue policy and the team-limits policy (with the team's parameter
    ConfigMap, ``priority_classes`` its allowed WorkloadPriorityClass names, ``file_system`` the shared file system
    of its model sources) to the team namespace, by its name label."""
    selector = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": team.namespace}}}
    for id_, policy in (("PodSecurityBinding", pod_security_policy_name(team.pod_security)),
                        ("QueueBinding", QUEUE_POLICY)):
        api_object(
            scope, id_, api_version=ADMISSION_API, kind="ValidatingAdmissionPolicyBinding",
            name=binding_name(policy, team),
            body={"spec": {"policyName": policy, "validationActions": ["Deny"], "matchResources": selector}},
        )
    api_object(scope, "LimitsParams", api_version="v1", kind="ConfigMap", name=team.name, namespace=PARAMS_NAMESPACE,
               labels={names.TEAM_LABEL: team.name},
               body={"data": team_params(team, priority_classes, file_system)})
    api_object(
        scope, "LimitsBinding", api_version=ADMISSION_API, kind="ValidatingAdmissionPolicyBinding",
        name=binding_name(TEAM_LIMITS_POLICY, team),
        body={"spec": {"policyName": TEAM_LIMITS_POLICY, "validationActions": ["Deny"], "matchResources": selector,
                       # Deny while the ConfigMap is missing: no team runs without its limits.
                       "paramRef": {"name": team.name, "namespace": PARAMS_NAMESPACE,
                                    "parameterNotFoundAction": "Deny"}}},
    )
