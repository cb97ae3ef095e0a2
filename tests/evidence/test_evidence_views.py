"""monitoring.evidence reaches diff (and so explain's rows): the bucket, its retention, its auditors."""

from __future__ import annotations

import yaml

from hyperpod_gov.cli import main
from hyperpod_gov.spec import read_yaml
from tests.conftest import EXAMPLES

AUDITOR = "arn:aws:iam::111122223333:role/Auditor"


def test_diff_names_the_bucket_its_retention_and_a_new_auditor_as_widening_privilege(tmp_path, capsys):
    data = read_yaml(str(EXAMPLES / "startup.yaml"))
    data.setdefault("monitoring", {})["evidence"] = {"bucket": "create", "retentionDays": 400, "auditors": [AUDITOR]}
    new = tmp_path / "with-evidence.yaml"
    new.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["diff", str(EXAMPLES / "startup.yaml"), str(new), "--governance-only"]) == 0
    out = capsys.readouterr().out
    assert "evidence bucket: none -> create (S3 Object Lock, governance mode)" in out
    assert "evidence retention: - -> 400 days" in out
    assert AUDITOR in out and "privilege" in out


def test_the_contract_record_names_where_evidence_lives_only_when_the_spec_keeps_it():
    from hyperpod_gov.contracts.record import render_records
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.spec import parse_spec
    from tests.conftest import TODAY

    data = read_yaml(str(EXAMPLES / "startup.yaml"))
    assert all("## Evidence" not in page for page in render_records(build_plan(parse_spec(data, today=TODAY))).values())
    data.setdefault("monitoring", {})["evidence"] = {"bucket": "create", "retentionDays": 400}
    pages = render_records(build_plan(parse_spec(data, today=TODAY)))
    assert all("S3 bucket named by output EvidenceBucketName of stack startup-monitoring (Object Lock, governance "
               "mode, 400 days)" in page for page in pages.values())
