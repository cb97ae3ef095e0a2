"""``cluster.dependenciesChart.directory`` is uploaded into the cloud assembly: it is never the spec's folder
itself, and no symbolic link inside it leads out of it (real links in tmp_path)."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml

from hyperpod_gov.plan import build_plan
from hyperpod_gov.spec import SpecError, load_spec, parse_spec
from tests.conftest import BASE, TODAY

PATH = "cluster.dependenciesChart.directory"


def _project(root: Path, directory: str = "charts/deps") -> Path:
    """A spec folder with a chart at charts/deps (a Chart.yaml and one template) and a spec naming ``directory``."""
    chart = root / "charts" / "deps"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: deps\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    (root / "Chart.yaml").write_text("apiVersion: v2\nname: root\nversion: 0.1.0\n")  # so '.' looks like a chart
    data = copy.deepcopy(BASE)
    data["cluster"]["dependenciesChart"] = {"directory": directory}
    (root / "spec.yaml").write_text(yaml.safe_dump(data))
    return chart


def _error(spec: Path) -> str:
    with pytest.raises(SpecError) as err:
        load_spec(spec, today=TODAY)
    text = err.value.render()
    assert "Traceback" not in text and len(err.value.issues) == 1 and err.value.issues[0].fix
    return text


@pytest.fixture
def outside(tmp_path) -> Path:
    """A secret outside the spec's folder (the spec's folder is tmp_path/repo)."""
    secret = tmp_path / "home" / ".aws" / "credentials"
    secret.parent.mkdir(parents=True)
    secret.write_text("[default]\naws_secret_access_key = not-for-the-cloud-assembly\n")
    return secret


@pytest.fixture
def repo(tmp_path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


@pytest.mark.parametrize("directory", [".", "./", "here"])
def test_the_spec_folder_itself_is_refused(repo, directory):
    _project(repo, directory)
    os.symlink(".", repo / "here")  # a link to the spec's folder, named like a chart folder
    text = _error(repo / "spec.yaml")
    assert f"{PATH}: is the spec's folder itself" in text and "e.g. charts/hyperpod-dependencies" in text


def test_a_link_to_a_file_outside_the_repository_is_refused(repo, outside):
    chart = _project(repo)
    os.symlink(outside, chart / "templates" / "values.yaml")
    text = _error(repo / "spec.yaml")
    assert f"{PATH}: holds 1 symbolic link(s) that lead out of the chart folder (templates/values.yaml -> " \
           f"{outside})" in text
    assert "replace each link with a copy" in text and "('charts/deps')" in text


def test_a_link_to_a_folder_outside_is_refused_without_following_it(repo, outside):
    chart = _project(repo)
    os.symlink(outside.parent, chart / "aws")
    text = _error(repo / "spec.yaml")
    assert f"aws -> {outside.parent}" in text and "credentials" not in text  # not walked into


def test_a_link_to_the_repository_outside_the_chart_is_refused(repo):
    chart = _project(repo)
    os.symlink(repo / "spec.yaml", chart / "templates" / "spec.yaml")
    os.symlink("../../..", chart / "templates" / "up")  # relative: the repository's root
    text = _error(repo / "spec.yaml")
    assert "holds 2 symbolic link(s)" in text and "templates/spec.yaml" in text and "templates/up" in text


def test_a_dangling_link_that_points_outside_is_refused(repo, tmp_path):
    chart = _project(repo)
    os.symlink(tmp_path / "gone", chart / "templates" / "gone.yaml")
    assert "templates/gone.yaml" in _error(repo / "spec.yaml")


def test_links_inside_the_chart_and_a_chart_folder_reached_through_a_link_are_accepted(repo):
    chart = _project(repo)
    os.symlink("cm.yaml", chart / "templates" / "alias.yaml")
    os.symlink("charts/deps", repo / "deps-link")
    load_spec(repo / "spec.yaml", today=TODAY)
    data = yaml.safe_load((repo / "spec.yaml").read_text())
    data["cluster"]["dependenciesChart"]["directory"] = "deps-link"
    (repo / "spec.yaml").write_text(yaml.safe_dump(data))
    load_spec(repo / "spec.yaml", today=TODAY)


def test_a_spec_built_in_python_is_checked_when_its_plan_is_built(repo, outside):
    chart = _project(repo)
    os.symlink(outside, chart / "templates" / "values.yaml")
    spec = parse_spec(yaml.safe_load((repo / "spec.yaml").read_text()), today=TODAY)  # no file check here
    with pytest.raises(SpecError) as err:
        build_plan(spec, base_dir=repo)
    assert f"{PATH}: holds 1 symbolic link(s)" in err.value.render()
