"""Messages a new user meets first (issue 22): each says what was meant, not what the parser saw."""

from __future__ import annotations

import copy

import pytest

from hyperpod_gov.spec import SpecError, parse_spec
from hyperpod_gov.spec.loader import parse_yaml
from tests.conftest import BASE, TODAY


def _problems(data: dict) -> str:
    with pytest.raises(SpecError) as raised:
        parse_spec(data, today=TODAY)
    return "\n".join(str(i) for i in raised.value.issues)


@pytest.mark.parametrize("written, meant", [(1.30, "1.30"), (1.31, "1.31"), (1.3, "1.30")])
def test_an_unquoted_kubernetes_version_gets_the_version_that_was_meant(written, meant):
    data = copy.deepcopy(BASE)
    data["cluster"]["kubernetesVersion"] = written
    text = _problems(data)
    assert f'quote the version, e.g. kubernetesVersion: "{meant}"' in text
    assert 'kubernetesVersion: "1.3"' not in text


def test_a_typo_in_an_instance_type_is_answered_with_the_type_meant_and_nothing_else():
    data = copy.deepcopy(BASE)
    typo = data["cluster"]["instanceGroups"][0]["instanceType"] + "x"
    data["cluster"]["instanceGroups"][0]["instanceType"] = typo
    text = _problems(data)
    (line,) = [ln for ln in text.splitlines() if "cluster.instanceGroups[0].instanceType" in ln]
    assert f"did you mean {typo[:-1]}" in line
    assert "declare its facts" not in line  # never advise declaring the typo as a new type
    assert text.count(repr(typo)) == 1  # no follow-on finding repeats it


def test_a_yaml_syntax_error_names_the_spec_path_around_it():
    text = "name: r\ncluster:\n  name: c\n  instanceGroups:\n    - name: g\n      instanceType: [ml.g5\n"
    with pytest.raises(SpecError) as raised:
        parse_yaml(text, "spec.yaml")
    (issue,) = raised.value.issues
    assert issue.path.startswith("line ") and "(in cluster.instanceGroups[0].instanceType" in issue.path
    bad_indent = "cluster:\n  instanceGroups:\n    - name: g\n    - name: h\n       count: 2\n"
    with pytest.raises(SpecError) as raised:
        parse_yaml(bad_indent, "spec.yaml")
    assert "(in cluster.instanceGroups[1]" in raised.value.issues[0].path
