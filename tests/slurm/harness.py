"""A real Slurm cluster on the loopback address, for the live Slurm tests (tests/slurm/test_live_*.py).

Debian's packages (slurm-wlm 22.05, slurmdbd, munge, mariadb-server; ``.ci/run`` installs them) run without
systemd: munged, a throwaway MariaDB in a temporary directory (loopback only, a free port, no grant tables:
nothing but this test's slurmdbd reaches it), slurmdbd, slurmctld and one slurmd per node, all as root, with a
small generated slurm.conf. Several slurmd run on this one machine (``slurmd -N NAME``, a port each) so that
partitions have more than one node. The nodes declare 8 GPUs each as GRES backed by placeholder device files
(character devices with /dev/null's numbers): Slurm 22.05 drops file-less GPUs from the node, and the governance
under test limits ``gres/gpu`` as it would on a p5 node. Nothing runs on them (jobs are ``sleep``).

``slurm.conf`` ends with ``Include <dir>/governance.conf``: the test writes the generated fragments there and
``restart_controller()`` makes the daemons read them (preemption settings need a restart, not a reconfigure).
Every daemon is stopped by the pid in its pid file at the end.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

CLUSTER = "hpgtest"
TOOLS = ("munged", "munge", "mariadbd", "mariadb-install-db", "mariadb", "slurmdbd", "slurmctld", "slurmd", "sacctmgr",
         "sbatch", "scancel", "scontrol", "sinfo", "squeue", "runuser", "useradd", "userdel", "groupdel", "mknod")
MUNGE_SOCKET = Path("/run/munge/munge.socket.2")  # Slurm 22.05's sacctmgr ignores AuthInfo=socket=: the default
GPUS_PER_NODE = 8
CPUS_PER_NODE = 4


def missing_tools() -> list[str]:
    """The programs the harness needs that are not on PATH (empty: it can run)."""
    return [t for t in TOOLS if shutil.which(t) is None]


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _wait(what: str, ok, timeout: float = 20.0, log: Optional[Path] = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ok():
            return
        time.sleep(0.1)
    tail = ""
    if log is not None and log.exists():
        tail = "\n" + "\n".join(log.read_text(errors="replace").splitlines()[-20:])
    raise RuntimeError(f"{what} did not come up within {timeout:.0f} s{tail}")


@dataclass
class Result:
    """A finished command: its arguments, exit status and output."""

    args: Sequence[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def check(self) -> "Result":
        if self.returncode != 0:
            raise AssertionError(f"{' '.join(self.args)} exited {self.returncode}:\n{self.stdout}\n{self.stderr}")
        return self


@dataclass
class SlurmCluster:
    """The running daemons and how to talk to them. Start with ``start()``, stop with ``stop()``."""

    partitions: dict[str, tuple[str, ...]]  # partition -> node names (each node one slurmd)
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="hpg-slurm-")))
    users: list[str] = field(default_factory=list)  # Unix users to remove at stop (created here or by posix.sh)
    groups: list[str] = field(default_factory=list)  # Unix groups to remove at stop
    _procs: list[tuple[str, subprocess.Popen]] = field(default_factory=list)
    _own_munged: bool = False
    _netns: Optional[subprocess.Popen] = None  # the process holding the cluster's network namespace
    no_netns: str = ""  # why the cluster has no network namespace of its own, if it has none
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def etc(self) -> Path:
        return self.root / "etc"

    @property
    def conf(self) -> Path:
        return self.etc / "slurm.conf"

    @property
    def include_conf(self) -> Path:
        """The file slurm.conf includes, as HyperPod's accounting.conf (apply.sh writes its settings there)."""
        return self.etc / "accounting.conf"

    @property
    def restart_script(self) -> Path:
        return self.root / "restart-slurmctld"

    @property
    def ctld_pidfile(self) -> Path:
        return self.root / "state" / "slurmctld.pid"

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(sorted({n for ns in self.partitions.values() for n in ns}))

    @property
    def in_netns(self) -> list[str]:
        """The prefix that runs a command in the cluster's network namespace (empty before ``start``)."""
        return ["nsenter", f"--net=/proc/{self._netns.pid}/ns/net", "--"] if self._netns else []

    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    # --- commands ---------------------------------------------------------------------------

    def run(self, *args: str, user: Optional[str] = None, input: Optional[str] = None, timeout: float = 30,
            env: Optional[dict[str, str]] = None) -> Result:
        """Run a command with SLURM_CONF pointing at this cluster (as ``user`` via runuser, su's root-only twin)."""
        cmd = list(args)
        if user is not None:
            cmd = ["runuser", "-u", user, "--", "env", f"SLURM_CONF={self.conf}", *cmd]
        cmd = [*self.in_netns, *cmd]
        p = subprocess.run(cmd, capture_output=True, text=True, input=input, timeout=timeout,
                           env={**self.env(), **(env or {})}, cwd="/tmp")
        return Result(cmd, p.returncode, p.stdout, p.stderr)

    def sacctmgr(self, *args: str) -> str:
        return self.run("sacctmgr", *args).check().stdout

    def sbatch(self, user: str, *args: str) -> Result:
        """Submit a sleeping job as ``user``; ``Result.stdout`` is the job id on success (--parsable)."""
        return self.run("sbatch", "--parsable", "--chdir=/tmp", "--output=/dev/null", "--time=10", *args,
                        "--wrap=sleep 600", user=user)

    def job(self, job_id: str) -> dict[str, str]:
        """``scontrol show job`` as key -> value (the first '=' of each token splits)."""
        out = self.run("scontrol", "-o", "show", "job", job_id).check().stdout
        fields: dict[str, str] = {}
        for token in out.split():
            key, _, value = token.partition("=")
            fields.setdefault(key, value)
        return fields

    def wait_job(self, job_id: str, state: str, reason: Optional[str] = None, timeout: float = 20) -> dict[str, str]:
        """Wait until the job is in ``state`` (and, if given, pends for ``reason``); return its fields."""
        seen: dict[str, str] = {}

        def ok() -> bool:
            nonlocal seen
            seen = self.job(job_id)
            return seen.get("JobState") == state and (reason is None or seen.get("Reason") == reason)

        try:
            _wait(f"job {job_id} in {state} ({reason})", ok, timeout)
        except RuntimeError:
            usage = self.run("scontrol", "show", "assoc_mgr", f"accounts={seen.get('Account', '')}", "flags=assoc")
            raise AssertionError(f"job {job_id}: expected {state} ({reason}), is {seen.get('JobState')} "
                                 f"({seen.get('Reason')}); the account's limits (usage):\n" + "\n".join(
                                     line.strip() for line in usage.stdout.splitlines()
                                     if "GrpTRES=" in line or "ClusterName=" in line)) from None
        return seen

    def cancel_all(self) -> None:
        """Cancel every job and wait until the nodes are idle again. Pending jobs go first: cancelling a running
        job first lets the scheduler start a pending one in between."""
        pending = self.run("squeue", "-h", "-t", "PD", "-o", "%i").stdout.split()
        if pending:
            self.run("scancel", *pending)
        ids = self.run("squeue", "-h", "-o", "%i").stdout.split()
        if ids:
            self.run("scancel", *ids)
        if pending or ids:
            _wait("cancelled jobs to leave", lambda: not self.run("squeue", "-h", "-o", "%i").stdout.split(),
                  timeout=20)
            _wait("the nodes idle", lambda: set(self.run("sinfo", "-h", "-N", "-p", "dev", "-o", "%t").stdout.split())
                  <= {"idle"}, timeout=20)

    def remove_at_stop(self, users: Sequence[str] = (), groups: Sequence[str] = ()) -> None:
        """Remove these Unix users and groups (e.g. the ones posix.sh creates) when the cluster stops."""
        self.users += [u for u in users if u not in self.users]
        self.groups += [g for g in groups if g not in self.groups]

    def add_user(self, name: str) -> None:
        """Create a Unix user (no home directory) unless it exists; it is removed at stop."""
        try:
            pwd.getpwnam(name)
        except KeyError:
            subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
            self.users.append(name)

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> "SlurmCluster":
        t0 = time.monotonic()
        self.root.chmod(0o755)  # job submitters read slurm.conf under it
        for d in ("etc", "state", "spool", "log", "db", "dev"):
            (self.root / d).mkdir()
        self._network()
        ports = dict(zip(("db", "dbd", "ctld", *self.nodes), _free_ports(3 + len(self.nodes))))
        self._munge()
        self._mariadb(ports["db"])
        self.timings["mariadb"] = time.monotonic() - t0
        self._write_conf(ports)
        self._slurmdbd()
        self.sacctmgr("-i", "add", "cluster", CLUSTER)
        self.timings["slurmdbd"] = time.monotonic() - t0
        self._slurmctld()
        self._slurmds()
        self.timings["total"] = time.monotonic() - t0
        return self

    def _network(self) -> None:
        """A network namespace of the cluster's own, whose loopback route acknowledges at once (``quickack``).

        Slurm 22.05 writes a message's length and its body in two writes on a socket without TCP_NODELAY: under
        Nagle's algorithm the body waits for the length's acknowledgement, which Linux delays by 40 ms. Each
        request to slurmdbd waited that long twice, so one sacctmgr command took about 0.35 s. On a route with
        quickack the acknowledgement is not delayed (the daemons are unchanged). The namespace also keeps the
        daemons' ports off the machine's loopback: nothing else can reach them or take them. Its second loopback
        address is for getaddrinfo: with AI_ADDRCONFIG, as Slurm resolves, glibc returns IPv4 addresses only where
        an address other than 127.0.0.1 is configured. Where no namespace can be made (``no_netns`` says why),
        the daemons use the machine's loopback."""
        # 127.0.0.1 has a host route of its own beside 127.0.0.0/8's (the longer prefix is the one used)
        routes = " && ".join(f"ip route change local {dst} dev lo table local proto kernel scope host src 127.0.0.1"
                             " quickack 1" for dst in ("127.0.0.0/8", "127.0.0.1"))
        if not all(shutil.which(tool) for tool in ("unshare", "nsenter", "ip")):
            self.no_netns = "unshare, nsenter (util-linux) or ip (iproute2) is missing"
            return
        self._netns = subprocess.Popen(
            ["unshare", "--net", "--", "sh", "-c",
             f"ip link set lo up && ip addr add 127.0.0.2/32 dev lo && {routes} && echo ready"
             " && exec sleep infinity"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        if self._netns.stdout.readline().strip() != b"ready":  # e.g. a container without CAP_SYS_ADMIN
            self.no_netns = self._netns.stderr.read().decode(errors="replace").strip() or "unshare --net failed"
            self._netns.wait(5)
            self._netns = None  # the machine's loopback then, as slow as it is

    def _spawn(self, name: str, args: list[str]) -> None:
        """Start a daemon in the foreground (daemonized, 22.05's slurmctld dies on its first association update
        from slurmdbd); its output goes to log/<name>.out. stop() ends it by its pid."""
        out = open(self.root / "log" / f"{name}.out", "ab")
        try:
            proc = subprocess.Popen([*self.in_netns, *args], stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=self.env(), start_new_session=True)
        finally:
            out.close()
        self._procs.append((name, proc))

    def _munge(self) -> None:
        MUNGE_SOCKET.parent.mkdir(parents=True, exist_ok=True)
        MUNGE_SOCKET.parent.chmod(0o755)
        if subprocess.run(["munge", "-n"], capture_output=True).returncode == 0:
            return  # a munged already answers on the default socket (this machine's): use it
        key = self.root / "etc" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self._spawn("munged", ["munged", "--foreground", "--force", f"--key-file={key}",
                               f"--pid-file={self.root / 'state' / 'munged.pid'}",
                               f"--log-file={self.root / 'log' / 'munged.log'}",
                               f"--seed-file={self.root / 'state' / 'seed'}"])
        self._own_munged = True
        _wait("munged", lambda: subprocess.run(["munge", "-n"], capture_output=True).returncode == 0, 10)

    def _mariadb(self, port: int) -> None:
        # A data directory of its own (slurmdbd needs the system tables: it creates stored procedures), served on
        # 127.0.0.1 at a free port; root connects without a password, only from this machine.
        data = self.root / "db" / "data"
        log = self.root / "log" / "mariadb.log"
        innodb = ["--innodb-buffer-pool-size=64M", "--innodb-log-file-size=8M"]
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}", "--user=root",
                        "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve", *innodb],
                       check=True, capture_output=True, timeout=120)
        self._spawn("mariadbd", [
            "mariadbd", "--no-defaults", f"--datadir={data}", "--user=root",
            f"--socket={self.root / 'db' / 'mysqld.sock'}", f"--pid-file={self.root / 'db' / 'mariadbd.pid'}",
            f"--port={port}", "--bind-address=127.0.0.1", "--skip-name-resolve", "--skip-log-bin",
            f"--log-error={log}", *innodb, "--innodb-lock-wait-timeout=900", "--innodb-flush-log-at-trx-commit=0"])
        ping = [*self.in_netns, "mariadb", "--no-defaults", "-h127.0.0.1", f"-P{port}", "-uroot", "-e", "SELECT 1"]
        _wait("MariaDB", lambda: subprocess.run(ping, capture_output=True).returncode == 0, 20, log)

    def _write_conf(self, ports: dict[str, int]) -> None:
        host = socket.gethostname().split(".")[0]
        r = self.root
        dbd = f"""\
AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort={ports['dbd']}
SlurmUser=root
LogFile={r}/log/slurmdbd.log
PidFile={r}/state/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={ports['db']}
StorageUser=root
StorageLoc=slurm_acct_db
"""
        (self.etc / "slurmdbd.conf").write_text(dbd)
        (self.etc / "slurmdbd.conf").chmod(0o600)
        gpus = []
        for i in range(GPUS_PER_NODE):
            dev = r / "dev" / f"gpu{i}"
            subprocess.run(["mknod", str(dev), "c", "1", "3"], check=True)  # /dev/null's numbers
            gpus.append(dev)
        (self.etc / "gres.conf").write_text(f"Name=gpu File={r}/dev/gpu[0-{GPUS_PER_NODE - 1}]\n")
        node_lines = "\n".join(
            f"NodeName={n} NodeHostname={host} NodeAddr=127.0.0.1 Port={ports[n]} CPUs={CPUS_PER_NODE} "
            f"Gres=gpu:{GPUS_PER_NODE} State=UNKNOWN" for n in self.nodes)
        partition_lines = "\n".join(f"PartitionName={p} Nodes={','.join(ns)} MaxTime=INFINITE State=UP"
                                    for p, ns in sorted(self.partitions.items()))
        conf = f"""\
ClusterName={CLUSTER}
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ports['ctld']}
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool/%n
SlurmctldPidFile={r}/state/slurmctld.pid
SlurmdPidFile={r}/state/slurmd-%n.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort={ports['dbd']}
JobAcctGatherType=jobacct_gather/none
GresTypes=gpu
{node_lines}
# HyperPod adds every node to its own partition 'dev'
PartitionName=dev Nodes=ALL Default=YES MaxTime=INFINITE State=UP
{partition_lines}
Include {self.include_conf}
"""
        self.conf.write_text(conf)
        self.include_conf.write_text("# included by slurm.conf, as HyperPod's accounting.conf\n")
        # What apply.sh runs to restart slurmctld (HPG_SLURMCTLD_RESTART): stop it by its pid file, start it again.
        self.restart_script.write_text(f"""#!/bin/bash
set -eu
pidfile={self.ctld_pidfile}
if [ -s "$pidfile" ]; then
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 200); do
    state=$(awk '{{print $3}}' "/proc/$pid/stat" 2>/dev/null) || break
    [ "$state" = Z ] && break
    sleep 0.05
  done
  rm -f "$pidfile"
fi
echo restart >> {r}/state/restarts
SLURM_CONF={self.conf} setsid -f slurmctld -D < /dev/null >> {r}/log/slurmctld.out 2>&1
for _ in $(seq 200); do [ -s "$pidfile" ] && exit 0; sleep 0.05; done
echo "slurmctld wrote no pid file" >&2; exit 1
""")
        self.restart_script.chmod(0o755)

    def _slurmdbd(self) -> None:
        self._spawn("slurmdbd", ["slurmdbd", "-D"])
        _wait("slurmdbd", lambda: self.run("sacctmgr", "-n", "show", "cluster").ok, 30,
              self.root / "log" / "slurmdbd.log")

    def _slurmctld(self) -> None:
        subprocess.run([*self.in_netns, str(self.restart_script)], check=True, timeout=30, capture_output=True)
        _wait("slurmctld", lambda: self.run("scontrol", "ping").stdout.count("UP") > 0, 30,
              self.root / "log" / "slurmctld.log")

    def _slurmds(self) -> None:
        for n in self.nodes:
            (self.root / "spool" / n).mkdir(exist_ok=True)
            self._spawn(f"slurmd-{n}", ["slurmd", "-D", "-N", n])
        self.wait_nodes_up()

    def wait_nodes_up(self, timeout: float = 30) -> None:
        """Wait until every node has registered and may run jobs (idle, or running the jobs it had)."""
        def up() -> bool:
            states = self.run("sinfo", "-h", "-N", "-p", "dev", "-o", "%N %t").stdout.splitlines()
            return sum(1 for line in states if line.split()[1:2] in (["idle"], ["mix"], ["alloc"])) == len(self.nodes)

        _wait("every slurmd", up, timeout, self.root / "log" / "slurmctld.log")

    @property
    def restarts(self) -> int:
        """How often slurmctld was (re)started through the restart script."""
        path = self.root / "state" / "restarts"
        return len(path.read_text().split()) if path.exists() else 0

    def apply(self, rendered: dict[str, str], **env: str) -> Result:
        """Write rendered governance files (``render.files``) to a directory and run its apply.sh against this
        cluster, with the paths given the way apply.sh takes them (environment variables)."""
        out = self.root / "governance"
        for rel, text in rendered.items():
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (self.root / "fsxroot" / "fsx").mkdir(parents=True, exist_ok=True)
        return self.run("bash", str(out / "apply.sh"), timeout=120, env={
            "HPG_SLURM_PREFIX": "/usr", "HPG_SLURM_CONF": str(self.conf), "HPG_SLURM_INCLUDE": str(self.include_conf),
            "HPG_SLURM_PARTITIONS_FILE": str(self.conf), "HPG_SLURMCTLD_RESTART": str(self.restart_script),
            "HPG_SLURMDBD_WAIT": "30", "HPG_POSIX_ROOT": str(self.root / "fsxroot"), **env})

    @staticmethod
    def _alive(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False

    def _stop_ctld(self) -> None:
        try:
            pid = int(self.ctld_pidfile.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 10
        while self._alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if self._alive(pid):
            os.kill(pid, signal.SIGKILL)

    @staticmethod
    def _end(proc: subprocess.Popen, timeout: float = 10) -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def restart_controller(self) -> None:
        """Restart slurmctld and every slurmd (settings like PreemptType and GresTypes are read at start only)."""
        for name, proc in [p for p in self._procs if p[0].startswith("slurmd-")]:
            self._end(proc)
            self._procs.remove((name, proc))
        self._stop_ctld()
        self._slurmctld()
        self._slurmds()

    def _job_pids(self) -> list[int]:
        """Processes of this cluster's jobs (slurmstepd and job scripts carry its SLURM_CONF)."""
        mark = f"SLURM_CONF={self.conf}".encode()
        pids = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if mark in (entry / "environ").read_bytes().split(b"\0"):
                        pids.append(int(entry.name))
                except OSError:
                    continue
        own = {p.pid for _, p in self._procs} | {os.getpid()}
        return [p for p in pids if p not in own]

    def stop(self) -> None:
        """Cancel every job, stop every daemon this harness started (by pid, newest first), remove its users."""
        try:
            self.cancel_all()
        except Exception:  # the daemons may be half up; stopping them matters more
            pass
        for name, proc in reversed(self._procs):  # every slurmd, slurmctld, slurmdbd, MariaDB, munged
            if name == "slurmdbd":
                self._stop_ctld()
            self._end(proc)
        self._stop_ctld()
        self._procs.clear()
        if self._netns is not None:  # the namespace goes with its last process
            self._end(self._netns)
            self._netns = None
        for pid in self._job_pids():  # a job whose slurmd went first
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for name in self.users:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
        for name in self.groups:
            subprocess.run(["groupdel", name], capture_output=True)
        self.users.clear()
        self.groups.clear()
        shutil.rmtree(self.root, ignore_errors=True)
