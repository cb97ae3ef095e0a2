"""``accounting.sh``: the accounts, QOS and user associations of the desired state, each read back first and then
added, or modified in exactly the attributes that differ; what the spec no longer has is deleted only with
``HPG_SLURM_PRUNE=1``."""

from __future__ import annotations

import shlex

from ..plan.slurm import SlurmPlan
from ._common import DEFAULT_SLURM_PREFIX, PRUNE_NOTE, _csv, _depth, _header, _qos_order, _sh_args, _tres
from .model import SlurmState

_ACCOUNTING_LIB = r'''
set -euo pipefail

SLURM_PREFIX="${HPG_SLURM_PREFIX:-__PREFIX__}"
[ -d "$SLURM_PREFIX/bin" ] && PATH="$SLURM_PREFIX/bin:$PATH"
SLURM_CONF_FILE="${HPG_SLURM_CONF:-${SLURM_CONF:-$SLURM_PREFIX/etc/slurm.conf}}"
[ -r "$SLURM_CONF_FILE" ] && export SLURM_CONF="$SLURM_CONF_FILE"
SACCTMGR="${HPG_SACCTMGR:-sacctmgr}"
PRUNE="${HPG_SLURM_PRUNE:-0}"
DRY_RUN="${HPG_SLURM_DRY_RUN:-0}"
CLUSTER="${1:-${HPG_SLURM_CLUSTER:-}}"
if [ -z "$CLUSTER" ] && [ -r "$SLURM_CONF_FILE" ]; then
  CLUSTER=$(sed -n 's/^[[:space:]]*[Cc][Ll][Uu][Ss][Tt][Ee][Rr][Nn][Aa][Mm][Ee][[:space:]]*=[[:space:]]*\([^[:space:]#]*\).*/\1/p' "$SLURM_CONF_FILE" | tail -n 1)
fi
CLUSTER=$(printf '%s' "${CLUSTER:-__CLUSTER__}" | tr '[:upper:]' '[:lower:]')
CHANGES=0

log() { printf 'hyperpod-gov: %s\n' "$*"; }

# Run one change: print it, run it unless this is a dry run. sacctmgr exits 1 with "Nothing modified" when the
# database already holds the values: that is not a change.
run() {
  local out rc
  printf '+'; for a in "$@"; do printf ' %s' "$(quote "$a")"; done; printf '\n'
  if [ "$DRY_RUN" = 1 ]; then CHANGES=$((CHANGES + 1)); return 0; fi
  rc=0; out=$("$@" 2>&1) || rc=$?
  [ -n "$out" ] && printf '%s\n' "$out"
  if [ "$rc" -ne 0 ]; then
    case $out in *'Nothing modified'*) return 0 ;; esac
    log "failed ($rc): $*" >&2
    return "$rc"
  fi
  CHANGES=$((CHANGES + 1))
}

show() { "$SACCTMGR" -nP show "$@"; }

# One word as the shell reads it back, as Python's shlex.quote writes it (the spelling of `hyperpod-gov diff`).
quote() {
  if [ -z "$1" ]; then printf "''"
  elif [[ $1 =~ ^[A-Za-z0-9_@%+=:,./-]+$ ]]; then printf '%s' "$1"
  else printf "'%s'" "${1//\'/\'\"\'\"\'}"; fi
}

lower() { printf '%s' "$1" | tr '[:upper:]' '[:lower:]'; }

# A comma list, lowercase, sorted, without duplicates or empty items.
norm_list() { printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | tr ',' '\n' | sed '/^$/d' | sort -u | paste -sd, -; }

# A TRES list sorted by name, amounts with a unit suffix (sacctmgr shows mem=64G) in megabytes, -1 entries dropped.
norm_tres() {
  printf '%s' "$1" | tr ',' '\n' | sed '/^$/d' | awk -F= '
    { v = $2; n = v + 0; u = substr(v, length(v), 1)
      if (u == "K") n = n / 1024; else if (u == "G") n = n * 1024; else if (u == "T") n = n * 1048576;
      else if (u == "P") n = n * 1073741824
      if (v != "-1") printf "%s=%d\n", tolower($1), n }' | sort | paste -sd, -
}

# The GrpTRES value that turns the current limits into the wanted ones: wanted amounts, -1 for each TRES dropped.
tres_change() {
  local cur want
  cur=$(norm_tres "$1"); want=$(norm_tres "$2")
  { printf '%s\n' "$want" | tr ',' '\n' | sed '/^$/d'
    printf '%s\n' "$cur" | tr ',' '\n' | sed '/^$/d' | cut -d= -f1 | while read -r k; do
      printf '%s\n' "$want" | tr ',' '\n' | cut -d= -f1 | grep -x "$k" > /dev/null || printf '%s=-1\n' "$k"
    done; } | sort | paste -sd, -
}

# ensure_qos NAME DESCRIPTION PRIORITY GRPTRES PREEMPT PREEMPTMODE FLAGS (empty mode and flags: not managed)
ensure_qos() {
  local name=$1 desc=$2 prio=$3 tres=$4 preempt=$5 mode=$6 flags=$7 cur c_desc c_prio c_tres c_preempt c_mode c_flags
  local -a args sets
  cur=$(show qos where name="$name" format=name,description,priority,grptres,preempt,preemptmode,flags | sed -n 1p)
  if [ -z "$cur" ]; then
    args=(add qos "$name" "Description=$desc" "Priority=$prio")
    [ -n "$tres" ] && args+=("GrpTRES=$tres")
    [ -n "$preempt" ] && args+=("Preempt=$preempt")
    [ -n "$mode" ] && args+=("PreemptMode=$mode")
    [ -n "$flags" ] && args+=("Flags=$flags")
    run "$SACCTMGR" -i "${args[@]}"
    return
  fi
  IFS='|' read -r _ c_desc c_prio c_tres c_preempt c_mode c_flags <<< "$cur"
  sets=()
  [ "$c_desc" = "$desc" ] || sets+=("Description=$desc")
  [ "$c_prio" = "$prio" ] || sets+=("Priority=$prio")
  [ "$(norm_tres "$c_tres")" = "$(norm_tres "$tres")" ] || sets+=("GrpTRES=$(tres_change "$c_tres" "$tres")")
  if [ "$(norm_list "$c_preempt")" != "$(norm_list "$preempt")" ]; then
    sets+=("Preempt=$preempt")
  fi
  if [ -n "$mode" ] && [ "$(lower "$c_mode")" != "$(lower "$mode")" ]; then sets+=("PreemptMode=$mode"); fi
  if [ -n "$flags" ] && [ "$(norm_list "$c_flags")" != "$(norm_list "$flags")" ]; then sets+=("Flags=$flags"); fi
  if [ "${#sets[@]}" -gt 0 ]; then run "$SACCTMGR" -i modify qos where name="$name" set "${sets[@]}"; fi
}

# ensure_account NAME PARENT DESCRIPTION ORGANIZATION FAIRSHARE GRPTRES GRPJOBS QOS DEFAULTQOS (empty GRPJOBS: none)
ensure_account() {
  local name=$1 parent=$2 desc=$3 org=$4 share=$5 tres=$6 jobs=$7 qos=$8 defqos=$9 cur entity
  local c_parent c_share c_tres c_jobs c_qos c_defqos c_desc c_org
  local -a args sets
  cur=$(show assoc where cluster="$CLUSTER" account="$name" \
        format=account,user,parentname,fairshare,grptres,grpjobs,qos,defaultqos | awk -F'|' '$2 == ""' | sed -n 1p)
  if [ -z "$cur" ]; then
    args=(add account "$name" "Cluster=$CLUSTER" "Parent=$parent" "Description=$desc" "Organization=$org"
          "Fairshare=$share")
    [ -n "$tres" ] && args+=("GrpTRES=$tres")
    [ -n "$jobs" ] && args+=("GrpJobs=$jobs")
    [ -n "$qos" ] && args+=("QOS=$qos")
    [ -n "$defqos" ] && args+=("DefaultQOS=$defqos")
    run "$SACCTMGR" -i "${args[@]}"
    return
  fi
  IFS='|' read -r _ _ c_parent c_share c_tres c_jobs c_qos c_defqos <<< "$cur"
  entity=$(show account where name="$name" format=account,description,organization | sed -n 1p)
  IFS='|' read -r _ c_desc c_org <<< "$entity"
  sets=()
  [ "$c_desc" = "$desc" ] || sets+=("Description=$desc")
  [ "$(lower "$c_org")" = "$(lower "$org")" ] || sets+=("Organization=$org")
  if [ "${#sets[@]}" -gt 0 ]; then run "$SACCTMGR" -i modify account where name="$name" set "${sets[@]}"; fi
  if [ "$c_parent" != "$parent" ]; then
    run "$SACCTMGR" -i modify account where name="$name" cluster="$CLUSTER" set "Parent=$parent"
  fi
  sets=()
  [ "$c_share" = "$share" ] || sets+=("Fairshare=$share")
  [ "$(norm_tres "$c_tres")" = "$(norm_tres "$tres")" ] || sets+=("GrpTRES=$(tres_change "$c_tres" "$tres")")
  [ "$c_jobs" = "$jobs" ] || sets+=("GrpJobs=${jobs:--1}")
  if [ "$(norm_list "$c_qos")" != "$(norm_list "$qos")" ]; then
    sets+=("QOS=$qos")
  fi
  if [ -n "$defqos" ] && [ "$(lower "$c_defqos")" != "$(lower "$defqos")" ]; then sets+=("DefaultQOS=$defqos"); fi
  if [ "${#sets[@]}" -gt 0 ]; then
    run "$SACCTMGR" -i modify account where name="$name" cluster="$CLUSTER" set "${sets[@]}"
  fi
}

# ensure_user USER ACCOUNT: the user's association with the account.
ensure_user() {
  local user=$1 account=$2
  if [ -z "$(show assoc where cluster="$CLUSTER" user="$user" account="$account" format=user | sed -n 1p)" ]; then
    run "$SACCTMGR" -i add user "$user" "Cluster=$CLUSTER" "Account=$account"
  fi
}

# ensure_default_account USER ACCOUNT
ensure_default_account() {
  local user=$1 account=$2 cur
  cur=$(show user where name="$user" format=defaultaccount | sed -n 1p)
  if [ "$(lower "$cur")" != "$(lower "$account")" ]; then
    run "$SACCTMGR" -i modify user where name="$user" cluster="$CLUSTER" set "DefaultAccount=$account"
  fi
}

# What the spec no longer has: listed, and deleted only with HPG_SLURM_PRUNE=1.
prune() {
  local what=$1; shift
  if [ "$PRUNE" = 1 ]; then
    log "not in the spec, deleting ($PRUNE_NOTE): $what"
    run "$SACCTMGR" -i "$@"
  else
    log "not in the spec, kept (HPG_SLURM_PRUNE=1 deletes it; $PRUNE_NOTE): $what"
  fi
}

# The accounts under the organisation (itself excluded), deepest first, and their user associations.
managed_tree() {
  show assoc where cluster="$CLUSTER" format=account,user,parentname | awk -F'|' -v org="$ORG" '
    $2 == "" { parent[$1] = $3 } $2 != "" { users[++n] = $2 "|" $1 }
    END {
      for (a in parent) { d = 0; at = a; while (at in parent && at != org && d < 100) { at = parent[at]; d++ }
                          if (at == org && a != org) depth[a] = d }
      for (i = 1; i <= n; i++) { split(users[i], p, "|"); if (p[2] in depth) print "user|" p[1] "|" p[2] }
      for (a in depth) print "account|" depth[a] "|" a
    }' | sort -t'|' -k1,1r -k2,2nr -k3,3
}
'''


def accounting_sh(sp: SlurmPlan, state: SlurmState) -> str:
    """The accounting script: idempotent sacctmgr commands for ``state``'s QOS, accounts and users."""
    depth = _depth(state.accounts)
    lines = ["#!/bin/bash",
             _header(sp, "Slurm accounting of the governance: QOS, accounts and user associations.").rstrip("\n"),
             "# Usage: accounting.sh [CLUSTER]   (default: ClusterName of $HPG_SLURM_CONF or $SLURM_CONF, else "
             f"{sp.cluster_name.lower()})",
             "# Environment: HPG_SLURM_PREFIX (default /opt/slurm), HPG_SLURM_CONF, HPG_SACCTMGR, HPG_SLURM_DRY_RUN=1 "
             "(print, change nothing),",
             f"#   HPG_SLURM_PRUNE=1 (delete what the spec no longer has: {PRUNE_NOTE}).",
             _ACCOUNTING_LIB.replace("__PREFIX__", DEFAULT_SLURM_PREFIX)
             .replace("__CLUSTER__", sp.cluster_name.lower()).rstrip("\n"),
             f"ORG={shlex.quote(sp.organisation)}",
             f"PRUNE_NOTE={shlex.quote(PRUNE_NOTE)}",
             "",
             "if [ -z \"$(show cluster where name=\"$CLUSTER\" format=cluster | sed -n 1p)\" ]; then",
             "  run \"$SACCTMGR\" -i add cluster \"$CLUSTER\"",
             "fi",
             "",
             "# QOS: those that preempt nothing first (a Preempt list names existing QOS only)."]
    for q in _qos_order(state.qos):
        lines.append("ensure_qos " + _sh_args(q.name, q.description, str(q.priority), _tres(q.grp_tres),
                                              _csv(q.preempt), q.preempt_mode or "", _csv(q.flags)))
    lines += ["", "# Accounts: parents first."]
    for a in sorted(state.accounts, key=lambda a: (depth[a.name], a.name)):
        lines.append("ensure_account " + _sh_args(a.name, a.parent, a.description, a.organization, str(a.fairshare),
                                                  _tres(a.grp_tres), "" if a.grp_jobs is None else str(a.grp_jobs),
                                                  _csv(a.qos), a.default_qos or ""))
    lines += ["", "# Users: each association, then each user's default account."]
    lines += [f"ensure_user {_sh_args(u.name, u.account)}" for u in state.users]
    lines += [f"ensure_default_account {_sh_args(n, d)}" for n, d in sorted({(u.name, u.default_account)
                                                                              for u in state.users})]
    wanted_users = "\n".join(f"{u.name}|{u.account}" for u in state.users)
    wanted_accounts = "\n".join(a.name for a in state.accounts)
    wanted_qos = "\n".join(q.name for q in state.qos)
    lines += [
        "",
        "# What the organisation has in Slurm and the spec does not: users first, then accounts, deepest first.",
        f"WANTED_USERS={shlex.quote(wanted_users)}",
        f"WANTED_ACCOUNTS={shlex.quote(wanted_accounts)}",
        f"WANTED_QOS={shlex.quote(wanted_qos)}",
        "TREE=$(managed_tree)",
        "QOS_NOW=$(show qos format=name,description)",
        "while IFS='|' read -r kind a b; do",
        "  case $kind in",
        "    user) printf '%s\\n' \"$WANTED_USERS\" | grep -xF \"$a|$b\" > /dev/null || "
        "prune \"user $a in account $b\" delete user where name=\"$a\" account=\"$b\" cluster=\"$CLUSTER\" ;;",
        "    account) printf '%s\\n' \"$WANTED_ACCOUNTS\" | grep -xF \"$b\" > /dev/null || "
        "prune \"account $b\" delete account where name=\"$b\" cluster=\"$CLUSTER\" ;;",
        "  esac",
        "done <<< \"$TREE\"",
        "while IFS='|' read -r name desc; do",
        "  case $desc in \"$ORG: \"*) printf '%s\\n' \"$WANTED_QOS\" | grep -xF \"$name\" > /dev/null || "
        "prune \"QOS $name\" delete qos where name=\"$name\" ;; esac",
        "done <<< \"$QOS_NOW\"",
        "",
        "if [ \"$CHANGES\" -eq 0 ]; then log \"accounting of $CLUSTER: no changes\"; "
        "else log \"accounting of $CLUSTER: $CHANGES changes\"; fi",
    ]
    return "\n".join(lines) + "\n"
