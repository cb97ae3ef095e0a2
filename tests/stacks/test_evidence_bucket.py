"""monitoring.evidence in the templates: the evidence bucket with Object Lock (governance mode, the days given),
versioning, its own KMS key, TLS only, access logs, public access blocked; s3:PutObject for the pipeline's deploy
role only, reads for the auditors; cfn-lint clean, cdk-nag clean (synth fails on an unacknowledged finding)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY
from tests.synth_helpers import cfn_lint, resources, synthesize

AUDITOR = "arn:aws:iam::111111111111:role/Auditor"
DEPLOY_ROLE = "arn:aws:iam::111111111111:role/cdk-hnb659fds-deploy-role-111111111111-us-east-1"


def evidence_spec() -> dict:
    d = copy.deepcopy(BASE)
    d["monitoring"] = {"evidence": {"bucket": "create", "retentionDays": 400, "auditors": [AUDITOR]}}
    return d


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    return synthesize(parse_spec(evidence_spec(), today=TODAY), tmp_path_factory.mktemp("evidence"))


def _evidence_bucket(template: dict) -> tuple[str, dict]:
    (found,) = [(lid, b) for lid, b in resources(template, "AWS::S3::Bucket")
                if b.get("ObjectLockEnabled")]
    return found


def _policy_of(template: dict, bucket_lid: str) -> list[dict]:
    (policy,) = [p for _, p in resources(template, "AWS::S3::BucketPolicy") if p["Bucket"] == {"Ref": bucket_lid}]
    return policy["PolicyDocument"]["Statement"]


def test_object_lock_in_governance_mode_for_the_days_given_versioned_and_private(synth):
    lid, bucket = _evidence_bucket(synth.template("monitoring"))
    assert bucket["ObjectLockEnabled"] is True
    assert bucket["ObjectLockConfiguration"] == {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {
        "Mode": "GOVERNANCE", "Days": 400}}}
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
    assert bucket["PublicAccessBlockConfiguration"] == {"BlockPublicAcls": True, "BlockPublicPolicy": True,
                                                        "IgnorePublicAcls": True, "RestrictPublicBuckets": True}
    assert bucket["LoggingConfiguration"]["DestinationBucketName"]["Ref"] != lid


def test_encrypted_with_its_own_rotating_key(synth):
    template = synth.template("monitoring")
    _, bucket = _evidence_bucket(template)
    (rule,) = bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    key = template["Resources"][rule["ServerSideEncryptionByDefault"]["KMSMasterKeyID"]["Fn::GetAtt"][0]]
    assert key["Type"] == "AWS::KMS::Key" and key["Properties"]["EnableKeyRotation"] is True
    statements = {s["Sid"]: s for s in key["Properties"]["KeyPolicy"]["Statement"]}
    assert statements["PipelineEncrypts"]["Principal"] == {"AWS": DEPLOY_ROLE}
    assert statements["AuditorsDecrypt"]["Action"] == "kms:Decrypt"
    assert not any(a.startswith(("kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey"))
                   for a in statements["KeyAdministration"]["Action"])


def test_the_policy_denies_non_tls_and_lets_only_the_deploy_role_put_and_the_auditors_read(synth):
    template = synth.template("monitoring")
    lid, _ = _evidence_bucket(template)
    statements = _policy_of(template, lid)
    tls = [s for s in statements if s.get("Condition") == {"Bool": {"aws:SecureTransport": "false"}}]
    assert tls and tls[0]["Effect"] == "Deny" and tls[0]["Action"] == "s3:*"
    by_sid = {s.get("Sid"): s for s in statements}
    assert by_sid["PipelineWrites"]["Principal"] == {"AWS": DEPLOY_ROLE}
    assert by_sid["PipelineWrites"]["Action"] == "s3:PutObject"  # no delete, no retention change
    deny = by_sid["DenyWriteButPipeline"]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"ArnNotEquals": {"aws:PrincipalArn": [DEPLOY_ROLE]}}
    read = by_sid["AuditorsRead"]
    assert read["Principal"] == {"AWS": AUDITOR}
    assert "s3:GetObject" in read["Action"] and not any("Put" in a or "Delete" in a for a in read["Action"])


def test_the_stack_outputs_the_bucket_name(synth):
    outputs = synth.template("monitoring")["Outputs"]
    lid, _ = _evidence_bucket(synth.template("monitoring"))
    assert outputs["EvidenceBucketName"]["Value"] == {"Ref": lid}


def test_no_evidence_key_no_bucket(tmp_path):
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.plan.evidence import evidence_of

    plan = build_plan(parse_spec(copy.deepcopy(BASE), today=TODAY))
    assert evidence_of(plan) is None
    with_key = evidence_of(build_plan(parse_spec(evidence_spec(), today=TODAY)))
    assert with_key.writer == DEPLOY_ROLE and with_key.readers == (AUDITOR,) and with_key.stack == "acme-monitoring"


def test_templates_pass_cfn_lint(synth):
    for path in synth.template_files():
        if "monitoring" not in path.name:
            continue
        matches = cfn_lint(Path(path), "us-east-1")
        errors = [f"{m.rule.id} {m.path}: {m.message}" for m in matches if m.rule.id.startswith("E")]
        assert not errors, "\n".join(errors)


def test_cdk_nag_acknowledges_nothing_on_the_evidence_bucket_but_its_log_bucket_logging(synth):
    text = json.dumps(synth.template("monitoring"))
    assert "ObjectLockEnabled" in text
    metadata = [r.get("Metadata", {}) for lid, r in synth.template("monitoring")["Resources"].items()
                if lid.startswith("Evidence")]
    acks = json.dumps(metadata)
    assert acks.count("AwsSolutions-") <= 1 and ("AwsSolutions-S1" in acks or acks.count("AwsSolutions-") == 0)


def test_a_slurm_spec_keeps_the_bucket_in_its_capacity_stack(tmp_path):
    from hyperpod_gov.spec import read_yaml
    from tests.conftest import EXAMPLES

    d = read_yaml(str(EXAMPLES / "startup-slurm.yaml"))
    d.setdefault("monitoring", {})["evidence"] = {"bucket": "create", "retentionDays": 30}
    synth = synthesize(parse_spec(d, today=TODAY), tmp_path)
    capacity = synth.template("capacity")
    lid, bucket = _evidence_bucket(capacity)
    assert bucket["ObjectLockConfiguration"]["Rule"]["DefaultRetention"] == {"Mode": "GOVERNANCE", "Days": 30}
    assert capacity["Outputs"]["EvidenceBucketName"]["Value"] == {"Ref": lid}
    assert "AuditorsRead" not in json.dumps(capacity)  # no auditors named: nobody reads
    errors = [f"{m.rule.id} {m.path}: {m.message}" for path in synth.template_files()
              for m in cfn_lint(Path(path), "us-east-1") if m.rule.id.startswith("E")]
    assert not errors, "\n".join(errors)


def test_every_row_of_the_evidence_table_reaches_the_template(synth):
    from hyperpod_gov.plan import build_plan
    from tests.table_rows import unreached

    assert unreached(build_plan(synth.spec), synth.templates) == {}
    templates = copy.deepcopy(synth.templates)  # the check can fail: drop the retention, it is reported
    _, bucket = _evidence_bucket(templates["acme-monitoring"])
    del bucket["ObjectLockConfiguration"]["Rule"]
    assert unreached(build_plan(synth.spec), templates) == {
        "Bucket (evidence bucket)": ["ObjectLockConfiguration.Rule.DefaultRetention.Days",
                                     "ObjectLockConfiguration.Rule.DefaultRetention.Mode"]}
