"""Names derived from the spec. They are public API: changing one renames a live object.

Every generated name and construct key is built here, never by joining strings
at the call site (``f"{team}-{sa}"`` collides for ``ml``/``eng-reader`` and
``ml-eng``/``reader``); ``plan.invariants`` checks that they are unique.
"""

from __future__ import annotations

import hashlib

IAM_ROLE_NAME_MAX = 64
STACK_NAME_MAX = 128

NAMESPACE_PREFIX = "hyperpod-ns-"


def namespace(team: str) -> str:
    return f"{NAMESPACE_PREFIX}{team}"


def cluster_queue(team: str) -> str:
    return f"{namespace(team)}-clusterqueue"


def local_queue(team: str) -> str:
    return f"{namespace(team)}-localqueue"


FLEET_QUEUE_SUFFIX = "-fleet"


def fleet_local_queue(team: str) -> str:
    """The team's LocalQueue of a fleet's dispatch (MultiKueue: on the manager and every worker), beside its own:
    the team-queue admission policy admits either (charts/queue_policy.py)."""
    return f"{namespace(team)}{FLEET_QUEUE_SUFFIX}"


def viewers_group(team: str) -> str:
    return f"{namespace(team)}-viewers"


def submitters_group(team: str) -> str:
    return f"{namespace(team)}-submitters"


def queue_reader(team: str) -> str:
    return f"{namespace(team)}-queue-reader"


# Cluster-wide reads (charts/cluster_rbac.py). Team groups all start with NAMESPACE_PREFIX, so these cannot collide.
CLUSTER_VIEWERS_GROUP = "hyperpod-gov-cluster-viewers"  # cluster.viewers' access entries map onto it
CLUSTER_VIEWER_ROLE = "hyperpod-gov-cluster-viewer"  # ClusterRole (and binding) of CLUSTER_VIEWERS_GROUP
MEMBER_CLUSTER_ROLE = "hyperpod-gov-team-member"  # ClusterRole (and binding) of every team's groups


def member_reads_binding(team: str) -> str:
    """The team's ClusterRoleBinding onto MEMBER_CLUSTER_ROLE (ends in "-member-reads": no other team name's
    generated names end so)."""
    return f"{namespace(team)}-member-reads"


def priority_class(name: str) -> str:
    return f"{name}-priority"


def cohort(spec_name: str) -> str:
    return f"{spec_name}-cohort"


def topology(spec_name: str) -> str:
    """The Kueue Topology of scheduler.topology (kueue mode): one per cluster."""
    return f"{spec_name}-topology"


def flavor(instance_type: str) -> str:
    """ResourceFlavor named after the instance type (DESIGN.md)."""
    return instance_type


def eks_cluster(hyperpod_cluster: str) -> str:
    return f"{hyperpod_cluster}-eks"


def cluster_policy(spec_name: str) -> str:
    return f"{spec_name}-policy"


def compute_quota(team: str) -> str:
    return f"{team}-quota"


def lifecycle_bucket(spec_name: str, account: str, region: str) -> str:
    """The managed instance role policy only reads buckets whose names start with ``sagemaker-``."""
    return f"sagemaker-{spec_name}-{account}-{region}"


S3_BUCKET_NAME_MAX = 63
_S3_RESERVED_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")


def team_bucket(spec_name: str, team: str, account: str, region: str) -> str:
    """The team's bucket (``teams[].storage.bucket: create``). Bucket names are global: the account and region are
    in it, like the lifecycle bucket's; a hash of spec and team keeps ``ml``/``a-b`` and ``ml-a``/``b`` apart; the
    readable part is cut so that the name stays within S3's 63 characters."""
    tail = f"-{hashlib.sha256(f'{spec_name}/{team}'.encode()).hexdigest()[:8]}-{account}-{region}"
    head = f"{spec_name}-{team}"
    if head.startswith(_S3_RESERVED_PREFIXES):
        head = f"hpg-{head}"
    return head[: S3_BUCKET_NAME_MAX - len(tail)].rstrip("-") + tail


def kubectl_provider(spec_name: str) -> str:
    """The function behind the kubectl handler of an existing cluster, named so that every stack reaches it by a
    plain ARN (no stack exports it): at most 20 + 17 characters, within Lambda's 64."""
    return f"{spec_name}-kubectl-provider"


def alarm_key_alias(spec_name: str) -> str:
    """Governance-only mode: the alias of the alarm topics' key, by which the team stacks name it."""
    return f"alias/{spec_name}-alarm-topics"


def platform_topic(spec_name: str) -> str:
    """Governance-only mode: the platform's alarm topic, named so that the team stacks reach it by ARN."""
    return f"{spec_name}-platform-alarms"


def alarm_topic(spec_name: str, key: str, stack: str) -> str:
    """monitoring.prometheus with a workspace of its own: the name of an owner's alarm topic (``key``: the owner's
    email) in the teams stack ``stack`` (an owner of teams in two shards has a topic in each), so that the
    workspace's alert manager reaches it by ARN before that stack exists. The platform's topic keeps
    ``platform_topic``; an email is not a topic name, so an owner's is a hash of the stack and the email."""
    if key == "platform":
        return platform_topic(spec_name)
    return f"{spec_name}-alarms-{hashlib.sha256(f'{stack}/{key}'.encode()).hexdigest()[:12]}"


def prometheus_workspace(spec_name: str) -> str:
    """The alias of the spec's Amazon Managed Service for Prometheus workspace, and its Grafana workspace's name."""
    return f"{spec_name}-governance"


def stack(spec_name: str, role: str) -> str:
    return f"{spec_name}-{role}"


def team_shard(index: int) -> str:
    return f"teams-{index:02d}"


def dashboards_shard(page: int) -> str:
    return f"dashboards-{page:02d}"


def access_shard(index: int) -> str:
    return "access" if index == 0 else f"access-{index:02d}"


def code_pipeline(spec_name: str) -> str:
    """Physical name of the delivery pipeline (the CodePipeline in the pipeline stack, ``stack(name, "pipeline")``).

    It reads ``<spec>-governance``, the governance stack's name too (another namespace, so no clash); renaming it
    would replace the pipeline and lose its history.
    """
    return f"{spec_name}-governance"


def principal_key(arn: str) -> str:
    """Construct id of a principal: its readable name plus a short hash of the whole ARN.

    ``role/Platform-Admin`` and ``role/Platform_Admin`` share the readable part, never the hash.
    """
    name = "".join(ch for ch in arn.rsplit("/", 1)[-1] if ch.isalnum())[:40]
    return f"{name}{hashlib.sha256(arn.encode()).hexdigest()[:8]}"


QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
TEAM_LABEL = "hyperpod-gov.io/team"


def source_role_name(spec_name: str, team: str, service_account: str) -> str:
    """Physical name of a workload's Pod Identity source role.

    Fixed (not generated by CloudFormation) because a target role in another
    account names it in its trust policy, and cross-account stacks cannot share tokens.
    """
    base = f"{spec_name}-{team}-{service_account}"
    if len(base) <= IAM_ROLE_NAME_MAX:
        return base
    digest = hashlib.sha256(base.encode()).hexdigest()[:8]
    return f"{base[: IAM_ROLE_NAME_MAX - 9].rstrip('-')}-{digest}"


# Session tags EKS Pod Identity sets on every role session it creates.
SESSION_TAG_CLUSTER = "eks-cluster-name"
SESSION_TAG_NAMESPACE = "kubernetes-namespace"
SESSION_TAG_SERVICE_ACCOUNT = "kubernetes-service-account"


def network_key(value: str) -> str:
    """Construct id of a network admitted to the API (a CIDR, sg-... or pl-...): its letters and digits plus a
    short hash of the whole value (``10.8.0.0/16`` and ``10.80.0.0/16`` share the readable part, never the hash)."""
    readable = "".join(ch for ch in value if ch.isalnum())[:40]
    return f"{readable}{hashlib.sha256(value.encode()).hexdigest()[:8]}"
# --- shared storage and dedicated node groups --------------------------------------------------------------------

# A team's PersistentVolumes are named <namespace>.<name>: team names hold no '.', so the prefix names one team
# exactly (a '-' would let team "a" claim "hyperpod-ns-a-b-..." of team "a-b"); admission checks claims by it.
TEAM_VOLUME_SEPARATOR = "."
SHARED_FSX_CLAIM = "shared-fsx"


def team_volume(team: str, claim: str = SHARED_FSX_CLAIM) -> str:
    """The PersistentVolume (cluster-scoped) of a team's claim ``claim``."""
    return f"{namespace(team)}{TEAM_VOLUME_SEPARATOR}{claim}"


def dedicated_flavor(instance_type: str, team: str) -> str:
    """The ResourceFlavor of a team's dedicated groups of one type (kueue mode): ``<team>.<type>``. No instance
    type starts with a team name and a '.', and a team name holds no '.': it names no other flavor."""
    return f"{team}.{instance_type}"


def fsx_security_group_description(spec_name: str) -> str:
    return f"FSx for Lustre of {spec_name}: Lustre from the HyperPod nodes only"
