"""The contract record and the review page of a Slurm cluster: Slurm terms (account, sub-accounts, GrpTRES, QOS,
POSIX users, data path), none of the EKS ones (namespace, queue, access entry, Pod Identity)."""

from __future__ import annotations

import pytest

from hyperpod_gov.contracts import render_records
from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import load_spec
from tests.conftest import EXAMPLES, TODAY

EKS_TERMS = ("namespace", "Namespace", "LocalQueue", "ClusterQueue", "ComputeQuota", "EKS", "Kubernetes",
             "Pod Identity", "access entry", "Cohort", "kubeconfig")


@pytest.fixture(scope="module")
def pages():
    return {name: render_records(build_plan(load_spec(EXAMPLES / f"{name}.yaml", today=TODAY)))
            for name in ("startup-slurm", "enterprise-slurm")}


def test_a_borrowing_team_page_names_its_account_guarantee_and_borrow_cap(pages):
    page = pages["startup-slurm"]["ml-engineering.md"]
    for text in (
        "| Orchestrator | Slurm (HyperPod SlurmConfigStrategy Managed)",
        "| Accounting database | the controller's own MariaDB |",
        "| Account | `ml-engineering` (Fairshare 100) |",
        "| `g5` | `ml-engineering_g5` | GrpTRES node=6 | QOS `ml-engineering_g5_borrow` up to GrpTRES node=3, under "
        "account `ml-engineering_g5_borrow` (not counted against the guarantee),",
        "| Owns | 6 GPUs (ml.g5.2xlarge) |",
        "POSIX users of group `ml-engineering`", "`alice`, `bob`",
        "- `/fsx/ml-engineering` on the shared file system: owned by group `ml-engineering`, mode 2770",
        "Slurm has no per-team network isolation",
        "None: hyperpod-gov's alarms watch Kueue metrics",
    ):
        assert text in page, text


def test_a_dont_lend_team_page_says_it_borrows_nothing(pages):
    page = pages["startup-slurm"]["chatbot.md"]
    assert "| `g5` | `chatbot_g5` | GrpTRES node=4 | none |" in page


def test_an_external_database_and_a_custom_group_and_path_show_on_the_page(pages):
    page = pages["enterprise-slurm"]["applied-research.md"]
    assert "slurm-acct.cluster-c1a2b3c4d5e6.us-east-1.rds.amazonaws.com" in page
    assert "`/fsx/research/applied`" in page
    assert "SlurmConfigStrategy Merge" in pages["enterprise-slurm"]["foundation-models.md"]
    assert "group `fm`" in pages["enterprise-slurm"]["foundation-models.md"]


@pytest.mark.parametrize("example", ["startup-slurm", "enterprise-slurm"])
def test_no_page_of_a_slurm_cluster_uses_eks_terms(pages, example):
    for name, page in pages[example].items():
        found = [term for term in EKS_TERMS if term in page]
        assert not found, (name, found)


def test_the_review_page_of_a_slurm_spec_shows_accounts_and_partitions(tmp_path):
    from hyperpod_gov.review_pack.page import Inputs, write_pack

    plan = build_plan(load_spec(EXAMPLES / "enterprise-slurm.yaml", today=TODAY))
    write_pack(Inputs(plan=plan, spec="enterprise-slurm.yaml", today=TODAY), tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert "Slurm accounts, QOS and partitions" in page and "Slurm (Merge slurm.conf)" in page
    assert "foundation-models_p5" in page and "gres/gpu=20" in page
    assert "Slurm partition p5" in page
    assert "mode" not in page.split("<p class=\"meta\">")[1].split("</p>")[0]  # no Kueue scheduler mode
    summary = (tmp_path / "summary.md").read_text()
    assert "AllowAccounts" in summary


def test_review_pack_refuses_a_trace_for_a_slurm_spec(tmp_path):
    import io

    from tests.review_pack.conftest import TRACE, pack_args
    from hyperpod_gov.review_pack.cli import run

    err = io.StringIO()
    code = run(pack_args(EXAMPLES / "startup-slurm.yaml", tmp_path, "--trace", str(TRACE)), err=err)
    assert code == 1 and "--trace: the simulator models Kueue, not Slurm" in err.getvalue()
