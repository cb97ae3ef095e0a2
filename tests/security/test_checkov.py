"""checkov over both examples' synthesized CloudFormation: every finding is one of the justified ones below.

checkov pins packages that the project's virtualenv pins differently (boto3, packaging), so it lives in a
virtualenv of its own: the test runs ``$HYPERPOD_GOV_CHECKOV`` or the ``checkov`` on PATH, and skips without one
(fails in CI, which installs it). A new finding fails the test until it is fixed or added here with its reason; a
justified finding that no longer occurs fails too, so the list never keeps stale excuses.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

CHECKOV_VERSION = "3.2.533"

# The handlers CDK generates for its own custom resources: invoked by CloudFormation (synchronously, one request
# per resource change), holding no data and no secret.
_CDK_HANDLERS = {
    "EksKubectlProviderHandler": "the CDK kubectl provider's handler (applies the charts' manifests)",
    "EksKubectlProviderframeworkonEvent": "the CDK provider framework's onEvent function of the kubectl provider",
    "CustomCDKBucketDeployment": "the CDK BucketDeployment handler (copies the lifecycle scripts into their bucket)",
}
_REASONS = {
    "CKV_AWS_115": "CloudFormation invokes it once per resource change during a deploy; a reserved concurrency "
                   "limit would only make deploys fail under a busy account's regional limit",
    "CKV_AWS_116": "CloudFormation invokes it synchronously and receives every failure itself (the stack event "
                   "names it); a dead-letter queue only receives asynchronous invocations",
    "CKV_AWS_173": "its environment holds names and ARNs, no secret; Lambda encrypts it at rest with an AWS "
                   "managed key, a customer key would add a key policy to maintain and protect nothing more",
    "CKV_AWS_117": "it copies an asset from the CDK asset bucket to the lifecycle bucket and needs S3 only; in the "
                   "VPC it would need an endpoint route and gain no isolation",
}
# (check id, logical id prefix) -> reason. Logical ids end in a hash CDK derives from the construct path.
JUSTIFIED: dict[tuple[str, str], str] = {
    **{(check, prefix): f"{what}: {_REASONS[check]}" for prefix, what in _CDK_HANDLERS.items()
       for check in ("CKV_AWS_115", "CKV_AWS_116", "CKV_AWS_173")},
    ("CKV_AWS_117", "CustomCDKBucketDeployment"): f"{_CDK_HANDLERS['CustomCDKBucketDeployment']}: "
                                                  f"{_REASONS['CKV_AWS_117']}",
    ("CKV_AWS_18", "LifecycleScriptsAccessLogs"): "the lifecycle bucket's access-log bucket: logging its own "
    "accesses would need a third bucket, and so on; S3 writes the log objects with its logging service principal",
    ("CKV_AWS_21", "LifecycleScriptsAccessLogs"): "the lifecycle bucket's access-log bucket: log objects are "
    "written once and expire; versions of them would keep nothing that was ever changed",
    ("CKV_AWS_18", "*StorageAccessLogs"): "a team bucket's access-log bucket (teams[].storage): logging its own "
    "accesses would need a third bucket, and so on; S3 writes the log objects with its logging service principal",
}


def checkov_binary() -> str:
    found = os.environ.get("HYPERPOD_GOV_CHECKOV") or shutil.which("checkov")
    if found:
        return found
    message = (f"checkov is not installed: python3 -m venv /tmp/checkov && /tmp/checkov/bin/pip install "
               f"checkov=={CHECKOV_VERSION}, then HYPERPOD_GOV_CHECKOV=/tmp/checkov/bin/checkov")
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI runs this test)")
    pytest.skip(message)


def checkov_findings(binary: str, cdk_outs: dict[str, Path], scratch: Path) -> dict[str, list[tuple[str, str, str]]]:
    """(check id, template file, logical id) of every failed check, by name of the cloud assembly it is in.

    One checkov run over a folder of each assembly's templates (a run's start-up is about half of what it costs);
    the report names the checkov version that ran, which must be the one the justified list was made with."""
    for name, cdk_out in cdk_outs.items():
        (scratch / name).mkdir(parents=True)
        for template in cdk_out.glob("*.template.json"):
            shutil.copyfile(template, scratch / name / template.name)
    scan = subprocess.run([binary, "--directory", str(scratch), "--framework", "cloudformation", "--output", "json",
                           "--quiet", "--compact", "--skip-download"], capture_output=True, text=True, timeout=900)
    assert scan.returncode in (0, 1), scan.stderr[-2000:]
    report = json.loads(scan.stdout)
    found: dict[str, list[tuple[str, str, str]]] = {name: [] for name in cdk_outs}
    for run in report if isinstance(report, list) else [report]:
        assert run.get("check_type") == "cloudformation", run.get("check_type")
        version = run["summary"]["checkov_version"]
        assert version == CHECKOV_VERSION, f"checkov {version}: the justified list was made with {CHECKOV_VERSION}"
        assert run["summary"]["parsing_errors"] == 0, run["summary"]
        assert run["summary"]["resource_count"] == sum(
            len(json.loads(t.read_text()).get("Resources", {})) for t in scratch.glob("*/*.template.json"))
        for failed in run["results"]["failed_checks"]:
            name, template = Path(failed["file_path"]).parts[-2:]
            found[name].append((failed["check_id"], template, failed["resource"].split(".", 1)[1]))
    return {name: sorted(findings) for name, findings in found.items()}


def _hit(key: str, logical_id: str) -> bool:
    """A key names the logical id's prefix, or with a leading '*' a part of it (a team's resources start with the
    team's name)."""
    return key[1:] in logical_id if key.startswith("*") else logical_id.startswith(key)


def _justification(check: str, logical_id: str) -> str | None:
    """The reason for ``check`` on ``logical_id``, or None."""
    return next((why for (c, key), why in JUSTIFIED.items() if c == check and _hit(key, logical_id)), None)


def test_checkov_finds_nothing_unjustified_in_either_example(enterprise, startup, tmp_path):
    binary = checkov_binary()
    found = checkov_findings(binary, {"enterprise": enterprise.out_dir / "cdk.out",
                                      "startup": startup.out_dir / "cdk.out"}, tmp_path / "templates")
    for name, findings in found.items():
        print(f"checkov {CHECKOV_VERSION} ({name}): {len(findings)} findings "
              f"{dict(sorted(Counter(f[0] for f in findings).items()))}")
    unjustified = [(name, *f) for name, findings in found.items() for f in findings
                   if _justification(f[0], f[2]) is None]
    assert unjustified == [], f"fix these or justify them in {__file__}: {unjustified}"
    used = {(c, p) for findings in found.values() for check, _, lid in findings
            for (c, p) in JUSTIFIED if c == check and _hit(p, lid)}
    assert sorted(set(JUSTIFIED) - used) == [], "justified findings that no longer occur: remove them"


def test_an_unjustified_finding_is_reported():
    assert _justification("CKV_AWS_18", "LifecycleScriptsAccessLogs486B0B7F")
    assert _justification("CKV_AWS_18", "LifecycleScripts1A2B3C4D") is None
    assert _justification("CKV_AWS_18", "appliedresearchStorageAccessLogsE0C0C8DA")
    assert _justification("CKV_AWS_18", "appliedresearchStorageBucket12345678") is None
    assert _justification("CKV_AWS_999", "EksKubectlProviderHandlerFCD70AA3") is None
