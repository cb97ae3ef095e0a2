"""The regions a spec may name: botocore's endpoint data, read as a botocore session lists SageMaker's regions,
wherever botocore's loader would find the data, without importing botocore."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import botocore.session
import pytest

from hyperpod_gov.spec._base import SAGEMAKER_ENDPOINT_PREFIX, botocore_data_path, sagemaker_regions


def _botocore_regions() -> dict[str, str]:
    session = botocore.session.Session()
    return {r: p for p in session.get_available_partitions() for r in session.get_available_regions("sagemaker", p)}


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A home of its own, no AWS_DATA_PATH, and the regions read again (before and after)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AWS_DATA_PATH", raising=False)
    sagemaker_regions.cache_clear()
    yield tmp_path
    sagemaker_regions.cache_clear()


def _builtin_endpoints() -> dict:
    return json.loads((Path(botocore_data_path()[-1]) / "endpoints.json").read_text())


def _with_region(data: dict, region: str) -> dict:
    """The endpoint data with one more region of the aws partition where SageMaker has an endpoint."""
    aws = next(p for p in data["partitions"] if p["partition"] == "aws")
    aws["regions"][region] = {"description": "test"}
    aws["services"][SAGEMAKER_ENDPOINT_PREFIX]["endpoints"][region] = {}
    return data


def test_the_regions_are_the_ones_a_botocore_session_lists_for_every_partition(fresh):
    ours = sagemaker_regions()
    assert ours == _botocore_regions()
    assert ours["us-east-1"] == "aws" and ours["us-gov-west-1"] == "aws-us-gov" and ours["cn-north-1"] == "aws-cn"
    assert "fips-us-gov-west-1" not in ours  # an endpoint that is not a region


def test_the_folders_are_botocores_loaders_in_its_order(fresh, monkeypatch):
    import botocore.loaders

    monkeypatch.setenv("AWS_DATA_PATH", f"{fresh / 'one'}:{fresh / 'two'}")
    loader = botocore.loaders.create_loader(str(fresh / "one") + ":" + str(fresh / "two"))
    assert botocore_data_path() == [str(fresh / "one"), str(fresh / "two"), str(fresh / "home" / ".aws" / "models"),
                                    loader.BUILTIN_DATA_PATH]
    assert loader.search_paths[0:2] + loader.search_paths[-1:] == [*botocore_data_path()[:2],
                                                                  *botocore_data_path()[-1:]]


def test_the_endpoint_prefix_is_sagemakers_in_botocores_service_model():
    model = botocore.session.Session().get_service_model("sagemaker")
    assert model.metadata["endpointPrefix"] == SAGEMAKER_ENDPOINT_PREFIX


def test_data_under_aws_data_path_wins_as_for_botocore(fresh, monkeypatch):
    folder = fresh / "data"
    folder.mkdir()
    (folder / "endpoints.json").write_text(json.dumps(_with_region(_builtin_endpoints(), "xx-test-1")))
    monkeypatch.setenv("AWS_DATA_PATH", str(folder))
    assert sagemaker_regions()["xx-test-1"] == "aws"
    assert sagemaker_regions() == _botocore_regions()


def test_compressed_data_in_aws_models_is_read_as_botocore_reads_it(fresh, monkeypatch):
    import botocore.loaders

    folder = fresh / "home" / ".aws" / "models"
    folder.mkdir(parents=True)
    # botocore took ~/.aws/models from HOME when it was imported
    monkeypatch.setattr(botocore.loaders.Loader, "CUSTOMER_DATA_PATH", str(folder))
    (folder / "endpoints.json.gz").write_bytes(gzip.compress(
        json.dumps(_with_region(_builtin_endpoints(), "xx-test-2")).encode()))
    assert sagemaker_regions()["xx-test-2"] == "aws"
    assert sagemaker_regions() == _botocore_regions()


def test_reading_the_regions_imports_no_botocore():
    code = ("import sys; from hyperpod_gov.spec._base import sagemaker_regions; assert sagemaker_regions(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'botocore'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
