"""The evidence bucket's table (``tables.py``): the members of ``AWS::S3::Bucket`` that hold a record for its
retention (``monitoring.evidence``), in CloudFormation's member names. ``constructs/evidence.py`` writes them from
this table. ``drift`` and ``import`` do not read S3: every row says so.
"""

from __future__ import annotations

from typing import Any, Callable

from .evidence import EvidencePlan
from .fields import Field, Table

_NO_READER = "no live reader: drift does not read S3 (GetObjectLockConfiguration, GetBucketVersioning)"
_NO_IMPORT = "not read by import: the spec's monitoring.evidence is written by hand"
MODE = "GOVERNANCE"  # a principal with s3:BypassGovernanceRetention may still shorten a lock (docs/evidence.md)


def _row(member: str, label: str, spec: str, get: Callable[[EvidencePlan], Any],
         plan_fields: tuple[str, ...] = ()) -> Field:
    return Field(member, label, spec, get=get, plan_fields=plan_fields, drift=_NO_READER, imports=_NO_IMPORT)


EVIDENCE_BUCKET = Table(
    kind="Bucket",
    label="evidence bucket",
    spec="monitoring.evidence",
    fields=(
        _row("ObjectLockEnabled", "Object Lock", "bucket", lambda e: True),
        _row("ObjectLockConfiguration.ObjectLockEnabled", "Object Lock configuration", "bucket",
             lambda e: "Enabled"),
        _row("ObjectLockConfiguration.Rule.DefaultRetention.Mode", "retention mode", "", lambda e: MODE),
        _row("ObjectLockConfiguration.Rule.DefaultRetention.Days", "retention", "retentionDays",
             lambda e: e.retention_days, ("retention_days",)),
        _row("VersioningConfiguration.Status", "versioning", "", lambda e: "Enabled"),
    ),
    exempt={"writer": "the bucket policy and the key policy (constructs/evidence.py), not a bucket member",
            "readers": "the bucket policy and the key policy (constructs/evidence.py), not a bucket member",
            "stack": "where the bucket is built (stacks/), not a member", "output": "the stack's output naming it"},
)

__all__ = ["EVIDENCE_BUCKET", "EvidencePlan"]
