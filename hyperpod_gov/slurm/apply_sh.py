"""``apply.sh``: what the controller's lifecycle script calls: checks the Slurm version, waits for slurmdbd, runs
posix.sh and accounting.sh, writes the configuration and restarts slurmctld only when it changed."""

from __future__ import annotations

from ..plan.slurm import SlurmPlan
from ._common import DEFAULT_SLURM_PREFIX, MARK_BEGIN, MARK_END, MIN_SLURM, _header
from .model import SlurmState

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

__RETENTION__# slurmdbd answers before accounting can be changed.
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


# cluster.slurm.accountingRetentionDays: the Purge*After lines between the markers of slurmdbd.conf (beside
# slurm.conf, mode 600: it holds the database password; rewritten in place, so owner and mode stay), slurmdbd
# restarted when they changed; the wait below then covers its restart. Only in the apply.sh of a spec that sets it.
_RETENTION = r'''# slurmdbd's retention of the task history (Purge*After in slurmdbd.conf).
DBD_CONF="${HPG_SLURMDBD_CONF:-$(dirname "$SLURM_CONF_FILE")/slurmdbd.conf}"
DBD_RESTART="${HPG_SLURMDBD_RESTART:-systemctl restart slurmdbd}"
if [ ! -f "$DBD_CONF" ]; then log "$DBD_CONF is missing: slurmdbd's retention cannot be set" >&2; exit 1; fi
dbd_before=$(sha256sum < "$DBD_CONF")
dbd_block=$(mktemp)
{ printf '%s\n' "$BEGIN"; sed '/^#/d' "$HERE/slurmdbd.conf.d/retention.conf"; printf '%s\n' "$END"; } > "$dbd_block"
awk -v b="$BEGIN" -v e="$END" -v f="$dbd_block" '
  $0 == b { skip = 1; while ((getline l < f) > 0) print l; done = 1; next }
  $0 == e { skip = 0; next }
  !skip && $0 !~ /^[[:space:]]*[Pp][Uu][Rr][Gg][Ee][A-Za-z]*[[:space:]]*=/ { print }
  END { if (!done) while ((getline l < f) > 0) print l }' "$DBD_CONF" > "$DBD_CONF.hpg"
cat "$DBD_CONF.hpg" > "$DBD_CONF"; rm -f "$DBD_CONF.hpg" "$dbd_block"
if [ "$dbd_before" != "$(sha256sum < "$DBD_CONF")" ]; then
  log "slurmdbd.conf retention changed: restarting slurmdbd ($DBD_RESTART)"
  $DBD_RESTART
fi

'''


def apply_sh(sp: SlurmPlan, state: SlurmState) -> str:
    """The controller's entry point: version check, slurmdbd wait, posix.sh, accounting.sh, then the configuration
    (slurmctld restarted only when it changed)."""
    body = (_APPLY.replace("__PREFIX__", DEFAULT_SLURM_PREFIX).replace("__BEGIN__", MARK_BEGIN)
            .replace("__END__", MARK_END).replace("__MIN__", MIN_SLURM)
            .replace("__RETENTION__", _RETENTION if sp.accounting_retention_days is not None else ""))
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
