#!/bin/bash
# HyperPod (Slurm) lifecycle script, run once on every instance when it is created.
# Shipped by hyperpod-gov and uploaded to the cluster's sagemaker-* bucket together with what synth generates
# from the spec: provisioning_parameters.json (which group is the controller, the login group, the shared file
# system) and slurm/ (the governance: apply.sh, accounting.sh, posix.sh, slurm.conf.d/).
#
#   every node      mounts the shared FSx for Lustre file system (when the spec has one)
#   the controller  sets up the accounting database (the controller's own MariaDB unless the cluster names an
#                   external one), starts slurmctld, then applies the governance (slurm/apply.sh: waits for
#                   slurmdbd; the teams' POSIX users, groups and data directories; the sacctmgr accounts, QOS and
#                   users; the conf fragment)
#   login, compute  start slurmd, configless from the controller, and create the teams' POSIX users and groups
#                   (slurm/posix.sh; the data directories are the controller's to create, once)
#
# Any failure fails the instance's creation: a controller never runs ungoverned.
# Paths can be moved for tests (HPG_*); on HyperPod the defaults apply.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LOG_FILE="${HPG_LOG_FILE:-/var/log/provision/provisioning.log}"
RESOURCE_CONFIG="${SAGEMAKER_RESOURCE_CONFIG_PATH:-/opt/ml/config/resource_config.json}"
PARAMS="$HERE/provisioning_parameters.json"
SLURM_CONF="${HPG_SLURM_CONF:-/opt/slurm/etc/slurm.conf}"
FSTAB="${HPG_FSTAB:-/etc/fstab}"
WAIT_SECONDS="${HPG_WAIT_SECONDS:-600}"
SYSTEMD_DIR="${HPG_SYSTEMD_DIR:-/etc/systemd/system}"

mkdir -p "$(dirname "$LOG_FILE")"
exec > >(tee -a "$LOG_FILE") 2>&1
echo "hyperpod-gov on_create (slurm): $(date -u +%FT%TZ) on $(hostname)"

fail() { echo "hyperpod-gov on_create: $*" >&2; exit 1; }
[ -f "$PARAMS" ] || fail "$PARAMS is missing: upload the lifecycle scripts with hyperpod-gov synth's output"
[ -f "$RESOURCE_CONFIG" ] || fail "$RESOURCE_CONFIG is missing: this script runs on HyperPod instances only"

# This instance's node type, from the group whose instances list this instance's address (HyperPod's
# resource_config.json) and the group names synth wrote (provisioning_parameters.json).
read -r NODE_TYPE GROUP CONTROLLERS < <(python3 "$HERE/node_type.py" "$RESOURCE_CONFIG" "$PARAMS")
echo "instance group $GROUP: $NODE_TYPE (controller $CONTROLLERS)"

param() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]) or "")' "$PARAMS" "$1"; }

# The shared file system, where the teams' data directories are (apply.sh's posix.sh creates them).
FSX_DNS_NAME="$(param fsx_dns_name)"
FSX_MOUNT_NAME="$(param fsx_mountname)"
FSX_MOUNT_DIR="$(param fsx_mount_dir)"
if [ -n "$FSX_DNS_NAME" ]; then
  [ -n "$FSX_MOUNT_NAME" ] && [ -n "$FSX_MOUNT_DIR" ] || fail "fsx_dns_name is set but fsx_mountname or fsx_mount_dir is not"
  source="$FSX_DNS_NAME@tcp:/$FSX_MOUNT_NAME"
  mkdir -p "$FSX_MOUNT_DIR"
  if ! grep -qs " $FSX_MOUNT_DIR lustre " "$FSTAB"; then
    echo "$source $FSX_MOUNT_DIR lustre defaults,noatime,flock,_netdev,x-systemd.automount 0 0" >> "$FSTAB"
  fi
  mountpoint -q "$FSX_MOUNT_DIR" || mount -t lustre -o noatime,flock "$source" "$FSX_MOUNT_DIR" \
    || fail "could not mount $source on $FSX_MOUNT_DIR (is the Lustre client installed, port 988 open?)"
  echo "shared file system: $source on $FSX_MOUNT_DIR"
fi

# HyperPod's cluster agent writes slurm.conf; wait until it names the controller before starting anything.
deadline=$((SECONDS + WAIT_SECONDS))
until [ -f "$SLURM_CONF" ] && grep -qF "${CONTROLLERS%%,*}" "$SLURM_CONF"; do
  [ "$SECONDS" -lt "$deadline" ] || fail "$SLURM_CONF does not name the controller after ${WAIT_SECONDS}s"
  sleep 5
done

start() {  # start a Slurm daemon unless HyperPod has started it already
  systemctl is-active --quiet "$1" || systemctl enable --now "$1"
}

case "$NODE_TYPE" in
  Controller)
    if [ "$(param accounting_database)" != "external" ]; then
      bash "$HERE/setup_accounting.sh"
    fi
    start slurmctld
    bash "$HERE/slurm/apply.sh"
    ;;
  Login|Compute)
    if ! systemctl is-active --quiet slurmd; then
      mkdir -p "$SYSTEMD_DIR/slurmd.service.d"
      printf '[Service]\nEnvironment="SLURMD_OPTIONS=--conf-server %s"\n' "$CONTROLLERS" \
        > "$SYSTEMD_DIR/slurmd.service.d/hyperpod-gov.conf"
      systemctl daemon-reload
      start slurmd
    fi
    HPG_DATA_DIRS=0 bash "$HERE/slurm/posix.sh"
    ;;
  *) fail "unknown node type $NODE_TYPE" ;;
esac

echo "hyperpod-gov on_create (slurm): done"
