"""``posix.sh``: the teams' groups and users with the same ids on every node, and their data directories."""

from __future__ import annotations

from ..plan.slurm import DEFAULT_DATA_ROOT, SlurmPlan
from ._common import _csv, _header, _sh_args
from .model import SlurmState

_POSIX_LIB = r'''
set -euo pipefail

ROOT="${HPG_POSIX_ROOT:-}"   # a prefix for the data directories (tests); HyperPod: none
MANAGE_USERS="${HPG_POSIX_USERS:-1}"   # 0 where users and groups come from a directory service (checked only)
DATA_DIRS="${HPG_DATA_DIRS:-1}"
PROBLEMS=0
log() { printf 'hyperpod-gov: %s\n' "$*"; }
problem() { log "$*" >&2; PROBLEMS=$((PROBLEMS + 1)); }

# ensure_group NAME GID
ensure_group() {
  local name=$1 gid=$2 have
  have=$(getent group "$name" | cut -d: -f3 || true)
  if [ -z "$have" ]; then
    if [ "$MANAGE_USERS" = 1 ]; then log "group $name ($gid)"; groupadd -g "$gid" "$name"
    else problem "group $name does not exist (the directory service should have it, gid $gid)"; fi
  elif [ "$have" != "$gid" ]; then
    problem "group $name has gid $have, the spec derives $gid: left as it is (files on shared storage carry gids)"
  fi
}

# ensure_user NAME UID GROUP [SUPPLEMENTARY,GROUPS]
ensure_user() {
  local name=$1 uid=$2 group=$3 more=${4:-} have g
  have=$(getent passwd "$name" | cut -d: -f3 || true)
  if [ -z "$have" ]; then
    if [ "$MANAGE_USERS" = 1 ]; then
      log "user $name ($uid)"
      if [ -n "$more" ]; then useradd -m -s /bin/bash -u "$uid" -g "$group" -G "$more" "$name"
      else useradd -m -s /bin/bash -u "$uid" -g "$group" "$name"; fi
    else problem "user $name does not exist (the directory service should have it, uid $uid)"; fi
    return
  fi
  [ "$have" = "$uid" ] || problem "user $name has uid $have, the spec derives $uid: left as it is"
  for g in $group ${more//,/ }; do
    if ! id -nG "$name" | tr ' ' '\n' | grep -xF "$g" > /dev/null; then
      if [ "$MANAGE_USERS" = 1 ]; then log "user $name joins $g"; usermod -aG "$g" "$name"
      else problem "user $name is not in group $g"; fi
    fi
  done
}

# ensure_dir PATH GROUP MODE: only a plain directory below the shared file system's mount point ($MOUNT), and only
# where it is mounted. The spec refuses any other path already; this refuses it again (defence in depth), because
# chgrp and chmod run as root: /etc/sudoers.d or /root/.ssh would become the team's.
ensure_dir() {
  local path="$ROOT$1" group=$2 mode=$3 mount="$ROOT$MOUNT" real
  local plain="^${MOUNT}(/[A-Za-z0-9_+@-][A-Za-z0-9._+@-]*)+\$"
  if ! [[ "$1" =~ $plain ]]; then
    problem "refused $1: not a plain directory below the shared file system's mount point $MOUNT"; return
  fi
  if [ ! -d "$mount" ]; then log "skipped $path: $mount is not mounted here"; return; fi
  # No symbolic link on the way: the directory made and regrouped is the one named, below the mount.
  real=$(realpath -m -- "$path")
  if [ "$real" != "$(realpath -m -- "$mount")${1#"$MOUNT"}" ]; then
    problem "refused $path: it resolves to $real (a symbolic link on the way)"; return
  fi
  [ -d "$path" ] || { log "directory $path"; mkdir -p "$path"; }
  if [ "$(stat -c '%G %a' "$path")" != "$group $mode" ]; then
    log "directory $path: group $group, mode $mode"; chgrp "$group" "$path"; chmod "$mode" "$path"
  fi
}
'''


def posix_sh(sp: SlurmPlan, state: SlurmState) -> str:
    """The POSIX script, for every node: groups and users with the spec's ids, and the teams' data directories."""
    lines = ["#!/bin/bash",
             _header(sp, "POSIX identities of the governance: the teams' groups, users and data directories.")
             .rstrip("\n"),
             "# Run as root on every node (the same ids everywhere). Environment: HPG_POSIX_USERS=0 checks users and "
             "groups from a directory service instead of creating them; HPG_DATA_DIRS=0 skips the data directories; "
             "HPG_POSIX_ROOT prefixes their paths.",
             "# Nothing is ever deleted.",
             _POSIX_LIB.rstrip("\n"), "",
             f"MOUNT={_sh_args(DEFAULT_DATA_ROOT)}   # the shared file system's mount point (fsx_mount_dir)", ""]
    lines += [f"ensure_group {_sh_args(g.name, str(g.gid))}" for g in state.groups]
    lines += [f"ensure_user {_sh_args(u.name, str(u.uid), u.group, _csv(u.groups))}" for u in state.posix_users]
    lines += ["if [ \"$DATA_DIRS\" = 1 ]; then"]
    lines += [f"  ensure_dir {_sh_args(d.path, d.group, d.mode)}" for d in state.data_dirs]
    lines += ([] if state.data_dirs else ["  :"]) + ["fi",
              "if [ \"$PROBLEMS\" -gt 0 ]; then log \"$PROBLEMS problems\"; exit 1; fi",
              "log \"POSIX identities: as the spec says\""]
    return "\n".join(lines) + "\n"
