"""The Studio task view of a Slurm cluster, team by team: what AWS documents, what hyperpod-gov sets, what is left
to do by hand.

AWS, "Restrict task view in Studio for Slurm clusters" (SageMaker AI developer guide,
sagemaker-hyperpod-studio-setup-slurm): by default every Studio user views, manages and interacts with every Slurm
task. The restriction has three parts, and only the Slurm one has an interface this library deploys through:

- the IAM role Studio uses carries the tag ``SSMSessionRunAs`` = a POSIX user of the cluster; for a Unified Studio
  team that is the project role, which DataZone creates and owns, so the tag is a step the record prints;
- Session Manager's Run As support is turned on (account-wide preferences, once per account and region), also a
  printed step;
- Slurm hides other users' jobs: ``PrivateData=jobs`` in slurm.conf (``cluster.slurm.restrictTaskView``), written
  by apply.sh, so the Studio task list, which runs as the tagged user, holds that user's jobs only.

The team's Slurm scope is its accounts: the ``studioUser`` is one of the team's users (HPG-S014), associated with the
team's sub-accounts and no other, so Studio can submit only there. Pure functions of the plan's parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..spec.contract import Contract
from .slurm import SlurmPlan
from .slurm_accounts import SlurmTeamPlan

RUN_AS_TAG = "SSMSessionRunAs"
SESSION_PREFERENCES = "SSM-SessionManagerRunShell"  # the Session Manager preferences document
AWS_PAGE = ("https://docs.aws.amazon.com/sagemaker/latest/dg/sagemaker-hyperpod-studio-setup-slurm.html"
            "#sagemaker-hyperpod-studio-setup-slurm-restrict-tasks-view")
NO_STUDIO = "not applicable: the team has no Studio project or studioUser"


@dataclass(frozen=True)
class TaskView:
    """One team's Studio task view on a Slurm cluster."""

    team: str
    in_studio: bool  # a Unified Studio project (contract.unifiedStudio) or a studioUser
    restricted: bool  # cluster.slurm.restrictTaskView: PrivateData=jobs
    studio_user: Optional[str]  # teams[].slurm.studioUser
    role_arn: Optional[str]  # the Unified Studio project role, if the contract names one
    accounts: tuple[str, ...]  # the Slurm accounts the studio user may submit under

    @property
    def complete(self) -> bool:
        """The spec states everything the restriction needs (the hand steps are the record's to print)."""
        return self.restricted and self.studio_user is not None

    @property
    def role_name(self) -> Optional[str]:
        """The IAM role name of ``role_arn`` (its last path segment), what ``aws iam tag-role`` takes."""
        return self.role_arn.rsplit("/", 1)[-1] if self.role_arn else None

    def words(self) -> str:
        """The state in one line, for the checklist and explain."""
        if not self.in_studio:
            return NO_STUDIO
        scope = ", ".join(f"`{a}`" for a in self.accounts) or "no account"
        if self.complete:
            return (f"restricted: Studio runs as `{self.studio_user}` ({RUN_AS_TAG} tag), which submits under "
                    f"{scope} and sees only its own jobs (PrivateData=jobs)")
        if not self.restricted:
            return ("not restricted: every Studio user views and manages every Slurm task "
                    "(cluster.slurm.restrictTaskView is not set)")
        return "restricted, but Studio has no user to run as: teams[].slurm.studioUser is not set"


def task_view(sp: SlurmPlan, team: SlurmTeamPlan, contract: Optional[Contract]) -> TaskView:
    """``team``'s Studio task view: the cluster's restriction, the team's studio user and its accounts."""
    us = contract.unified_studio if contract else None
    return TaskView(
        team=team.name,
        in_studio=us is not None or team.studio_user is not None,
        restricted=sp.restrict_task_view,
        studio_user=team.studio_user,
        role_arn=us.project_role_arn if us else None,
        accounts=team.sub_accounts,
    )


def steps(view: TaskView, *, account: str, region: str) -> tuple[str, ...]:
    """The exact steps that restrict ``view``'s team to its own Slurm tasks, in order; each says who does it (by
    hand, or apply.sh). Empty for a team outside Studio."""
    if not view.in_studio:
        return ()
    user = view.studio_user or "STUDIO_USER"
    role = view.role_name or "ROLE_NAME"
    whose = "the team's Unified Studio project role" if view.role_arn else (
        "the IAM role the team's members use in Studio (its execution role)")
    role_account = view.role_arn.split(":")[4] if view.role_arn and view.role_arn.count(":") >= 5 else None
    out = [
        f"By hand (IAM, account {role_account or account}): tag {whose} so that Studio's sessions run as `{user}`: "
        f"`aws iam tag-role --role-name {role} --tags Key={RUN_AS_TAG},Value={user}`"
        + ("" if view.role_arn else " (ROLE_NAME: that role's name)")
        + ("" if view.studio_user else " (STUDIO_USER: set teams[].slurm.studioUser first)") + ".",
        f"By hand (Systems Manager, once per account and region, {account} {region}): turn on Run As support for "
        "Linux and macOS managed nodes in Session Manager's preferences (console: Session Manager, Preferences, "
        f"Edit; it is the document `{SESSION_PREFERENCES}`, `runAsEnabled: true`). The setting is account-wide.",
    ]
    if view.restricted:
        out.append("Done by hyperpod-gov (slurm/apply.sh on the controller): `PrivateData=jobs` in slurm.conf, so "
                   "squeue and scontrol show each user only its own jobs.")
    else:
        out.append("Not done: set `cluster.slurm.restrictTaskView: true` so that apply.sh writes `PrivateData=jobs` "
                   "into slurm.conf; until then every Studio user sees every task.")
    if view.studio_user:
        scope = ", ".join(f"`{a}`" for a in view.accounts) or "none (HPG-S012)"
        out.append(f"Done by hyperpod-gov (posix.sh, accounting.sh): `{user}` exists on every node and is "
                   f"associated with the team's accounts only: {scope}.")
    out.append(f"Check: in Studio, HyperPod clusters, the cluster's Tasks tab lists only `{user}`'s jobs; on the "
               f"login node `sudo -u {user} squeue` shows the same.")
    return tuple(out)


def view_json(view: TaskView) -> dict[str, object]:
    """``explain --format json``'s ``studioTaskView`` of a team of a Slurm cluster."""
    return {"inStudio": view.in_studio, "restricted": view.restricted, "studioUser": view.studio_user,
            "roleArn": view.role_arn, "accounts": list(view.accounts), "complete": view.complete,
            "words": view.words()}


def explain_lines(views: list[TaskView]) -> list[str]:
    """``explain``'s Studio task view of a Slurm cluster: one line per team in Studio (nothing when none is)."""
    studio = [v for v in views if v.in_studio]
    if not studio:
        return []
    return ["", "Studio task view (AWS: Restrict task view in Studio for Slurm clusters; the contract records print "
            "the IAM and Session Manager steps):", *(f"  {v.team}: {v.words()}" for v in studio)]
