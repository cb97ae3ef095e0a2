"""Slurm-orchestrated clusters: the cluster's Slurm settings, each group's node type and partition, and each team's
POSIX identity (docs/slurm.md).

The keys mirror what the SageMaker API accepts for ``Orchestrator.Slurm`` (``ClusterOrchestratorSlurmConfig``:
``SlurmConfigStrategy``, ``AccountingDatabase``) and for an instance group's ``SlurmConfig`` (``NodeType``,
``PartitionNames``). Cross-field checks (one Controller, a partition per Compute group, the EKS-only keys) are
the HPG-S rules of ``spec.rules``.
"""

from __future__ import annotations

import re
from typing import Literal, Optional

from pydantic import Field, field_validator

from ._base import SpecModel, spec_error

# API_ClusterSlurmConfig.PartitionNames: one item matching this pattern (the service's own; at most 64 characters
# is what the API reference gives for the item length).
PARTITION_NAME = re.compile(r"\A[a-zA-Z0-9](-*[a-zA-Z0-9])*\Z", re.ASCII)
MAX_PARTITION = 64
# The partition HyperPod adds every node to itself ("All nodes are automatically added to the universal dev
# partition"): a spec partition of that name would be HyperPod's.
HYPERPOD_PARTITION = "dev"
# POSIX portable user and group names (useradd's default NAME_REGEX without the trailing '$' of machine accounts),
# at most 32 characters (the utmp limit useradd enforces).
POSIX_NAME = re.compile(r"\A[a-z_][a-z0-9_-]{0,31}\Z", re.ASCII)
# Names a spec may not take over: the system's own accounts and groups, and the ones Slurm and HyperPod's images run
# their daemons and users as.
RESERVED_POSIX = frozenset({
    "root", "daemon", "bin", "sys", "adm", "sync", "games", "man", "lp", "mail", "news", "uucp", "proxy", "www-data",
    "backup", "list", "irc", "nobody", "nogroup", "systemd-network", "systemd-resolve", "messagebus", "sshd",
    "syslog", "wheel", "sudo", "admin", "users", "staff", "disk", "shadow", "utmp", "tty", "kmem", "docker",
    "slurm", "munge", "mysql", "ubuntu", "ec2-user", "ssm-user",
})
# Secrets Manager secret ARNs (the AccountingDatabase.SecretArn pattern's shape).
SECRET_ARN = re.compile(r"\Aarn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]{1,512}\Z",
                        re.ASCII)
# A DNS name or IPv4 address of the accounting database (an RDS or Aurora endpoint).
DB_ENDPOINT = re.compile(r"\A(?=.{1,253}\Z)[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*"
                         r"[A-Za-z0-9])?)*\Z", re.ASCII)
# MySQL schema names that slurmdbd's StorageLoc takes unquoted.
DB_NAME = re.compile(r"\A[A-Za-z0-9_]{1,64}\Z", re.ASCII)
# The shared file system's mount point on every node of a Slurm cluster: on_create.sh mounts the FSx for Lustre file
# system there (provisioning_parameters.json fsx_mount_dir), and every team's data directory is below it. posix.sh
# creates the directories as root and gives them to the team's group (chgrp, chmod 2770), so a path anywhere else
# (/etc/sudoers.d, /root/.ssh, /opt/slurm/etc) would hand a system directory to the team.
SHARED_MOUNT = "/fsx"
# One segment of a data path: letters, digits and ._+@-, not starting with '.' ('.', '..' and hidden names such as
# Lustre's own .lustre are refused); printable ASCII without spaces, quotes or shell metacharacters (the path reaches
# posix.sh).
DATA_SEGMENT = re.compile(r"\A[A-Za-z0-9_+@-][A-Za-z0-9._+@-]*\Z", re.ASCII)

NodeType = Literal["Controller", "Login", "Compute"]
ConfigStrategy = Literal["Managed", "Overwrite", "Merge"]


def check_posix_name(value: str, what: str, *, named: bool = False) -> str:
    """A portable POSIX user or group name that is not a system or daemon account (``named``: the message names the
    value, for an entry of a list)."""
    head = f"{value!r} " if named else ""
    if not POSIX_NAME.match(value):
        suggested = re.sub(r"[^a-z0-9_-]+", "-", value.lower()).strip("-")[:32] or "alice"
        if not re.match(r"[a-z_]", suggested):
            suggested = ("u" + suggested)[:32]
        raise spec_error(f"{head}is not a POSIX {what} name",
                         "use at most 32 lowercase letters, digits, '_' and '-', starting with a letter or '_' "
                         f"(e.g. {suggested!r})")
    if value in RESERVED_POSIX:
        raise spec_error(f"{head}is a system or daemon {what} name",
                         "choose a name of your own (e.g. 'team-a-users')")
    return value


def check_data_path(value: str) -> str:
    """A team's data directory: an absolute path of plain segments strictly below ``SHARED_MOUNT``."""
    fix = f"use a directory below the shared file system's mount point, e.g. {SHARED_MOUNT}/team-a"
    if not value.startswith("/"):
        raise spec_error("is not an absolute path", fix)
    segments = value.split("/")[1:]
    if "" in segments:
        raise spec_error("has an empty segment ('//' or a trailing '/')", f"write each directory once, e.g. "
                         f"{SHARED_MOUNT}/team-a")
    if "." in segments or ".." in segments:
        raise spec_error("has a '.' or '..' segment, which can lead out of the shared file system", fix)
    for segment in segments:
        if segment.startswith("."):
            raise spec_error(f"has a hidden segment {segment!r} (Lustre keeps its own .lustre there)",
                             "name the directory without a leading '.', e.g. " + f"{SHARED_MOUNT}/team-a")
        if not DATA_SEGMENT.match(segment):
            raise spec_error(f"segment {segment!r} holds a character other than letters, digits and ._+@-", fix)
    if segments[0] != SHARED_MOUNT.lstrip("/") or len(segments) < 2:
        raise spec_error(f"is not below the shared file system's mount point {SHARED_MOUNT}: the controller gives "
                         "the directory to the team's group as root (chgrp, chmod 2770), so a system directory "
                         "would become the team's", fix)
    return value


class AccountingDatabase(SpecModel):
    """The external MySQL-compatible database slurmdbd keeps the accounting in (ClusterAccountingDatabase)."""

    endpoint: str = Field(description="DNS name (or IPv4 address) of the database, e.g. an RDS or Aurora endpoint.")
    secret_arn: str = Field(
        description="Secrets Manager secret holding the database credentials "
        "(arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME)."
    )
    name: Optional[str] = Field(
        default=None, description="Database (schema) name (default: the service's, slurm_acct_db_<clusterId>)."
    )
    port: Optional[int] = Field(default=None, ge=1, le=65535, description="TCP port (default: the service's, 3306).")

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, v: str) -> str:
        if not DB_ENDPOINT.match(v):
            raise spec_error("is not a DNS name or IPv4 address",
                             "copy the database's endpoint, e.g. acct.cluster-abc.us-west-2.rds.amazonaws.com")
        return v

    @field_validator("secret_arn")
    @classmethod
    def _secret(cls, v: str) -> str:
        if not SECRET_ARN.match(v):
            raise spec_error("is not a Secrets Manager secret ARN",
                             "copy it from `aws secretsmanager describe-secret`, e.g. "
                             "arn:aws:secretsmanager:us-west-2:111111111111:secret:slurm-acct-AbCdEf")
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not DB_NAME.match(v):
            raise spec_error("is not a database name slurmdbd takes",
                             "use at most 64 letters, digits and '_', e.g. slurm_acct_db")
        return v


class ClusterSlurm(SpecModel):
    """The cluster's Slurm settings (Orchestrator.Slurm); only with cluster.orchestrator: slurm."""

    config_strategy: ConfigStrategy = Field(
        default="Managed",
        description="Who owns slurm.conf's partition lines (SlurmConfigStrategy). Managed (default): HyperPod, and "
        "an UpdateCluster fails when the file drifted; Overwrite: the API's configuration replaces manual edits; "
        "Merge: manual edits stay. Partition access rules (AllowAccounts, AllowQos) need Merge.",
    )
    accounting_database: Optional[AccountingDatabase] = Field(
        default=None,
        description="An external accounting database {endpoint, secretArn, name, port} (AccountingDatabase; "
        "the service supports it only with nodeProvisioningMode: Continuous). Default: the controller's own "
        "MariaDB, as HyperPod's lifecycle scripts set it up.",
    )
    gpu_gres: bool = Field(
        default=False,
        description="The compute nodes declare their GPUs as Slurm GRES (GresTypes=gpu and a gres.conf, e.g. "
        "AutoDetect=nvml), so accelerator quotas can be GrpTRES=gres/gpu limits; hyperpod-gov then adds "
        "GresTypes=gpu and AccountingStorageTRES=gres/gpu. Default: false, as in HyperPod's default slurm.conf: "
        "quotas in accelerators are refused (give them as whole instances, count).",
    )
    restrict_task_view: bool = Field(
        default=False,
        description="Restrict the Studio task view (AWS: 'Restrict task view in Studio for Slurm clusters'): "
        "hyperpod-gov adds PrivateData=jobs to slurm.conf, so squeue and scontrol show each Slurm user only its own "
        "jobs, and the Studio role of each team runs as the team's studioUser (the role's SSMSessionRunAs tag, "
        "set by hand: the contract record prints the steps). Default: false, AWS's default: every Studio user "
        "views, manages and interacts with every Slurm task of the cluster, and every user sees every job.",
    )
    accounting_retention_days: Optional[int] = Field(
        default=None,
        ge=1,
        le=36500,
        description="Days slurmdbd keeps the task history (what `sacct` and `sreport` read): apply.sh writes "
        "PurgeEventAfter, PurgeJobAfter, PurgeResvAfter, PurgeStepAfter, PurgeSuspendAfter, PurgeTXNAfter and "
        "PurgeUsageAfter=<days>days into slurmdbd.conf and restarts slurmdbd when they change (1..36500). Default: "
        "not set, Slurm's default: nothing is purged, the history grows for as long as the database lives.",
    )


class GroupSlurm(SpecModel):
    """An instance group's role in Slurm (SlurmConfig); only with cluster.orchestrator: slurm."""

    node_type: NodeType = Field(
        description="Controller (slurmctld and slurmdbd; exactly one group), Login (at most one group) or Compute "
        "(runs jobs). HyperPod cannot change it after creation."
    )
    partition: Optional[str] = Field(
        default=None,
        description="The Slurm partition of a Compute group (required there, refused on Controller and Login), "
        "e.g. p5; letters, digits and '-', starting and ending with a letter or digit. Groups may share one.",
    )

    @field_validator("partition")
    @classmethod
    def _partition(cls, v: Optional[str]) -> Optional[str]:
        if v is None:
            return v
        if not PARTITION_NAME.match(v) or len(v) > MAX_PARTITION:
            suggested = re.sub(r"[^A-Za-z0-9]+", "-", v).strip("-")[:MAX_PARTITION] or "p5"
            raise spec_error("is not a partition name HyperPod accepts",
                             f"use at most {MAX_PARTITION} letters, digits and '-', starting and ending with a letter "
                             f"or digit (e.g. {suggested!r})")
        if v.lower() == HYPERPOD_PARTITION:
            raise spec_error(f"'{HYPERPOD_PARTITION}' is the partition HyperPod puts every node in itself",
                             "name the group's partition after its capacity, e.g. p5 or cpu")
        return v


class TeamSlurm(SpecModel):
    """A team's POSIX identity on a Slurm cluster: its users, its group and its data directory."""

    users: tuple[str, ...] = Field(
        default=(),
        max_length=1000,
        description="POSIX user names of the team's members: each gets a Slurm association with the team's account "
        "(its default account) and membership of the team's group. Default: none.",
    )
    group: Optional[str] = Field(
        default=None, description="POSIX group of the team, owner of its data directory (default: the team's name)."
    )
    data_path: Optional[str] = Field(
        default=None,
        description="The team's directory on the shared file system, group-owned by the team's group with mode "
        f"2770 (default: {SHARED_MOUNT}/<team>). It must be below the file system's mount point {SHARED_MOUNT} "
        "(e.g. /fsx/projects/team-a), without '.' or '..' segments, hidden segments, '//' or a trailing '/'.",
    )
    studio_user: Optional[str] = Field(
        default=None,
        description="The POSIX user (one of users) that the team's Studio role runs as: the value of the "
        "SSMSessionRunAs tag on the team's Unified Studio project role (or SageMaker Studio execution role), so "
        "that Studio submits under the team's accounts and, with cluster.slurm.restrictTaskView, lists only this "
        "user's jobs. Default: none (Studio's sessions run as SSM's default user, which has no association).",
    )

    @field_validator("users")
    @classmethod
    def _users(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for name in v:
            check_posix_name(name, "user", named=True)
        twice = sorted({u for u in v if v.count(u) > 1})
        if twice:
            raise spec_error(f"lists {', '.join(twice)} twice", "list each user once")
        return v

    @field_validator("studio_user")
    @classmethod
    def _studio_user(cls, v: Optional[str]) -> Optional[str]:
        return v if v is None else check_posix_name(v, "user")

    @field_validator("group")
    @classmethod
    def _group(cls, v: Optional[str]) -> Optional[str]:
        return v if v is None else check_posix_name(v, "group")

    @field_validator("data_path")
    @classmethod
    def _path(cls, v: Optional[str]) -> Optional[str]:
        return v if v is None else check_data_path(v)
