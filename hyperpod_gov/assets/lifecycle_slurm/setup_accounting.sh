#!/bin/bash
# The controller's own accounting database, for a cluster without an external one (cluster.slurm.
# accountingDatabase): MariaDB on the controller, slurmdbd on top of it, and slurm.conf's accounting settings.
# The steps of HyperPod's base-config lifecycle scripts (setup_mariadb_accounting.sh), non-interactive and
# idempotent: a second run on a configured controller changes nothing.
set -euo pipefail

SLURM_ETC="${HPG_SLURM_ETC:-/opt/slurm/etc}"
DBD_CONF="$SLURM_ETC/slurmdbd.conf"
ACCOUNTING_CONF="$SLURM_ETC/accounting.conf"  # empty on HyperPod's image and included by slurm.conf
BEGIN="# hyperpod-gov accounting storage: begin"
END="# hyperpod-gov accounting storage: end"

if [ -f "$DBD_CONF" ] && systemctl is-active --quiet slurmdbd; then
  echo "setup_accounting: slurmdbd runs with $DBD_CONF already"
  exit 0
fi
[ -f "$DBD_CONF.template" ] || { echo "setup_accounting: $DBD_CONF.template is missing: not a HyperPod Slurm image?" >&2; exit 1; }

systemctl enable --now mariadb
password="$(openssl rand -hex 24)"
# root reaches MariaDB through its socket (unix_socket authentication); the password never reaches the log.
mysql --user=root <<SQL
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$password';
ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$password';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
SQL
umask 077
SLURM_DB_USER=slurm SLURM_DB_PASSWORD="$password" envsubst < "$DBD_CONF.template" > "$DBD_CONF"
chown slurm:slurm "$DBD_CONF"
chmod 600 "$DBD_CONF"

# slurmctld reaches slurmdbd on the controller's address as slurm.conf names it (SlurmctldHost=name(address)).
host="$(awk -F'[=(]' '/^SlurmctldHost=/ { print $NF; exit }' "$SLURM_ETC/slurm.conf" | tr -d ')')"
[ -n "$host" ] || { echo "setup_accounting: $SLURM_ETC/slurm.conf names no SlurmctldHost" >&2; exit 1; }
touch "$ACCOUNTING_CONF"
sed -i "/^$BEGIN\$/,/^$END\$/d" "$ACCOUNTING_CONF"
cat >> "$ACCOUNTING_CONF" <<CONF
$BEGIN
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=$host
AccountingStoragePort=6819
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
$END
CONF
chmod 644 "$ACCOUNTING_CONF"
systemctl enable --now slurmdbd
echo "setup_accounting: slurmdbd on MariaDB, accounting via $host:6819"
