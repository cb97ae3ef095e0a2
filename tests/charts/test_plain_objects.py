"""The charts' plain-data objects are what cdk8s renders for the same object, and the C YAML dumper writes the
same bytes as PyYAML's pure-Python one."""

from __future__ import annotations

import json

import pytest
import yaml
from cdk8s import ApiObject, App, Chart, JsonPatch
from constructs import Construct

from hyperpod_gov.charts import render
from hyperpod_gov.charts._objects import MANAGED_BY, api_object, chart_objects
from hyperpod_gov.charts.render import _DUMPER, dump_manifests
from hyperpod_gov.plan import build_plan

CASES = {
    "cluster-scoped, labels only": dict(api_version="v1", kind="Namespace", name="ns-a",
                                        labels={"z": "1", "a": ""}),
    "namespaced, annotations": dict(api_version="rbac.authorization.k8s.io/v1", kind="Role", name="viewer",
                                    namespace="ns-a", annotations={"b": "2", "a": "1"},
                                    body={"rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}),
    "body order kept, nested order kept": dict(
        api_version="kueue.x-k8s.io/v1beta2", kind="ClusterQueue", name="q",
        body={"spec": {"z": 1, "a": {"y": 2.0, "b": 0.5}, "none": None, "empty": {}, "list": []},
              "data": {"k": True}}),
}


def _cdk8s(**kw):
    """The same object through cdk8s's ApiObject and JSON patches, as the charts built it before."""
    chart = Chart(App(), "c", disable_resource_name_hashes=True)
    metadata = {"name": kw["name"], "labels": {**MANAGED_BY, **kw.get("labels", {})}}
    if kw.get("namespace"):
        metadata["namespace"] = kw["namespace"]
    if kw.get("annotations"):
        metadata["annotations"] = dict(kw["annotations"])
    obj = ApiObject(chart, "o", api_version=kw["api_version"], kind=kw["kind"], metadata=metadata)
    for key, value in kw.get("body", {}).items():
        obj.add_json_patch(JsonPatch.add(f"/{key}", value))
    return chart.to_json()[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_plain_object_is_what_cdk8s_renders(case):
    chart = Chart(App(), "c", disable_resource_name_hashes=True)
    api_object(chart, "o", **CASES[case])
    # json.dumps keeps the key order and tells 2 from 2.0: both must match
    assert json.dumps(chart_objects(chart)) == json.dumps([_cdk8s(**CASES[case])])


def test_objects_keep_the_order_they_were_added_in_nested_scopes():
    chart = Chart(App(), "c")
    api_object(chart, "first", api_version="v1", kind="ConfigMap", name="a")
    api_object(Construct(chart, "inner"), "second", api_version="v1", kind="ConfigMap", name="b")
    api_object(chart, "third", api_version="v1", kind="ConfigMap", name="c")
    assert [o["metadata"]["name"] for o in chart_objects(chart)] == ["a", "b", "c"]


def test_an_id_used_twice_in_a_chart_is_refused():
    chart = Chart(App(), "c")
    api_object(chart, "same", api_version="v1", kind="ConfigMap", name="a")
    with pytest.raises(ValueError, match="already a Kubernetes object with id 'same'"):
        api_object(chart, "same", api_version="v1", kind="ConfigMap", name="b")


@pytest.mark.skipif(not hasattr(yaml, "CSafeDumper"), reason="PyYAML without libyaml")
@pytest.mark.parametrize("example", ["enterprise", "startup"])
def test_c_dumper_writes_the_bytes_of_the_pure_python_one(example, request):
    manifests = render(build_plan(request.getfixturevalue(f"{example}_spec")))
    for objs in [manifests.cluster, *manifests.teams.values()]:
        assert dump_manifests(objs, yaml.CSafeDumper) == dump_manifests(objs, yaml.SafeDumper)
        assert dump_manifests(objs) == dump_manifests(objs, yaml.SafeDumper)  # the representer of plain data


def test_the_manifest_dumper_writes_what_pyyaml_does_with_anything_else():
    """Floats, tuples, scalars YAML would read as another type, a mapping met twice (an anchor and an alias) and
    keys that do not sort, each as PyYAML's own representer writes them (with the emitter both use)."""
    shared = {"k": [1, 2]}
    cases = [
        [{"f": 0.5, "e": 1e-07, "t": (1, "x"), "none": None, "yes": True, "n": -3, "big": 2**70}],
        [{"": "", "quoted": "yes", "octal": "010", "null": "null", "multi": "a\nb", "colon": "a: b", "é": "ü"}],
        [{"x": shared, "y": shared}, {"z": shared}],
        [{1: "one", "a": "b"}],
        [],
    ]
    for objs in cases:
        assert dump_manifests(objs) == dump_manifests(objs, _DUMPER), objs
    assert "&id001" in dump_manifests([{"x": shared, "y": shared}])
