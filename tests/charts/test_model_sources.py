"""An inference endpoint loads its model only from a source of its own team (second security review, finding 4).

The team-limits policy (run in cel-python on crafted InferenceEndpointConfigs) holds ``spec.modelSourceConfig`` to
the team's parameter ConfigMap: the S3 prefixes its workload identities are granted, and its own directory on the
shared file system. The Mountpoint driver's role reads the granted prefixes of every inference team, so without
this check one team could load (and serve) another team's weights.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
import yaml

from hyperpod_gov.charts import render
from hyperpod_gov.charts.admission import MODEL_FSX_DIRECTORY, MODEL_FSX_ID, team_limits_policy
from hyperpod_gov.onboard import render_onboarding
from hyperpod_gov.plan import build_plan
from hyperpod_gov.plan.storage import PLACEHOLDERS
from hyperpod_gov.plan.workloads import WORKLOAD_KINDS, ModelSources, model_reads, model_sources
from hyperpod_gov.spec import parse_spec
from tests.conftest import BASE, TODAY
from tests.security.cel import denials

CONTRACT = {"businessOwner": "b@example.com", "operationsOwner": "o@example.com", "costOwner": "c@example.com",
            "dataClassification": "internal", "reviewBy": "2027-06-30", "approvedWorkloads": ["inference"]}
IEC = next(k for k in WORKLOAD_KINDS if k.kind == "InferenceEndpointConfig")
NS = "hyperpod-ns-team-a"
REFUSED = "spec.modelSourceConfig is not a model source of team team-a"


def _spec() -> dict[str, Any]:
    d = copy.deepcopy(BASE)
    a, b = d["teams"]
    a["contract"] = b["contract"] = CONTRACT
    a["workloadIdentities"].append({"serviceAccount": "server", "grants": {"s3": [
        {"bucket": "team-a-models", "prefix": "llm/"}, {"bucket": "shared-models"}]}})
    b["workloadIdentities"] = [{"serviceAccount": "server", "grants": {"s3": [{"bucket": "team-b-models"}]}}]
    # The teams serve models (HPG-D009); one FSx CSI driver, the inference operator's, serves the file system too
    # (HPG-D008).
    d["cluster"]["sharedStorage"] = {"fsxLustre": {"storageCapacityGiB": 1200, "perUnitStorageThroughput": 125,
                                                   "csiDriverVersion": "v1.6.0-eksbuild.1"}}
    d["cluster"]["operators"] = ["training", "inference"]
    return d


@pytest.fixture(scope="module")
def plan():
    return build_plan(parse_spec(_spec(), today=TODAY))


@pytest.fixture(scope="module")
def params(plan) -> dict:
    (cm,) = [o for o in render(plan).teams["team-a"] if o["kind"] == "ConfigMap"]
    return cm


def _endpoint(source: dict[str, Any]) -> dict[str, Any]:
    obj = {"apiVersion": IEC.api_version, "kind": IEC.kind, **IEC.example(NS, f"{NS}-localqueue", "")}
    obj["spec"]["modelSourceConfig"] = source
    return obj


def _s3(bucket: str, location: str | None) -> dict[str, Any]:
    source: dict[str, Any] = {"modelSourceType": "s3", "s3Storage": {"bucketName": bucket, "region": "us-east-1"}}
    if location is not None:
        source["modelLocation"] = location
    return source


def _fsx(location: str, **storage: str) -> dict[str, Any]:
    return {"modelSourceType": "fsx", "modelLocation": location,
            "fsxStorage": {"fileSystemId": PLACEHOLDERS["Id"], **storage}}


def _refused(obj: dict[str, Any], params: dict) -> bool:
    found = denials(team_limits_policy(), obj, namespace=NS, params=params)
    return any(REFUSED in m for m in found)


S3_CASES = [
    ("own prefix", "team-a-models", "llm/mistral-7b", False),
    ("own prefix, trailing slash", "team-a-models", "llm/mistral-7b/", False),
    ("own prefix itself", "team-a-models", "llm", False),
    ("a whole bucket granted", "shared-models", "anything/at/all", False),
    ("a whole bucket granted, no location", "shared-models", None, False),
    ("another team's bucket", "team-b-models", "llm/mistral-7b", True),
    ("own bucket outside the prefix", "team-a-models", "other/weights", True),
    ("a look-alike prefix", "team-a-models", "llm-other/weights", True),
    ("own bucket, no location (the whole bucket)", "team-a-models", None, True),
    ("a '..' segment", "team-a-models", "llm/../other", True),
    ("a leading '/'", "team-a-models", "/llm/mistral-7b", True),
    ("a look-alike bucket", "team-a-models-x", "llm/mistral-7b", True),
    ("an ungranted bucket", "acme-payroll", "", True),
]


@pytest.mark.parametrize("name,bucket,location,refused", S3_CASES, ids=[c[0] for c in S3_CASES])
def test_an_s3_model_source_must_be_under_a_prefix_the_team_is_granted(name, bucket, location, refused, params):
    assert _refused(_endpoint(_s3(bucket, location)), params) == refused


FSX_CASES = [
    ("own directory", "team-a/models/llama", {}, False),
    ("own directory, absolute", "/team-a/models/llama", {}, False),
    ("own directory, its own mount name", "team-a/models", {"mountName": PLACEHOLDERS["LustreMountName"]}, False),
    ("another team's directory", "team-b/models/llama", {}, True),
    ("the file system's root", "", {}, True),
    ("a look-alike directory", "team-ab/models", {}, True),
    ("out through '..'", "team-a/../team-b/models", {}, True),
    ("another team's fileset as the mount name", "team-a/models",
     {"mountName": f"{PLACEHOLDERS['LustreMountName']}/team-b"}, True),
    ("another DNS name", "team-a/models", {"dnsName": "fs-0abc.fsx.us-east-1.amazonaws.com"}, True),
]


@pytest.mark.parametrize("name,location,storage,refused", FSX_CASES, ids=[c[0] for c in FSX_CASES])
def test_an_fsx_model_source_must_be_under_the_teams_own_directory(name, location, storage, refused, params):
    assert _refused(_endpoint(_fsx(location, **storage)), params) == refused


def test_another_file_system_is_refused(params):
    source = _fsx("team-a/models")
    source["fsxStorage"]["fileSystemId"] = "fs-0123456789abcdef0"
    assert _refused(_endpoint(source), params)


def test_a_source_type_without_its_storage_is_refused(params):
    assert _refused(_endpoint({"modelSourceType": "s3", "modelLocation": "llm/x"}), params)
    assert _refused(_endpoint({"modelSourceType": "fsx", "modelLocation": "team-a/x"}), params)


def test_a_team_with_no_grants_may_load_no_model(plan, params):
    bare = copy.deepcopy(params)
    bare["data"] = {k: v for k, v in params["data"].items() if not k.startswith("model-")}
    assert _refused(_endpoint(_s3("team-a-models", "llm/x")), bare)
    assert _refused(_endpoint(_fsx("team-a/x")), bare)


def test_the_parameters_hold_the_teams_grants_and_directory(plan, params):
    data = params["data"]
    assert {k: v for k, v in data.items() if k.startswith("model-s3.")} == {
        "model-s3.0": "shared-models/", "model-s3.1": "team-a-models/llm/"}
    assert (data[MODEL_FSX_ID], data[MODEL_FSX_DIRECTORY]) == (PLACEHOLDERS["Id"], "/team-a")
    assert model_sources(plan.team("team-b")) == ModelSources((("team-b-models", ""),), "/team-b")


def test_only_teams_that_may_serve_have_model_sources(plan):
    d = _spec()
    d["teams"][1]["contract"] = {**CONTRACT, "approvedWorkloads": ["training"]}
    trained = build_plan(parse_spec(d, today=TODAY))
    assert model_sources(trained.team("team-b")) == ModelSources()
    assert model_reads(trained.tenants) == (("shared-models", ""), ("team-a-models", "llm/"))
    assert model_reads(plan.tenants) == (("shared-models", ""), ("team-a-models", "llm/"), ("team-b-models", ""))


def test_the_onboarding_page_prints_an_endpoint_on_the_teams_own_source_or_none(plan, params):
    page = render_onboarding(plan, plan.team("team-a"))
    (endpoint,) = [b for b in (yaml.safe_load(x) for x in re.findall(r"```yaml\n(.*?)```", page, re.S))
                   if b["kind"] == IEC.kind]
    assert endpoint["spec"]["modelSourceConfig"]["s3Storage"]["bucketName"] == "shared-models"
    assert denials(team_limits_policy(), endpoint, namespace=NS, params=params) == []
    d = _spec()
    d["teams"][0]["workloadIdentities"].pop()
    d["cluster"].pop("sharedStorage")
    bare = build_plan(parse_spec(d, today=TODAY))
    page = render_onboarding(bare, bare.team("team-a"))
    assert f"### {IEC.kind}\n\nNo example: an endpoint loads its model from" in page
