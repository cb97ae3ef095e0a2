"""``dump.py`` on inputs the real daemons do not write in the live tests: quoting, units, paused teams, QOS lines
of newer releases, headerless QOS listings, and bad input as path, problem and the command to run instead."""

from __future__ import annotations

import pytest

from hyperpod_gov.slurm.dump import DumpError, governed, parse_dump, parse_qos, tres
from hyperpod_gov.slurm.model import Account, Qos, User

DUMP = """\
# comment lines as sacctmgr writes them
Cluster - 'ml':Fairshare=1:QOS='normal'
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
Account - 'acme':Description='acme: hyperpod-gov organisation':Organization='acme':DefaultQOS='acme_standard':Fairshare=1:QOS='urgent,acme_standard'
Account - 'other':Description='someone else':Organization='other':Fairshare=3
Parent - 'acme'
Account - 'team-a':Description='acme: team team-a':Organization='acme':Fairshare=40:GrpJobs=0:QOS='acme_standard'
Parent - 'team-a'
Account - 'team-a_cpu':Description='acme: team team-a on partition cpu':Organization='acme':GrpTRES=cpu=32,mem=64G,node=-1
Parent - 'team-a_cpu'
User - 'alice':DefaultAccount='team-a_cpu':Fairshare=1
Parent - 'other'
User - 'zed':DefaultAccount='other'
QOS - 'team-a_cpu_borrow':Description='acme: team-a borrowing on cpu':Priority=0:GrpTRES=cpu=16:PreemptMode=requeue:Flags=NoReserve
"""


def test_a_dump_reads_as_accounts_users_and_qos_with_colons_inside_quotes():
    state = parse_dump(DUMP)
    assert state.cluster == "ml"
    assert [a.name for a in state.accounts] == ["acme", "other", "team-a", "team-a_cpu"]  # parents first
    assert state.account("acme") == Account("acme", "root", "acme: hyperpod-gov organisation", "acme", 1,
                                            qos=("acme_standard", "urgent"), default_qos="acme_standard")
    assert state.account("team-a").grp_jobs == 0  # a paused team
    assert state.account("team-a_cpu").grp_tres == (("cpu", 32), ("mem", 65536))  # G in MiB, -1 dropped
    assert state.users == (User("alice", "team-a_cpu", "team-a_cpu"), User("root", "root", "root"),
                           User("zed", "other", "other"))
    assert state.qos == (Qos("team-a_cpu_borrow", "acme: team-a borrowing on cpu", 0, (("cpu", 16),), (),
                             "REQUEUE", ("NoReserve",)),)


def test_governed_keeps_the_organisations_tree_and_its_own_qos_only():
    mine = governed(parse_dump(DUMP), "acme")
    assert [a.name for a in mine.accounts] == ["acme", "team-a", "team-a_cpu"]
    assert [u.name for u in mine.users] == ["alice"]
    assert [q.name for q in mine.qos] == ["team-a_cpu_borrow"]
    assert governed(parse_dump(DUMP), "team-a").accounts == ()  # not an organisation: not under root


def test_show_qos_reads_with_its_header_in_any_column_order_or_headerless_in_the_documented_format():
    with_header = "Name|Priority|Descr|Flags|GrpTRES|Preempt|PreemptMode\nurgent|100|acme: urgent||||cluster\n"
    headerless = "urgent|acme: urgent|100|||cluster|\n"
    assert parse_qos(with_header) == parse_qos(headerless) == (Qos("urgent", "acme: urgent", 100),)
    assert parse_qos("urgent|acme: x|100|node=2,gres/gpu=8|b,a|requeue|NoReserve,DenyOnLimit|\n")[0] == Qos(
        "urgent", "acme: x", 100, (("gres/gpu", 8), ("node", 2)), ("a", "b"), "REQUEUE", ("DenyOnLimit", "NoReserve"))


@pytest.mark.parametrize("text, problem", [
    ("Parent - 'root'\n", "no 'Cluster - ' line"),
    ("Cluster - 'ml'\nAccount - 'a':Fairshare=1\n", "comes before any 'Parent - ' line"),
    ("Cluster - 'ml'\nParent - 'root'\nAccount - 'a':Description='open\n", "unbalanced quote"),
    ("Cluster - 'ml'\nParent - 'root'\nAccount - 'a':Fairshare=lots\n", "Fairshare='lots' is not a number"),
    ("Cluster - 'ml'\nsomething else\n", "is not a line of a sacctmgr dump"),
    ("Cluster - 'ml'\nCluster - 'other'\n", "a second cluster"),
])
def test_a_dump_it_cannot_read_names_the_line_the_problem_and_the_command(text, problem):
    with pytest.raises(DumpError) as info:
        parse_dump(text, "accounting.cfg")
    assert problem.lower() in info.value.problem.lower()
    assert str(info.value).startswith("accounting.cfg:")
    assert "sacctmgr" in info.value.fix or "one cluster" in info.value.fix


def test_a_qos_listing_in_another_format_is_refused_with_the_command_to_run():
    default_columns = "normal|0|00:00:00|||cluster|||1.000000|||||||||||||||||\n"  # sacctmgr -nP show qos
    with pytest.raises(DumpError) as info:
        parse_qos(default_columns, "qos.txt")
    assert "format=name,description,priority,grptres,preempt,preemptmode,flags" in info.value.fix


def test_tres_amounts_with_units_are_megabytes():
    assert tres("mem=1T,cpu=4,gres/gpu=-1") == (("cpu", 4), ("mem", 1048576))
