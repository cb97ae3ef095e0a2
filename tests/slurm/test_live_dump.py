"""``dump.py`` on what the real daemons write: ``sacctmgr dump`` and ``sacctmgr -P show qos`` of the governed
harness cluster read back as exactly ``desired(plan)``, and a change made by hand shows in the dump as the command
accounting.sh runs to undo it."""

from __future__ import annotations

from hyperpod_gov.slurm.dump import QOS_FORMAT, governed as governed_part, live_state, parse_dump
from hyperpod_gov.slurm.model import desired
from hyperpod_gov.slurm.render import changes, files

from .harness import CLUSTER
from .live_spec import ORG


def _live(cluster):
    dump = cluster.root / "accounting.cfg"
    cluster.run("sacctmgr", "-i", "dump", CLUSTER, f"file={dump}").check()
    qos = cluster.run("sacctmgr", "-P", "show", "qos", f"format={QOS_FORMAT}").check().stdout
    return live_state(dump.read_text(), qos), dump.read_text()


def test_the_dump_of_the_governed_cluster_reads_back_as_the_desired_state(governed):
    cluster, plan, _ = governed
    live, text = _live(cluster)
    want = desired(plan)
    mine = governed_part(live, ORG)
    assert live.cluster == want.cluster == CLUSTER
    assert sorted(mine.accounts) == sorted(want.accounts)
    assert mine.users == want.users
    assert mine.qos == want.qos
    assert changes(mine, want) == []
    assert "QOS - " not in text  # 22.05's dump has no QOS lines: they come from show qos
    assert {a.name for a in parse_dump(text).accounts} - {a.name for a in mine.accounts} == set()  # root is not one


def test_a_change_by_hand_shows_in_the_dump_as_the_command_accounting_sh_runs_to_undo_it(governed):
    cluster, plan, _ = governed
    cluster.sacctmgr("-i", "modify", "account", "where", "name=vision_gpu", f"cluster={CLUSTER}", "set",
                     "GrpTRES=node=2", "Fairshare=7")
    cluster.sacctmgr("-i", "modify", "qos", "where", "name=urgent", "set", "Priority=5")
    live, _ = _live(cluster)
    drifted = governed_part(live, ORG)
    assert drifted.account("vision_gpu").grp_tres == (("node", 2),)
    assert drifted.qos_named("urgent").priority == 5
    expected = changes(drifted, desired(plan))
    assert expected == [
        "sacctmgr -i modify qos where name=urgent set Priority=100",
        f"sacctmgr -i modify account where name=vision_gpu cluster={CLUSTER} set Fairshare=1 GrpTRES=node=1",
    ]
    result = cluster.apply(files(plan), HPG_POSIX="0")
    assert result.ok, result.stdout + result.stderr
    ran = [line[2:] for line in result.stdout.splitlines() if line.startswith("+ ")]
    assert ran == expected
    assert changes(governed_part(_live(cluster)[0], ORG), desired(plan)) == []

