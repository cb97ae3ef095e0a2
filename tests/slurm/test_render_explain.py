"""explain, diff and the simulator for Slurm specs: accounts, QOS, limits, partitions and fidelity in explain; the
exact sacctmgr changes in diff; the simulator's refusal."""

from __future__ import annotations

import yaml

from hyperpod_gov.cli import main
from hyperpod_gov.diff import governance_diff
from hyperpod_gov.explain import SLURM_MAPPING, explain

from .spec_fixtures import plan_of, slurm_base


def test_explain_shows_the_slurm_accounts_limits_qos_and_partitions():
    text = explain(plan_of(slurm_base()))
    flat = " ".join(text.split())
    assert "Slurm orchestrator (configStrategy Merge" in text
    assert "Organisation account: acme (under root); work without a class runs in QOS acme_standard" in text
    table = [line.split() for line in text.splitlines() if line.startswith("team-")]
    assert ["team-a", "team-a,", "team-a_p5,", "team-a_p5_borrow", "40", "p5", "node=2"] in table
    assert ["team-a", "p5", "node=1", "alice,", "bob", "team-a", "/fsx/team-a"] in table  # second part (100 columns)
    assert "  team-a_p5_borrow: priority 0, GrpTRES=node=1, requeued when preempted, NoReserve" in text
    assert "  urgent: priority 100, preempts team-a_p5_borrow" in text
    assert "cpu: 8 x ml.c5.4xlarge; AllowAccounts=team-b_cpu; AllowQos=acme_standard,training,urgent" in flat
    assert "p5: 4 x ml.p5.48xlarge; AllowAccounts=team-a_p5,team-a_p5_borrow,team-b_p5; " in flat


def test_explain_states_every_mappings_fidelity_and_this_specs_approximations():
    data = slurm_base()
    data["teams"][1]["fairShareWeight"] = 0
    text = " ".join(explain(plan_of(data)).split())
    for concept, slurm, fidelity in SLURM_MAPPING:
        assert f"{concept} -> {slurm}: {fidelity}" in text
    assert "team-a: borrowing 50% of its quota becomes a fixed cap of node=1 on p5 (HPG-S009)" in text
    assert "team-b: fair-share weight 0 becomes Fairshare=1 (HPG-S010)" in text


def test_explain_of_an_eks_spec_has_no_slurm_section(base):
    text = explain(plan_of(base))
    assert "Slurm" not in text and "NAMESPACE" in text


def test_diff_lists_the_exact_sacctmgr_commands_of_a_spec_change():
    new = slurm_base()
    new["teams"][0]["slurm"]["users"].append("dave")
    new["teams"][1]["fairShareWeight"] = 70
    lines = governance_diff(plan_of(slurm_base()), plan_of(new))
    assert [line for line in lines if "accounting:" in line] == [
        "slurm accounting: sacctmgr -i modify account where name=team-b cluster=ml set Fairshare=70",
        "slurm accounting: sacctmgr -i add user dave Cluster=ml Account=team-a_p5",
        "slurm accounting: sacctmgr -i add user dave Cluster=ml Account=team-a_p5_borrow",
    ]
    assert "team team-a (Slurm) users: + dave (privilege: may submit under the team's accounts and read and write " \
           "its data directory)" in lines


def test_diff_of_an_unchanged_slurm_spec_is_empty():
    assert governance_diff(plan_of(slurm_base()), plan_of(slurm_base())) == []


def test_diff_marks_a_partition_opened_to_another_account_as_privilege():
    new = slurm_base()
    new["teams"][0]["quota"].append({"instanceType": "ml.c5.4xlarge", "vcpu": 16, "memoryGib": 32})
    lines = governance_diff(plan_of(slurm_base()), plan_of(new))
    opened = [line for line in lines if line.startswith("slurm partition: + cpu")]
    assert len(opened) == 1 and "AllowAccounts=team-a_cpu,team-a_cpu_borrow,team-b_cpu" in opened[0] and "(privilege: " in opened[0]


def test_diff_from_eks_to_slurm_names_the_orchestrator(base):
    lines = governance_diff(plan_of(base), plan_of(slurm_base()))
    assert "slurm orchestrator: eks -> slurm" in lines
    assert any(line.startswith("slurm accounting: sacctmgr -i add account acme ") for line in lines)


def test_the_simulator_refuses_a_slurm_spec(tmp_path, capsys):
    spec = tmp_path / "slurm.yaml"
    spec.write_text(yaml.safe_dump(slurm_base()))
    trace = tmp_path / "trace.csv"
    trace.write_text("")
    assert main(["simulate", str(spec), "--trace", str(trace)]) == 1
    err = capsys.readouterr().err
    assert "cluster.orchestrator: the simulator models Kueue; Slurm specs are not simulated ('slurm')" in err


def test_diff_with_a_trace_refuses_a_slurm_spec(tmp_path, capsys):
    spec = tmp_path / "slurm.yaml"
    spec.write_text(yaml.safe_dump(slurm_base()))
    assert main(["diff", str(spec), str(spec), "--trace", "t.csv", "--governance-only"]) == 1
    assert "--trace: the simulator models Kueue; Slurm specs are not simulated" in capsys.readouterr().err
