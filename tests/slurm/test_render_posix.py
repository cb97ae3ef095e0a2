"""posix.sh with stand-ins for the account tools (getent, groupadd, useradd, usermod, id, chgrp, stat): it creates
what is missing with the spec's ids, leaves what is right alone, refuses to renumber, and never deletes."""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
from pathlib import Path

import pytest

from hyperpod_gov.slurm.model import DataDir, desired
from hyperpod_gov.slurm.posix_sh import posix_sh
from hyperpod_gov.slurm.render import files

from .spec_fixtures import plan_of, slurm_base

# Each stand-in keeps its state in $FAKE (passwd and group in /etc's format, the groups chgrp gave) and logs its
# call to $FAKE/log.
TOOLS = {
    "getent": r'''db=$1; name=$2; grep "^$name:" "$FAKE/$db" || exit 2''',
    "groupadd": r'''echo "groupadd $*" >> "$FAKE/log"; echo "$3::$2:" >> "$FAKE/group"''',
    "useradd": r'''echo "useradd $*" >> "$FAKE/log"; name=${@: -1}
uid=$(echo "$*" | sed 's/.*-u \([0-9]*\).*/\1/'); echo "$name:x:$uid:0::/home/$name:/bin/bash" >> "$FAKE/passwd"
for g in $(echo "$*" | sed -n 's/.*-g \([^ ]*\).*/\1/p') $(echo "$*" | sed -n 's/.*-G \([^ ]*\).*/\1/p' | tr , ' '); do
  sed -i "s/^\($g:[^:]*:[^:]*:\)\(.*\)$/\1\2,$name/; s/:,/:/" "$FAKE/group"; done''',
    "usermod": r'''echo "usermod $*" >> "$FAKE/log"; g=$2; name=$3
sed -i "s/^\($g:[^:]*:[^:]*:\)\(.*\)$/\1\2,$name/; s/:,/:/" "$FAKE/group"''',
    "id": r'''grep -E "[:,]$2(,|$)" "$FAKE/group" | cut -d: -f1 | paste -sd' ' -''',
    "chgrp": r'''echo "chgrp $*" >> "$FAKE/log"; echo "$1 $2" >> "$FAKE/chgrp"''',
    "stat": r'''g=$(grep " $3$" "$FAKE/chgrp" | tail -n 1 | cut -d' ' -f1); m=$(/usr/bin/stat -c %a "$3"); echo "${g:-root} $m"''',
}


def _posix(tmp_path: Path, data: dict, passwd: str = "", group: str = "", *, mounted: bool = True,
           text: str = "") -> tuple[int, str, list[str]]:
    """Run posix.sh of ``data`` (or ``text``) under $HPG_POSIX_ROOT = tmp_path/root, /fsx there when ``mounted``."""
    fake, bin_, root = tmp_path / "fake", tmp_path / "bin", tmp_path / "root"
    for d in (fake, bin_, *([root / "fsx"] if mounted else [root])):
        d.mkdir(parents=True, exist_ok=True)
    (fake / "passwd").write_text(passwd)
    (fake / "group").write_text(group)
    for name, body in TOOLS.items():
        tool = bin_ / name
        tool.write_text("#!/bin/bash\n" + body + "\n")
        tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    script = tmp_path / "posix.sh"
    script.write_text(text or files(plan_of(data))["posix.sh"])
    env = {**os.environ, "PATH": f"{bin_}:{os.environ['PATH']}", "FAKE": str(fake), "HPG_POSIX_ROOT": str(root)}
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=20)
    log = (fake / "log").read_text().splitlines() if (fake / "log").exists() else []
    (fake / "log").unlink(missing_ok=True)
    return p.returncode, p.stdout + p.stderr, log


def test_a_fresh_node_gets_the_groups_users_and_directories_with_the_spec_ids(tmp_path):
    state = desired(plan_of(slurm_base()))
    gid = {g.name: g.gid for g in state.groups}
    uid = {u.name: u.uid for u in state.posix_users}
    rc, out, log = _posix(tmp_path, slurm_base())
    assert rc == 0, out
    root = tmp_path / "root"
    assert log == [
        f"groupadd -g {gid['team-a']} team-a", f"groupadd -g {gid['team-b-users']} team-b-users",
        f"useradd -m -s /bin/bash -u {uid['alice']} -g team-a alice",
        f"useradd -m -s /bin/bash -u {uid['bob']} -g team-a bob",
        f"useradd -m -s /bin/bash -u {uid['carol']} -g team-b-users carol",
        f"chgrp team-b-users {root}/fsx/data/team-b", f"chgrp team-a {root}/fsx/team-a"]
    assert oct((root / "fsx" / "team-a").stat().st_mode & 0o7777) == "0o2770"


def test_a_second_run_changes_nothing(tmp_path):
    _posix(tmp_path, slurm_base())
    rc, out, log = _posix(tmp_path, slurm_base(), (tmp_path / "fake" / "passwd").read_text(),
                          (tmp_path / "fake" / "group").read_text())
    assert (rc, log) == (0, []), out
    assert "POSIX identities: as the spec says" in out


def test_a_user_with_another_uid_is_left_alone_and_fails_the_run(tmp_path):
    rc, out, log = _posix(tmp_path, slurm_base(), passwd="alice:x:1001:1001::/home/alice:/bin/bash\n")
    state = desired(plan_of(slurm_base()))
    want = next(u.uid for u in state.posix_users if u.name == "alice")
    assert rc == 1
    assert f"user alice has uid 1001, the spec derives {want}: left as it is" in out
    assert not any(line.startswith("useradd") and line.endswith(" alice") for line in log)


def test_an_existing_user_joins_a_new_teams_group(tmp_path):
    _posix(tmp_path, slurm_base())
    data = slurm_base()
    data["teams"][1]["slurm"]["users"] = ["carol", "alice"]
    rc, out, log = _posix(tmp_path, data, (tmp_path / "fake" / "passwd").read_text(),
                          (tmp_path / "fake" / "group").read_text())
    assert (rc, log) == (0, ["usermod -aG team-b-users alice"]), out


def test_directories_are_skipped_where_the_shared_file_system_is_not_mounted(tmp_path):
    rc, out, log = _posix(tmp_path, slurm_base(), mounted=False)
    assert rc == 0 and f"skipped {tmp_path}/root/fsx/team-a: {tmp_path}/root/fsx is not mounted here" in out
    assert not (tmp_path / "root" / "fsx").exists()
    assert not any(line.startswith("chgrp") for line in log)


# --- defence in depth (issue 55): the script refuses a data directory the spec would refuse -----------------------

def _script_with_dirs(*paths: str) -> str:
    """posix.sh of the base spec with its data directories replaced by ``paths`` (team-a's group), as a spec that
    slipped past validation (or an edited plan) would render it."""
    plan = plan_of(slurm_base())
    state = desired(plan)
    state = dataclasses.replace(state, data_dirs=tuple(DataDir(p, "team-a") for p in paths))
    return posix_sh(plan.slurm, state)


@pytest.mark.parametrize("path", ["/etc/sudoers.d", "/root/.ssh", "/opt/slurm/etc", "/usr/local/bin", "/fsx",
                                  "/fsx/../etc", "/fsx/./team-a", "/fsx//team-a", "/fsx/team-a/", "/fsx/.lustre",
                                  "/fsxdata/team-a", "/fsx/team a"])
def test_the_script_refuses_a_directory_outside_the_mount_point(tmp_path, path):
    (tmp_path / "root" / "etc").mkdir(parents=True)
    rc, out, log = _posix(tmp_path, {}, text=_script_with_dirs(path))
    assert rc == 1, out
    assert "refused" in out and "1 problems" in out
    assert not any(line.startswith("chgrp") for line in log)
    assert sorted(p.name for p in (tmp_path / "root").iterdir()) == ["etc", "fsx"]  # nothing made elsewhere
    assert list((tmp_path / "root" / "fsx").iterdir()) == []


def test_the_script_refuses_a_symbolic_link_out_of_the_mount_point(tmp_path):
    outside = tmp_path / "root" / "etc" / "sudoers.d"
    outside.mkdir(parents=True)
    (tmp_path / "root" / "fsx").mkdir(parents=True)
    (tmp_path / "root" / "fsx" / "team-a").symlink_to(outside)  # a team member's link, say, where a directory goes
    rc, out, log = _posix(tmp_path, {}, text=_script_with_dirs("/fsx/team-a", "/fsx/team-a/sub"))
    assert rc == 1 and out.count("(a symbolic link on the way)") == 2, out
    assert not any(line.startswith("chgrp") for line in log)
    assert list(outside.iterdir()) == [] and oct(outside.stat().st_mode & 0o7777) != "0o2770"


def test_the_script_still_makes_a_nested_directory_below_the_mount_point(tmp_path):
    rc, out, log = _posix(tmp_path, {}, text=_script_with_dirs("/fsx/projects/team-a"))
    assert rc == 0, out
    assert log[-1] == f"chgrp team-a {tmp_path}/root/fsx/projects/team-a"
