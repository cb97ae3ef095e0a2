"""Slurm governance as files the controller runs, and the exact sacctmgr commands a change causes.

``files(plan)`` gives, by relative path:

- ``accounting.sh``: the accounts, QOS and user associations of ``model.desired``, each read back first
  (``sacctmgr -nP show ...``) and then added, or modified in exactly the attributes that differ, so that running it
  again on an unchanged spec changes nothing. Nothing is deleted unless ``HPG_SLURM_PRUNE=1`` asks (deleting an
  association cancels its running jobs); without it, what the spec no longer has is listed.
- ``slurm.conf.d/governance.conf``: the global settings (priority, preemption, enforcement, GPU tracking), written
  by ``apply.sh`` between marker comments into the file slurm.conf includes (HyperPod's ``accounting.conf``).
- ``slurm.conf.d/partitions.conf`` (``configStrategy: Merge`` only): the ``AllowAccounts``/``AllowQos`` of each
  compute partition, which ``apply.sh`` sets on HyperPod's own partition lines (Slurm refuses a partition defined
  twice, so these are not a second definition).
- ``posix.sh``: the teams' groups and users with the same ids on every node, and their data directories
  (group-owned, mode 2770).
- ``apply.sh``: what the controller's lifecycle script calls: checks the Slurm version, waits for slurmdbd, runs
  posix.sh and accounting.sh, writes the configuration and restarts slurmctld only when it changed.

Every path and name the scripts use comes from an environment variable with HyperPod's default (``/opt/slurm``),
so that a test can point them at a temporary Slurm. ``changes(old, new)`` lists the commands accounting.sh runs to
take Slurm from one state to the other, in the same order and spelling.
"""

from __future__ import annotations

import shlex
from typing import Optional

from ..plan.plan import Plan
from ..plan.slurm import ROOT_ACCOUNT, SlurmPlan
from .model import Account, ConfState, Qos, SlurmState, User, desired

MARK_BEGIN = "# BEGIN hyperpod-gov governance"
MARK_END = "# END hyperpod-gov governance"
MIN_SLURM = "22.05"  # the oldest release the scripts' sacctmgr and slurm.conf syntax is tested on (Debian 12)
DEFAULT_SLURM_PREFIX = "/opt/slurm"  # where HyperPod installs Slurm
CLUSTER_VAR = "$CLUSTER"
PRUNE_NOTE = "deleting an association cancels its running jobs"


def _arg(key: str, value: str) -> str:
    """``key=value`` as one shell word (single-quoted when it holds a space or another special character), as
    accounting.sh prints the commands it runs."""
    return shlex.quote(f"{key}={value}")


def _tres(tres: tuple[tuple[str, int], ...]) -> str:
    return ",".join(f"{k}={v}" for k, v in tres)


def _tres_change(old: tuple[tuple[str, int], ...], new: tuple[tuple[str, int], ...]) -> str:
    """GrpTRES that turns ``old`` into ``new``: the new amounts, and -1 (no limit) for each TRES ``new`` drops."""
    keep = dict(new)
    return ",".join(f"{k}={v}" for k, v in sorted({**{k: -1 for k, _ in old if k not in keep}, **keep}.items()))


def _csv(values: tuple[str, ...]) -> str:
    return ",".join(values)


SACCTMGR = "sacctmgr -i"


# --- the commands, one builder each (accounting.sh's functions spell them the same way) ------------------------


def add_qos(q: Qos) -> str:
    args = [f"{SACCTMGR} add qos {q.name}", _arg("Description", q.description), f"Priority={q.priority}"]
    if q.grp_tres:
        args.append(f"GrpTRES={_tres(q.grp_tres)}")
    if q.preempt:
        args.append(f"Preempt={_csv(q.preempt)}")
    if q.preempt_mode:
        args.append(f"PreemptMode={q.preempt_mode}")
    if q.flags:
        args.append(f"Flags={_csv(q.flags)}")
    return " ".join(args)


def _qos_sets(old: Qos, new: Qos) -> list[str]:
    sets = []
    if old.description != new.description:
        sets.append(_arg("Description", new.description))
    if old.priority != new.priority:
        sets.append(f"Priority={new.priority}")
    if old.grp_tres != new.grp_tres:
        sets.append(f"GrpTRES={_tres_change(old.grp_tres, new.grp_tres)}")
    if old.preempt != new.preempt:
        sets.append(f"Preempt={_csv(new.preempt)}")  # empty: Slurm's default, preempt nothing
    if new.preempt_mode and (old.preempt_mode or "").lower() != new.preempt_mode.lower():
        sets.append(f"PreemptMode={new.preempt_mode}")
    if new.flags and tuple(f.lower() for f in old.flags) != tuple(f.lower() for f in new.flags):
        sets.append(f"Flags={_csv(new.flags)}")
    return sets


def modify_qos(name: str, sets: list[str]) -> str:
    return f"{SACCTMGR} modify qos where name={name} set {' '.join(sets)}"


def add_account(a: Account, cluster: str) -> str:
    args = [f"{SACCTMGR} add account {a.name}", f"Cluster={cluster}", f"Parent={a.parent}",
            _arg("Description", a.description), _arg("Organization", a.organization), f"Fairshare={a.fairshare}"]
    if a.grp_tres:
        args.append(f"GrpTRES={_tres(a.grp_tres)}")
    if a.grp_jobs is not None:
        args.append(f"GrpJobs={a.grp_jobs}")
    if a.qos:
        args.append(f"QOS={_csv(a.qos)}")
    if a.default_qos:
        args.append(f"DefaultQOS={a.default_qos}")
    return " ".join(args)


def _account_commands(old: Account, new: Account, cluster: str) -> list[str]:
    out = []
    entity = []
    if old.description != new.description:
        entity.append(_arg("Description", new.description))
    if old.organization != new.organization:
        entity.append(_arg("Organization", new.organization))
    if entity:
        out.append(f"{SACCTMGR} modify account where name={new.name} set {' '.join(entity)}")
    if old.parent != new.parent:
        out.append(f"{SACCTMGR} modify account where name={new.name} cluster={cluster} set Parent={new.parent}")
    sets = []
    if old.fairshare != new.fairshare:
        sets.append(f"Fairshare={new.fairshare}")
    if old.grp_tres != new.grp_tres:
        sets.append(f"GrpTRES={_tres_change(old.grp_tres, new.grp_tres)}")
    if old.grp_jobs != new.grp_jobs:
        sets.append(f"GrpJobs={-1 if new.grp_jobs is None else new.grp_jobs}")
    if old.qos != new.qos:
        sets.append(f"QOS={_csv(new.qos)}")
    if old.default_qos != new.default_qos and new.default_qos:
        sets.append(f"DefaultQOS={new.default_qos}")
    if sets:
        out.append(f"{SACCTMGR} modify account where name={new.name} cluster={cluster} set {' '.join(sets)}")
    return out


def add_user(u: User, cluster: str) -> str:
    return f"{SACCTMGR} add user {u.name} Cluster={cluster} Account={u.account}"


def set_default_account(user: str, account: str, cluster: str) -> str:
    return f"{SACCTMGR} modify user where name={user} cluster={cluster} set DefaultAccount={account}"


def delete_user(u: User, cluster: str) -> str:
    return f"{SACCTMGR} delete user where name={u.name} account={u.account} cluster={cluster}"


def delete_account(name: str, cluster: str) -> str:
    return f"{SACCTMGR} delete account where name={name} cluster={cluster}"


def delete_qos(name: str) -> str:
    return f"{SACCTMGR} delete qos where name={name}"


def _qos_order(qos: tuple[Qos, ...]) -> list[Qos]:
    """QOS that preempt nothing first: a QOS's Preempt list may name only QOS that exist."""
    return sorted(qos, key=lambda q: (bool(q.preempt), q.name))


def _depth(accounts: tuple[Account, ...]) -> dict[str, int]:
    parents = {a.name: a.parent for a in accounts}
    out = {}
    for name in parents:
        d, at = 0, name
        while at in parents and d <= len(parents):
            at, d = parents[at], d + 1
        out[name] = d
    return out


EMPTY = SlurmState(accounts=(), qos=(), users=())


def _organisation(state: SlurmState) -> Optional[str]:
    """The account under root that holds the teams (the one hyperpod-gov manages), if the state has one."""
    return next((a.name for a in state.accounts if a.parent == ROOT_ACCOUNT), None)


def _managed(state: SlurmState, org: Optional[str]) -> set[str]:
    """The accounts under ``org`` in ``state``, ``org`` itself excluded: what pruning may delete."""
    parents = {a.name: a.parent for a in state.accounts}
    out = set()
    for name in parents:
        at, hops = name, 0
        while at in parents and at != org and hops <= len(parents):
            at, hops = parents[at], hops + 1
        if org is not None and at == org and name != org:
            out.add(name)
    return out


def changes(old: Optional[SlurmState], new: Optional[SlurmState]) -> list[str]:
    """The sacctmgr commands accounting.sh runs on a cluster in state ``old`` (e.g. read back with ``sacctmgr
    dump``) to reach ``new``, in its order and spelling; what it deletes only with ``HPG_SLURM_PRUNE=1`` comes last,
    as comments. Only the organisation's accounts and QOS are ever deleted. None stands for no Slurm state (an EKS
    spec)."""
    old, new = old or EMPTY, new or EMPTY
    cluster = new.cluster or old.cluster or CLUSTER_VAR
    out: list[str] = []
    old_qos = {q.name: q for q in old.qos}
    for q in _qos_order(new.qos):
        if q.name not in old_qos:
            out.append(add_qos(q))
        else:
            sets = _qos_sets(old_qos[q.name], q)
            if sets:
                out.append(modify_qos(q.name, sets))
    old_accounts = {a.name: a for a in old.accounts}
    depth = _depth(new.accounts)
    for a in sorted(new.accounts, key=lambda a: (depth[a.name], a.name)):
        if a.name not in old_accounts:
            out.append(add_account(a, cluster))
        else:
            out += _account_commands(old_accounts[a.name], a, cluster)
    pairs = {(u.name, u.account) for u in old.users}
    default = {u.name: u.default_account for u in old.users}
    for u in new.users:
        if (u.name, u.account) not in pairs:
            out.append(add_user(u, cluster))
            default.setdefault(u.name, u.account)  # a new user's default is the first account it is added to
            pairs.add((u.name, u.account))
    for name, account in sorted({(u.name, u.default_account) for u in new.users}):
        if default.get(name) != account:
            out.append(set_default_account(name, account, cluster))
    org = _organisation(new) or _organisation(old)
    managed = _managed(old, org)
    wanted = {(u.name, u.account) for u in new.users}
    new_accounts = {a.name for a in new.accounts}
    old_depth = _depth(old.accounts)
    prune = [delete_user(u, cluster) for u in sorted(old.users)
             if (u.name, u.account) not in wanted and (u.account in managed or u.account == org)]
    prune += [delete_account(name, cluster)
              for name in sorted(managed - new_accounts, key=lambda n: (-old_depth[n], n))]
    new_qos = {q.name for q in new.qos}
    prune += [delete_qos(q.name) for q in sorted(old.qos)
              if q.name not in new_qos and org is not None and q.description.startswith(f"{org}: ")]
    out += [f"# with HPG_SLURM_PRUNE=1 ({PRUNE_NOTE}): {c}" for c in prune]
    return out


# --- the files ----------------------------------------------------------------------------------------------------


def files(plan: Plan) -> dict[str, str]:
    """Every Slurm file of a Slurm-orchestrated plan, by path relative to the synth output's ``slurm/``."""
    sp = plan.slurm
    if sp is None:
        raise ValueError("the plan is not of a Slurm-orchestrated cluster (cluster.orchestrator: slurm)")
    state = desired(plan)
    out = {
        "accounting.sh": accounting_sh(sp, state),
        "apply.sh": apply_sh(sp, state),
        "posix.sh": posix_sh(sp, state),
        "slurm.conf.d/governance.conf": governance_conf(sp, state.conf),
    }
    if state.conf is not None and state.conf.partitions:
        out["slurm.conf.d/partitions.conf"] = partitions_conf(sp, state.conf)
    return dict(sorted(out.items()))


def _header(sp: SlurmPlan, what: str) -> str:
    return (f"# {what}\n# Generated by hyperpod-gov for the organisation {sp.organisation} (cluster {sp.cluster_name}); "
            "do not edit: change the spec and synth again.\n")


def governance_conf(sp: SlurmPlan, conf: Optional[ConfState]) -> str:
    """The global slurm.conf lines, as apply.sh writes them between the markers."""
    lines = [f"{k}={v}" for k, v in (conf.settings if conf else ())]
    return _header(sp, "Slurm settings of the governance: priority, preemption, limits enforcement.") + \
        "\n".join(lines) + "\n"


def partitions_conf(sp: SlurmPlan, conf: ConfState) -> str:
    """Who may use each compute partition: the keys apply.sh sets on HyperPod's partition line of that name."""
    lines = [f"PartitionName={p.name} AllowAccounts={_csv(p.allow_accounts) or ROOT_ACCOUNT} "
             f"AllowQos={_csv(p.allow_qos)}" for p in conf.partitions]
    return _header(sp, "Partition access, set on HyperPod's partition lines by apply.sh (configStrategy Merge); not "
                   "a partition definition.") + "\n".join(lines) + "\n"


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


def _sh_args(*values: str) -> str:
    return " ".join(shlex.quote(v) for v in values)


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

# ensure_dir PATH GROUP MODE: only where the shared file system is mounted (its top directory exists).
ensure_dir() {
  local path="$ROOT$1" group=$2 mode=$3 top
  top="$ROOT/$(printf '%s' "$1" | cut -d/ -f2)"
  if [ ! -d "$top" ]; then log "skipped $path: $top is not mounted here"; return; fi
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
             _POSIX_LIB.rstrip("\n"), ""]
    lines += [f"ensure_group {_sh_args(g.name, str(g.gid))}" for g in state.groups]
    lines += [f"ensure_user {_sh_args(u.name, str(u.uid), u.group, _csv(u.groups))}" for u in state.posix_users]
    lines += ["if [ \"$DATA_DIRS\" = 1 ]; then"]
    lines += [f"  ensure_dir {_sh_args(d.path, d.group, d.mode)}" for d in state.data_dirs]
    lines += ([] if state.data_dirs else ["  :"]) + ["fi",
              "if [ \"$PROBLEMS\" -gt 0 ]; then log \"$PROBLEMS problems\"; exit 1; fi",
              "log \"POSIX identities: as the spec says\""]
    return "\n".join(lines) + "\n"


_APPLY = r'''
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SLURM_PREFIX="${HPG_SLURM_PREFIX:-__PREFIX__}"
[ -d "$SLURM_PREFIX/bin" ] && PATH="$SLURM_PREFIX/bin:$PATH"
export HPG_SLURM_PREFIX="$SLURM_PREFIX"
SLURM_CONF_FILE="${HPG_SLURM_CONF:-${SLURM_CONF:-$SLURM_PREFIX/etc/slurm.conf}}"
export HPG_SLURM_CONF="$SLURM_CONF_FILE" SLURM_CONF="$SLURM_CONF_FILE"
# The file slurm.conf includes and HyperPod leaves to the cluster (its lifecycle scripts append accounting there).
INCLUDE_FILE="${HPG_SLURM_INCLUDE:-$(dirname "$SLURM_CONF_FILE")/accounting.conf}"
# The file holding HyperPod's partition lines.
PARTITIONS_FILE="${HPG_SLURM_PARTITIONS_FILE:-$SLURM_CONF_FILE}"
RESTART="${HPG_SLURMCTLD_RESTART:-systemctl restart slurmctld}"
WAIT="${HPG_SLURMDBD_WAIT:-300}"
BEGIN='__BEGIN__'
END='__END__'
log() { printf 'hyperpod-gov: %s\n' "$*"; }

# The Slurm release: the scripts are written for __MIN__ and later.
version=$(sinfo -V 2>/dev/null | awk '{print $2}') || version=""
if [ -z "$version" ]; then log "sinfo -V printed no version: is Slurm installed (PATH, $SLURM_PREFIX) and does $SLURM_CONF_FILE parse?" >&2; exit 2; fi
if [ "$(printf '%s\n%s\n' "__MIN__" "$version" | sort -V | sed -n 1p)" != "__MIN__" ]; then
  log "Slurm $version is older than __MIN__, which these scripts need" >&2; exit 2
fi
log "Slurm $version"

# slurmdbd answers before accounting can be changed.
waited=0
until sacctmgr -nP show cluster format=cluster > /dev/null 2>&1; do
  if [ "$waited" -ge "$WAIT" ]; then log "slurmdbd did not answer within ${WAIT}s" >&2; exit 1; fi
  sleep 5; waited=$((waited + 5))
done

if [ "${HPG_POSIX:-1}" = 1 ]; then bash "$HERE/posix.sh"; fi
bash "$HERE/accounting.sh"

# The settings between the markers of the include file; the rest of the file stays as it is.
touch "$INCLUDE_FILE"
if ! grep -Eiq "^[[:space:]]*include[[:space:]]+(.*/)?$(basename "$INCLUDE_FILE")[[:space:]]*$" "$SLURM_CONF_FILE"; then
  log "$SLURM_CONF_FILE does not include $(basename "$INCLUDE_FILE"): the settings would not apply" >&2; exit 1
fi
before=$(cat "$INCLUDE_FILE" "$PARTITIONS_FILE" | sha256sum)
block=$(mktemp)
{ printf '%s\n' "$BEGIN"; sed '/^#/d' "$HERE/slurm.conf.d/governance.conf"; printf '%s\n' "$END"; } > "$block"
awk -v b="$BEGIN" -v e="$END" -v f="$block" '
  $0 == b { skip = 1; while ((getline l < f) > 0) print l; done = 1; next }
  $0 == e { skip = 0; next }
  !skip { print }
  END { if (!done) while ((getline l < f) > 0) print l }' "$INCLUDE_FILE" > "$INCLUDE_FILE.hpg"
cat "$INCLUDE_FILE.hpg" > "$INCLUDE_FILE"; rm -f "$INCLUDE_FILE.hpg" "$block"
# A setting the governance owns must not be set again in slurm.conf or elsewhere in the include file (the later
# line would win).
outside=$(awk -v b="$BEGIN" -v e="$END" '$0 == b { skip = 1 } !skip { print } $0 == e { skip = 0 }' "$INCLUDE_FILE")
for key in $(sed '/^#/d' "$HERE/slurm.conf.d/governance.conf" | cut -d= -f1); do
  if grep -Eiq "^[[:space:]]*$key[[:space:]]*=" "$SLURM_CONF_FILE" \
      || printf '%s\n' "$outside" | grep -Ei "^[[:space:]]*$key[[:space:]]*=" > /dev/null; then
    log "warning: $key is set outside the governance block too (the later line wins); remove it there" >&2
  fi
done

# Partition access on HyperPod's partition lines (configStrategy Merge keeps these edits).
if [ -f "$HERE/slurm.conf.d/partitions.conf" ]; then
  while read -r line; do
    case $line in '#'*|'') continue ;; esac
    name=${line%% *}; name=${name#PartitionName=}
    if ! grep -Eq "^[[:space:]]*PartitionName=$name([[:space:]]|$)" "$PARTITIONS_FILE"; then
      log "partition $name is not in $PARTITIONS_FILE (HyperPod writes it from the group's SlurmConfig)" >&2; exit 1
    fi
    keys=${line#* }
    awk -v n="$name" -v k="$keys" '
      $0 ~ "^[[:space:]]*PartitionName=" n "([[:space:]]|$)" {
        out = ""; for (i = 1; i <= NF; i++) if ($i !~ /^(AllowAccounts|AllowQos|DenyAccounts|DenyQos)=/) out = out (out == "" ? "" : " ") $i
        print out " " k; next }
      { print }' "$PARTITIONS_FILE" > "$PARTITIONS_FILE.hpg"
    cat "$PARTITIONS_FILE.hpg" > "$PARTITIONS_FILE"; rm -f "$PARTITIONS_FILE.hpg"
  done < "$HERE/slurm.conf.d/partitions.conf"
fi

after=$(cat "$INCLUDE_FILE" "$PARTITIONS_FILE" | sha256sum)
if [ "$before" = "$after" ]; then
  log "slurm.conf unchanged: slurmctld keeps running"
else
  log "slurm.conf changed: restarting slurmctld ($RESTART)"
  $RESTART
  waited=0
  until scontrol ping 2>/dev/null | grep 'UP' > /dev/null; do
    if [ "$waited" -ge "$WAIT" ]; then log "slurmctld did not come back within ${WAIT}s" >&2; exit 1; fi
    sleep 2; waited=$((waited + 2))
  done
  scontrol reconfigure
fi
log "governance applied"
'''


def apply_sh(sp: SlurmPlan, state: SlurmState) -> str:
    """The controller's entry point: version check, slurmdbd wait, posix.sh, accounting.sh, then the configuration
    (slurmctld restarted only when it changed)."""
    body = (_APPLY.replace("__PREFIX__", DEFAULT_SLURM_PREFIX).replace("__BEGIN__", MARK_BEGIN)
            .replace("__END__", MARK_END).replace("__MIN__", MIN_SLURM))
    return "\n".join([
        "#!/bin/bash",
        _header(sp, "Applies the Slurm governance on the controller; the lifecycle script runs it after slurmdbd "
                "and slurmctld start.").rstrip("\n"),
        "# Environment (defaults: HyperPod's): HPG_SLURM_PREFIX=/opt/slurm, HPG_SLURM_CONF (slurm.conf), "
        "HPG_SLURM_INCLUDE (the included file the settings go to,",
        "#   default accounting.conf beside slurm.conf), HPG_SLURM_PARTITIONS_FILE (default slurm.conf), "
        "HPG_SLURMCTLD_RESTART (default: systemctl restart slurmctld),",
        "#   HPG_SLURMDBD_WAIT (seconds, default 300), HPG_POSIX=0 (skip posix.sh), and accounting.sh's "
        "HPG_SLURM_CLUSTER, HPG_SLURM_PRUNE, HPG_SLURM_DRY_RUN.",
        body.rstrip("\n"),
    ]) + "\n"
