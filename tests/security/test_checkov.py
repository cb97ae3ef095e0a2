"""checkov over every CloudFormation output the project produces: every finding is one of the justified ones below.

The outputs: both examples, the enterprise example in us-west-2 (whose CloudFormation lacks the task governance
types: the SDK-backed custom resource and its provider in every stack that holds a policy or quota), the
governance-only example of an existing cluster, both Slurm examples, and the elastic-capacity example (the
autoscaling role among its resources). The figures of docs/security.md's checkov
section are this test's (``HYPERPOD_GOV_UPDATE_DOCS=1`` rewrites them; otherwise a stale table fails).

checkov pins packages that the project's virtualenv pins differently (boto3, packaging), so it lives in a
virtualenv of its own: the test runs ``$HYPERPOD_GOV_CHECKOV`` or the ``checkov`` on PATH, and skips without one
(fails in CI, which installs it). A new finding fails the test until it is fixed or added here with its reason; a
justified finding that no longer occurs fails too, so the list never keeps stale excuses.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import EXAMPLES, ROOT, TODAY

CHECKOV_VERSION = "3.2.533"
DOC = ROOT / "docs" / "security.md"
UPDATE_DOCS = "HYPERPOD_GOV_UPDATE_DOCS"
BEGIN = f"<!-- checkov figures: written by tests/security/test_checkov.py ({UPDATE_DOCS}=1), not by hand -->"
END = "<!-- end of the checkov figures -->"

# Output name -> what it is (the doc's wording). The first two are the session's synthesized examples.
OUTPUTS = {
    "enterprise": "`examples/enterprise.yaml`",
    "startup": "`examples/startup.yaml`",
    "enterprise-us-west-2": "`examples/enterprise.yaml` in us-west-2 (the SDK-backed task governance resources)",
    "existing": "`examples/existing.yaml` (governance-only, an existing cluster in us-west-2)",
    "startup-slurm": "`examples/startup-slurm.yaml`",
    "enterprise-slurm": "`examples/enterprise-slurm.yaml`",
    "elastic": "`examples/elastic.yaml` (elastic capacity: autoscaling, Spot, a flexible group, patching)",
}

# Functions aws-cdk-lib generates (and the task governance handler's two): logical id prefix -> (what, who invokes
# it). None: CloudFormation, asynchronously; otherwise the caller that invokes it synchronously.
_FRAMEWORK = "the CDK provider framework"
_HANDLERS: dict[str, tuple[str, str | None]] = {
    "EksKubectlProviderHandler": ("the CDK kubectl provider's handler (applies the charts' manifests)",
                                  f"the onEvent function of {_FRAMEWORK}"),
    "EksKubectlProviderframeworkonEvent": (f"{_FRAMEWORK}'s onEvent function of the kubectl provider", None),
    "KubectlProviderHandler": ("the existing cluster's kubectl handler (applies the charts' manifests)",
                               f"the onEvent function of {_FRAMEWORK}"),
    "KubectlProviderframeworkonEvent": (f"{_FRAMEWORK}'s onEvent function of the existing cluster's kubectl "
                                        "provider", None),
    "CustomCDKBucketDeployment": ("the CDK BucketDeployment handler (copies the lifecycle scripts into their "
                                  "bucket)", None),
    "TaskGovernanceProviderframeworkonEvent": (f"{_FRAMEWORK}'s onEvent function of the task governance provider",
                                               None),
    "TaskGovernanceProviderframeworkisComplete": (f"{_FRAMEWORK}'s isComplete function of the task governance "
                                                  "provider", "its waiter state machine (a Task state)"),
    "TaskGovernanceProviderframeworkonTimeout": (f"{_FRAMEWORK}'s onTimeout function of the task governance "
                                                 "provider", "its waiter state machine (a Task state)"),
    "TaskGovernanceProviderOnEvent": ("the task governance handler's onEvent function",
                                      f"{_FRAMEWORK}'s onEvent function"),
    "TaskGovernanceProviderIsComplete": ("the task governance handler's isComplete function",
                                         f"{_FRAMEWORK}'s isComplete function"),
}
_OURS = ("TaskGovernanceProviderOnEvent", "TaskGovernanceProviderIsComplete")  # no environment variables
_TG_FRAMEWORK = tuple(p for p in _HANDLERS if p.startswith("TaskGovernanceProviderframework"))


def _dead_letters(invoker: str | None) -> str:
    if invoker is None:
        return ("CloudFormation invokes it asynchronously and waits for its answer at the request's response URL "
                "(Lambda developer guide, using Lambda with CloudFormation): every failure is reported as a failed "
                "stack event; a dead-letter queue would keep copies of requests that nothing replays once the "
                "stack has failed or rolled back")
    return (f"{invoker} invokes it synchronously and receives every failure itself (the stack event names it); a "
            "dead-letter queue only receives asynchronous invocations")


_CONCURRENCY = ("it runs only while a stack deploys, once per change of a custom resource; a reserved concurrency "
                "would only make deploys fail under a busy account's regional limit (and Lambda refuses any "
                "reservation that leaves less than 100 of the account's limit unreserved)")
_ENVIRONMENT = ("its environment holds names and ARNs, no secret; Lambda encrypts it at rest with an AWS managed key, "
                "a customer key would add a key policy to maintain and protect nothing more")
_FRAMEWORK_VPC = ("it calls the Lambda and Step Functions APIs and CloudFormation's response URL only and holds no "
                  "data; in the VPC it would need both APIs reachable from the private subnets (the VPC has no "
                  "endpoint for them) and would gain no isolation")
_HANDLER_VPC = ("the existing cluster's subnets (cluster.existing.subnetIds) are only known to reach its EKS endpoint, "
                "not the SageMaker API this handler calls; where the app creates the VPC and its SageMaker API "
                "endpoint the handler runs in the private subnets (docs/security.md)")

# The CfnJson handler aws-cdk-lib adds with the inference operator's IRSA roles: their trust conditions are keyed by
# the OIDC issuer, a deploy-time value, so CloudFormation resolves them through this custom resource.
_CFN_JSON = ("the CDK CfnJson handler (AWSCDKCfnUtilsProvider; it builds the inference operator's IRSA trust "
             "conditions, whose keys hold the cluster's OIDC issuer)",
             "AWSCDKCfnUtilsProviderCustomResourceProviderHandler")

# (check id, logical id prefix) -> reason. Logical ids end in a hash CDK derives from the construct path.
JUSTIFIED: dict[tuple[str, str], str] = {
    **{("CKV_AWS_115", p): f"{what}: {_CONCURRENCY}" for p, (what, _) in _HANDLERS.items()},
    **{("CKV_AWS_116", p): f"{what}: {_dead_letters(invoker)}" for p, (what, invoker) in _HANDLERS.items()},
    **{("CKV_AWS_173", p): f"{what}: {_ENVIRONMENT}" for p, (what, _) in _HANDLERS.items() if p not in _OURS},
    **{("CKV_AWS_117", p): f"{_HANDLERS[p][0]}: {_FRAMEWORK_VPC}" for p in _TG_FRAMEWORK},
    **{("CKV_AWS_117", p): f"{_HANDLERS[p][0]}: {_HANDLER_VPC}" for p in _OURS},
    ("CKV_AWS_117", "CustomCDKBucketDeployment"): f"{_HANDLERS['CustomCDKBucketDeployment'][0]}: it copies an asset "
    "from the CDK asset bucket to the lifecycle bucket and needs S3 only; in the VPC it would need an endpoint route "
    "and gain no isolation",
    ("CKV_AWS_111", "TaskGovernanceProviderwaiterstatemachineRoleDefaultPolicy"): f"the role of {_FRAMEWORK}'s "
    "waiter state machine: Step Functions sets up its execution log through CloudWatch Logs log delivery "
    "(logs:CreateLogDelivery, logs:PutResourcePolicy and related), actions that take no resource type, so the policy "
    "AWS documents for Step Functions logging names '*'; only this account's state machines of this region may "
    "assume the role (aws:SourceAccount, aws:SourceArn)",
    ("CKV_AWS_18", "LifecycleScriptsAccessLogs"): "the lifecycle bucket's access-log bucket: logging its own "
    "accesses would need a third bucket, and so on; S3 writes the log objects with its logging service principal",
    ("CKV_AWS_21", "LifecycleScriptsAccessLogs"): "the lifecycle bucket's access-log bucket: log objects are "
    "written once and expire; versions of them would keep nothing that was ever changed",
    ("CKV_AWS_115", _CFN_JSON[1]): f"{_CFN_JSON[0]}: {_CONCURRENCY}",
    ("CKV_AWS_116", _CFN_JSON[1]): f"{_CFN_JSON[0]}: {_dead_letters(None)}",
    ("CKV_AWS_117", _CFN_JSON[1]): f"{_CFN_JSON[0]}: it turns a JSON value into a string in memory and calls "
    "nothing but CloudFormation's response URL; in the VPC it would need a route to that URL and gain no isolation",
    ("CKV_AWS_111", "OperatorsInferenceOperatorAlbControllerRolePolicy"): "the AWS Load Balancer Controller's own "
    "policy (aws-load-balancer-controller-iam-policy-v2.13.0.json, the file AWS's inference setup page attaches, "
    "unchanged): ELB and EC2 calls that create load balancers, target groups and security groups take no "
    "resource-level constraint before the resource exists, and the controller's tag conditions "
    "(elbv2.k8s.aws/cluster) limit what it changes; only the controller's service account in "
    "hyperpod-inference-system may assume the role, through this cluster's OIDC provider",
    ("CKV_AWS_18", "OperatorsTlsBucketAccessLogs"): "the inference operator's TLS bucket's access-log bucket: logging "
    "its own accesses would need a third bucket, and so on; S3 writes the log objects with its logging service "
    "principal",
    ("CKV_AWS_21", "OperatorsTlsBucketAccessLogs"): "the inference operator's TLS bucket's access-log bucket: log "
    "objects are written once and expire; versions of them would keep nothing that was ever changed",
    ("CKV_AWS_18", "*StorageAccessLogs"): "a team bucket's access-log bucket (teams[].storage): logging its own "
    "accesses would need a third bucket, and so on; S3 writes the log objects with its logging service principal",
}
# Justified in these outputs only: elsewhere the finding is fixed, and its return fails the test.
ONLY_IN: dict[tuple[str, str], frozenset[str]] = {("CKV_AWS_117", p): frozenset({"existing"}) for p in _OURS}


@dataclass(frozen=True)
class Scan:
    """One output's checkov results: how many checks passed, and (check id, template, logical id) of each failure."""

    passed: int
    failed: tuple[tuple[str, str, str], ...]
    templates: int
    resources: int


def checkov_binary() -> str:
    found = os.environ.get("HYPERPOD_GOV_CHECKOV") or shutil.which("checkov")
    if found:
        return found
    message = (f"checkov is not installed: python3 -m venv /tmp/checkov && /tmp/checkov/bin/pip install "
               f"checkov=={CHECKOV_VERSION}, then HYPERPOD_GOV_CHECKOV=/tmp/checkov/bin/checkov")
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI runs this test)")
    pytest.skip(message)


def checkov_scan(binary: str, cdk_outs: dict[str, Path], scratch: Path) -> dict[str, Scan]:
    """checkov's results by name of the cloud assembly they are in.

    One checkov run over a folder of each assembly's templates (a run's start-up is about half of what it costs);
    the report names the checkov version that ran, which must be the one the justified list was made with. Not
    ``--quiet``: it leaves the passed checks out, which the figures count."""
    for name, cdk_out in cdk_outs.items():
        (scratch / name).mkdir(parents=True)
        for template in cdk_out.glob("*.template.json"):
            shutil.copyfile(template, scratch / name / template.name)
    scan = subprocess.run([binary, "--directory", str(scratch), "--framework", "cloudformation", "--output", "json",
                           "--compact", "--skip-download"], capture_output=True, text=True, timeout=900)
    assert scan.returncode in (0, 1), scan.stderr[-2000:]
    report = json.loads(scan.stdout)
    passed: Counter[str] = Counter()
    failed: dict[str, list[tuple[str, str, str]]] = {name: [] for name in cdk_outs}
    for run in report if isinstance(report, list) else [report]:
        assert run.get("check_type") == "cloudformation", run.get("check_type")
        version = run["summary"]["checkov_version"]
        assert version == CHECKOV_VERSION, f"checkov {version}: the justified list was made with {CHECKOV_VERSION}"
        assert run["summary"]["parsing_errors"] == 0 and run["summary"]["skipped"] == 0, run["summary"]
        assert run["summary"]["resource_count"] == sum(
            len(json.loads(t.read_text()).get("Resources", {})) for t in scratch.glob("*/*.template.json"))
        passed.update(Path(c["file_path"]).parts[-2] for c in run["results"]["passed_checks"])
        for c in run["results"]["failed_checks"]:
            name, template = Path(c["file_path"]).parts[-2:]
            failed[name].append((c["check_id"], template, c["resource"].split(".", 1)[1]))
    templates = {name: sorted((scratch / name).glob("*.template.json")) for name in cdk_outs}
    return {name: Scan(passed[name], tuple(sorted(failed[name])), len(templates[name]),
                       sum(len(json.loads(t.read_text()).get("Resources", {})) for t in templates[name]))
            for name in cdk_outs}


def _hit(key: str, logical_id: str) -> bool:
    """A key names the logical id's prefix, or with a leading '*' a part of it (a team's resources start with the
    team's name)."""
    return key[1:] in logical_id if key.startswith("*") else logical_id.startswith(key)


def _justified_by(check: str, logical_id: str, output: str) -> tuple[str, str] | None:
    """The key of ``JUSTIFIED`` that justifies ``check`` on ``logical_id`` in ``output``, or None."""
    return next((k for k in JUSTIFIED if k[0] == check and _hit(k[1], logical_id)
                 and output in ONLY_IN.get(k, frozenset([output]))), None)


def _justification(check: str, logical_id: str, output: str = "enterprise") -> str | None:
    """The reason for ``check`` on ``logical_id`` in ``output``, or None."""
    key = _justified_by(check, logical_id, output)
    return None if key is None else JUSTIFIED[key]


def _west(tmp_path_factory):
    """The enterprise example with every region us-west-2: the plan takes the SDK-backed custom resource."""
    from hyperpod_gov.plan import build_plan
    from hyperpod_gov.spec import parse_spec
    from tests.synth_helpers import synthesize

    data = yaml.safe_load((EXAMPLES / "enterprise.yaml").read_text().replace("us-east-1", "us-west-2"))
    spec = parse_spec(data, today=TODAY)
    assert build_plan(spec).task_governance_backend == "custom-resource"
    return synthesize(spec, tmp_path_factory.mktemp("enterprise-us-west-2"))


def _example(name: str, tmp_path_factory):
    from hyperpod_gov.spec import load_spec
    from tests.synth_helpers import synthesize

    return synthesize(load_spec(EXAMPLES / f"{name}.yaml", today=TODAY), tmp_path_factory.mktemp(name))


@pytest.fixture(scope="module")
def scanned(enterprise, startup, tmp_path_factory, request) -> dict[str, Scan]:
    binary = checkov_binary()  # before synthesizing: a skip costs nothing
    synthesized = {"enterprise": enterprise, "startup": startup,
                   "enterprise-us-west-2": _west(tmp_path_factory),
                   **{name: _example(name, tmp_path_factory) for name in ("existing", "startup-slurm",
                                                                            "enterprise-slurm")},
                   "elastic": request.getfixturevalue("elastic")}
    assert list(synthesized) == list(OUTPUTS)
    return checkov_scan(binary, {name: s.out_dir / "cdk.out" for name, s in synthesized.items()},
                        tmp_path_factory.mktemp("checkov"))


def test_checkov_finds_nothing_unjustified_in_any_output(scanned):
    for name, scan in scanned.items():
        print(f"checkov {CHECKOV_VERSION} ({name}): {scan.passed} passed, {len(scan.failed)} failed "
              f"{dict(sorted(Counter(f[0] for f in scan.failed).items()))}")
    unjustified = [(name, *f) for name, scan in scanned.items() for f in scan.failed
                   if _justification(f[0], f[2], name) is None]
    assert unjustified == [], f"fix these or justify them in {__file__}: {unjustified}"


def test_every_justification_is_used(scanned):
    used = {_justified_by(check, lid, name) for name, scan in scanned.items() for check, _, lid in scan.failed}
    assert sorted(set(JUSTIFIED) - used) == [], "justified findings that no longer occur: remove them"


def figures(scanned: dict[str, Scan]) -> str:
    """The doc's checkov figures: per output, then per justification."""
    lines = [BEGIN, "",
             f"checkov {CHECKOV_VERSION}, `--framework cloudformation`, over every template of each output:", "",
             "| Output | Templates | Resources | Checks run | Passed | Failed, all justified |",
             "|---|---|---|---|---|---|"]
    for name, scan in scanned.items():
        by_check = Counter(f[0] for f in scan.failed)
        failed = ", ".join(f"{c} {n}" for c, n in sorted(by_check.items())) or "none"
        lines.append(f"| {name}: {OUTPUTS[name]} | {scan.templates} | {scan.resources} | "
                     f"{scan.passed + len(scan.failed)} | {scan.passed} | {len(scan.failed)}: {failed} |")
    counts: dict[tuple[str, str], Counter[str]] = {k: Counter() for k in JUSTIFIED}
    for name, scan in scanned.items():
        for check, _, lid in scan.failed:
            key = _justified_by(check, lid, name)
            if key is not None:
                counts[key][name] += 1
    # One row per check and reason: a reason reads "<what the resource is>: <why>", the rows group the whys.
    rows: dict[tuple[str, str], list[str]] = {}
    for (check, prefix), reason in sorted(JUSTIFIED.items()):
        what, why = reason.split(": ", 1)
        where = ", ".join(f"{name} {n}" for name, n in sorted(counts[(check, prefix)].items(),
                                                              key=lambda i: list(OUTPUTS).index(i[0])))
        rows.setdefault((check, why), []).append(f"`{prefix}`, {what}: {where or 'none'}")
    lines += ["", "The justified findings: resources by logical id prefix (`*`: part of the logical id), what they "
              "are and their findings by output.", "",
              "| Check | Resources | Reason |", "|---|---|---|"]
    lines += [f"| {check} | {'; '.join(resources)} | {why} |" for (check, why), resources in rows.items()]
    return "\n".join([*lines, "", END])


def test_the_docs_checkov_figures_are_this_scans(scanned):
    text = DOC.read_text()
    found = re.search(re.escape(BEGIN) + r".*?" + re.escape(END), text, re.S)
    assert found, f"{DOC} lacks the checkov figures' markers ({BEGIN} ... {END})"
    wanted = figures(scanned)
    if os.environ.get(UPDATE_DOCS) == "1":
        DOC.write_text(text[:found.start()] + wanted + text[found.end():])
        return
    assert found.group(0) == wanted, f"{DOC}: the checkov figures are stale; rerun this test with {UPDATE_DOCS}=1"


def test_an_unjustified_finding_is_reported():
    assert _justification("CKV_AWS_18", "LifecycleScriptsAccessLogs486B0B7F")
    assert _justification("CKV_AWS_18", "LifecycleScripts1A2B3C4D") is None
    assert _justification("CKV_AWS_18", "appliedresearchStorageAccessLogsE0C0C8DA")
    assert _justification("CKV_AWS_18", "appliedresearchStorageBucket12345678") is None
    assert _justification("CKV_AWS_999", "EksKubectlProviderHandlerFCD70AA3") is None
    # The handler outside the VPC is justified for the existing cluster only: in a VPC the app creates it is fixed.
    assert _justification("CKV_AWS_117", "TaskGovernanceProviderOnEventC2C1E3A4", "existing")
    assert _justification("CKV_AWS_117", "TaskGovernanceProviderOnEventC2C1E3A4", "enterprise-us-west-2") is None
    # The log groups' encryption is fixed everywhere.
    assert _justification("CKV_AWS_158", "TaskGovernanceProviderHandlerLogs5E3F2A1B", "existing") is None


def test_stale_figures_fail(scanned, tmp_path, monkeypatch):
    """The comparison sees a changed count: the doc with one figure off fails."""
    wanted = figures(scanned)
    off = wanted.replace(f"| {scanned['startup'].passed} |", f"| {scanned['startup'].passed + 1} |", 1)
    assert off != wanted
    stale = tmp_path / "security.md"
    stale.write_text(f"# x\n\n{off}\n\n## after\n")
    monkeypatch.setattr(f"{__name__}.DOC", stale)
    monkeypatch.delenv(UPDATE_DOCS, raising=False)
    with pytest.raises(AssertionError, match="stale"):
        test_the_docs_checkov_figures_are_this_scans(scanned)
    assert stale.read_text() == f"# x\n\n{off}\n\n## after\n"
    monkeypatch.setenv(UPDATE_DOCS, "1")
    test_the_docs_checkov_figures_are_this_scans(scanned)
    assert stale.read_text() == f"# x\n\n{wanted}\n\n## after\n"
