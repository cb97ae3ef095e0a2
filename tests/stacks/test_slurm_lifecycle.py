"""The Slurm lifecycle scripts (assets/lifecycle_slurm) run in a sandbox: HyperPod's resource_config.json and the
synthesized provisioning_parameters.json on disk, systemctl, mount and the MariaDB client replaced by stubs that log
their calls, the governance files replaced by stubs that log that they ran."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

SLURM_LIFECYCLE_DIR = Path(__file__).resolve().parents[2] / "hyperpod_gov" / "assets" / "lifecycle_slurm"

CONTROLLER_IP, LOGIN_IP, COMPUTE_IP = "10.1.0.10", "10.1.0.20", "10.1.0.30"
RESOURCE_CONFIG = {"ClusterConfig": {"ClusterName": "gpu-cluster"}, "InstanceGroups": [
    {"Name": "controller", "Instances": [{"InstanceName": "controller-1", "CustomerIpAddress": CONTROLLER_IP}]},
    {"Name": "login", "Instances": [{"InstanceName": "login-1", "CustomerIpAddress": LOGIN_IP}]},
    {"Name": "gpu-worker", "Instances": [{"InstanceName": "gpu-worker-1", "CustomerIpAddress": COMPUTE_IP}]},
]}
PARAMETERS = {"accounting_database": "external", "controller_group": "controller", "login_group": "login",
              "version": "1.0.0", "worker_groups": [{"instance_group_name": "gpu-worker", "partition_name": "g5"}],
              "workload_manager": "slurm"}

STUB = """#!/bin/bash
echo "{name} $*" >> "$HPG_TEST_LOG"
"""
SYSTEMCTL = """#!/bin/bash
echo "systemctl $*" >> "$HPG_TEST_LOG"
case "$1" in
  is-active) [ -f "$HPG_TEST_ACTIVE/${@: -1}" ] ;;
  enable) touch "$HPG_TEST_ACTIVE/${@: -1}" ;;
esac
"""


@pytest.fixture
def sandbox(tmp_path: Path):
    """A lifecycle directory as HyperPod downloads it, and a function running on_create.sh as one instance."""
    scripts = tmp_path / "lifecycle"
    shutil.copytree(SLURM_LIFECYCLE_DIR, scripts)
    (scripts / "slurm").mkdir()
    for name in ("apply.sh", "posix.sh"):
        (scripts / "slurm" / name).write_text(f'echo "slurm/{name}${{HPG_DATA_DIRS:+ HPG_DATA_DIRS=$HPG_DATA_DIRS}}" '
                                              '>> "$HPG_TEST_LOG"\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("mount", "mysql", "chown"):
        (bin_dir / name).write_text(STUB.format(name=name))
    (bin_dir / "mountpoint").write_text("#!/bin/bash\nexit 1\n")  # nothing is mounted yet
    (bin_dir / "systemctl").write_text(SYSTEMCTL)
    for path in bin_dir.iterdir():
        path.chmod(0o755)
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "slurm.conf").write_text(f"ClusterName=gpu-cluster\nSlurmctldHost=ip-10-1-0-10({CONTROLLER_IP})\n")
    (tmp_path / "active").mkdir()
    (tmp_path / "resource_config.json").write_text(json.dumps(RESOURCE_CONFIG))
    log = tmp_path / "calls.log"

    def run(ip: str, parameters: dict | None = None, **env: str) -> subprocess.CompletedProcess:
        (scripts / "provisioning_parameters.json").write_text(json.dumps(parameters or PARAMETERS))
        environment = {
            **os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "HPG_SELF_IP": ip, "HPG_TEST_LOG": str(log),
            "HPG_TEST_ACTIVE": str(tmp_path / "active"), "HPG_LOG_FILE": str(tmp_path / "provisioning.log"),
            "SAGEMAKER_RESOURCE_CONFIG_PATH": str(tmp_path / "resource_config.json"),
            "HPG_SLURM_CONF": str(etc / "slurm.conf"), "HPG_SLURM_ETC": str(etc), "HPG_FSTAB": str(tmp_path / "fstab"),
            "HPG_SYSTEMD_DIR": str(tmp_path / "systemd"), "HPG_WAIT_SECONDS": "0", **env,
        }
        return subprocess.run(["bash", str(scripts / "on_create.sh")], env=environment, capture_output=True,
                              text=True, timeout=60)

    run.log = log  # type: ignore[attr-defined]
    run.root = tmp_path  # type: ignore[attr-defined]
    return run


def _calls(sandbox) -> list[str]:
    return sandbox.log.read_text().splitlines() if sandbox.log.exists() else []


def test_the_controller_starts_slurmctld_then_applies_the_governance(sandbox):
    done = sandbox(CONTROLLER_IP)
    assert done.returncode == 0, done.stderr
    assert _calls(sandbox) == ["systemctl is-active --quiet slurmctld", "systemctl enable --now slurmctld",
                               "slurm/apply.sh"]  # which runs posix.sh itself, data directories included
    assert "instance group controller: Controller" in done.stdout


def test_a_controller_where_slurmctld_runs_already_only_applies_the_governance(sandbox):
    (sandbox.root / "active" / "slurmctld").touch()  # HyperPod started it
    assert sandbox(CONTROLLER_IP).returncode == 0
    assert _calls(sandbox) == ["systemctl is-active --quiet slurmctld", "slurm/apply.sh"]


@pytest.mark.parametrize("ip, group", [(COMPUTE_IP, "gpu-worker"), (LOGIN_IP, "login")])
def test_login_and_compute_nodes_start_slurmd_from_the_controller_and_never_apply(sandbox, ip, group):
    done = sandbox(ip)
    assert done.returncode == 0, done.stderr
    calls = _calls(sandbox)
    assert "slurm/apply.sh" not in calls
    assert "slurm/posix.sh HPG_DATA_DIRS=0" in calls  # users and groups; the controller makes the directories
    assert "systemctl enable --now slurmd" in calls
    drop_in = (sandbox.root / "systemd" / "slurmd.service.d" / "hyperpod-gov.conf").read_text()
    assert f"--conf-server {CONTROLLER_IP}" in drop_in


def test_the_controller_sets_up_its_own_accounting_once_without_an_external_database(sandbox):
    etc = sandbox.root / "etc"
    (etc / "slurmdbd.conf.template").write_text("StoragePass=${SLURM_DB_PASSWORD}\nStorageUser=${SLURM_DB_USER}\n")
    params = {**PARAMETERS, "accounting_database": "controller"}
    for _ in range(2):  # the second run finds slurmdbd running and changes nothing
        done = sandbox(CONTROLLER_IP, params)
        assert done.returncode == 0, done.stderr
    (sandbox.root / "active" / "slurmdbd").unlink()  # a rerun after slurmdbd stopped replaces its block
    assert sandbox(CONTROLLER_IP, params).returncode == 0
    accounting = (etc / "accounting.conf").read_text()
    assert accounting.count("AccountingStorageType=accounting_storage/slurmdbd") == 1
    assert f"AccountingStorageHost={CONTROLLER_IP}" in accounting
    dbd = (etc / "slurmdbd.conf").read_text()
    assert "StorageUser=slurm" in dbd and "${" not in dbd
    assert oct((etc / "slurmdbd.conf").stat().st_mode & 0o777) == "0o600"
    calls = _calls(sandbox)
    assert calls.count("systemctl enable --now slurmdbd") == 2  # the first run and the rerun
    assert calls.index("systemctl enable --now slurmdbd") < calls.index("slurm/apply.sh")


def test_every_node_mounts_the_shared_file_system_and_records_it_once(sandbox):
    params = {**PARAMETERS, "fsx_dns_name": "fs-0123.fsx.us-east-1.amazonaws.com", "fsx_mountname": "abcdef",
              "fsx_mount_dir": str(sandbox.root / "fsx")}
    for _ in range(2):
        assert sandbox(COMPUTE_IP, params).returncode == 0
    fstab = (sandbox.root / "fstab").read_text().splitlines()
    assert fstab == [f"fs-0123.fsx.us-east-1.amazonaws.com@tcp:/abcdef {sandbox.root / 'fsx'} lustre "
                     "defaults,noatime,flock,_netdev,x-systemd.automount 0 0"]
    assert any(c.startswith("mount -t lustre") for c in _calls(sandbox))


def test_an_instance_that_no_group_lists_fails_its_creation(sandbox):
    done = sandbox("10.9.9.9")
    assert done.returncode != 0
    assert "no instance group" in done.stdout and "10.9.9.9" in done.stdout  # the log takes stderr too
    assert _calls(sandbox) == []


def test_slurm_conf_without_the_controller_fails_instead_of_running_ungoverned(sandbox):
    (sandbox.root / "etc" / "slurm.conf").write_text("ClusterName=gpu-cluster\n")
    done = sandbox(CONTROLLER_IP)
    assert done.returncode != 0 and "does not name the controller" in done.stdout
    assert "slurm/apply.sh" not in _calls(sandbox)


def test_a_failing_apply_fails_the_controller(sandbox):
    (sandbox.root / "lifecycle" / "slurm" / "apply.sh").write_text("exit 3\n")
    assert sandbox(CONTROLLER_IP).returncode != 0
