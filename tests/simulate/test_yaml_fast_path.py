"""The plain-data YAML path gives exactly what yaml.safe_load gives, or declines and PyYAML loads the text."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from hyperpod_gov.simulate import scenario as scenario_module
from hyperpod_gov.simulate.yaml_load import AVAILABLE, MAX_DEPTH, Unusual, load_plain

pytestmark = pytest.mark.skipif(not AVAILABLE, reason="PyYAML without libyaml: the plain-data path is off")

ROOT = Path(__file__).resolve().parents[2]


def shape(value):
    """The value with the type of every part spelled out: 1, 1.0 and True compare equal, and must not pass."""
    if isinstance(value, dict):
        return ("dict", [(shape(k), shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [shape(v) for v in value])
    return (type(value).__name__, repr(value))


def outcome(load, text: str) -> tuple:
    try:
        return ("value", shape(load(text)))
    except Exception as exc:  # whatever safe_load raises, the scenario loader must raise too
        return ("error", type(exc).__name__, str(exc))


def assert_same_as_safe_load(text: str) -> None:
    """The plain path gives safe_load's value; where safe_load fails, it declines (and PyYAML fails the same)."""
    expected = outcome(yaml.safe_load, text)
    if expected[0] == "error":
        with pytest.raises(Unusual):
            load_plain(text)
    else:
        assert shape(load_plain(text)) == expected[1]
    assert outcome(scenario_module._load_yaml, text) == expected


# Each scalar is read as a mapping value, a sequence item and a mapping key, in block and in flow style.
SCALARS = [
    # ints: decimal, signs, underscores, YAML 1.1 octal, binary, hex, sexagesimal; and look-alikes that are strings
    "0", "-1", "+5", "1_000", "017", "-017", "0b1011", "0x1F", "0X1f", "1:30", "-1:30:05", "09", "0o17", "1__0",
    "12345678901234567890123",
    # floats: dots, exponents with and without a dot, infinities, nan, sexagesimal; look-alikes
    "1.5", "-0.0", "+.5", "1.", "1.0e+2", "1.0E-3", "1e3", "1_0.5", ".inf", "-.Inf", "+.INF", ".nan", ".NaN",
    "190:20:30.15", ".", "1.2.3",
    # bools and their look-alikes
    "yes", "Yes", "YES", "no", "No", "on", "On", "OFF", "off", "true", "True", "TRUE", "false", "y", "n", "tRUE",
    # nulls
    "~", "null", "Null", "NULL", "nULL",
    # timestamps, naive and with zones; look-alikes
    "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10", "2001-12-15T02:59:43.1Z",
    "2001-12-14 21:59:43.10 +5", "2001-1-4 1:59:43", "2001-12-14x", "2001-13-14",
    # quoted and other strings
    '"1"', "'1'", '"true"', "'~'", '""', "''", '"a\\tb\\u00e9"', "'it''s'", "plain text", "a/b-c.d", "é",
    "-", "?x", "cpu: 1" and "'cpu: 1'", "1500m", "64Gi", "0.5Gi", "1e3m",
]


@pytest.mark.parametrize("scalar", SCALARS)
def test_a_scalar_is_resolved_as_safe_load_resolves_it(scalar):
    for text in (f"k: {scalar}\n", f"- {scalar}\n", f"[{scalar}, x]\n", f"{{k: {scalar}}}\n",
                 f"{scalar}: v\n", f"{{{scalar}: v}}\n", f"{scalar}\n"):
        assert_same_as_safe_load(text)


@pytest.mark.parametrize("text", [
    "", "# only a comment\n", "---\n", "--- \n...\n", "k:\n", "k: \n", "{k: }\n", "[]\n", "{}\n", "- []\n- {}\n",
    "a: 1\nb: {c: [1, 2, {d: e}], f: []}\n",
    "a: 1\nb: 2\na: 3\n",  # a repeated key: the later value, at the first key's place
    "1: a\n1.0: b\ntrue: c\n",  # keys that compare equal
    "? x\n: 1\n",  # an explicit key
    "block: |\n  two\n  lines\nfolded: >-\n  one\n  line\n",
    "multi: 'a\n  b'\nplain: a\n  b\n",
    "\ufeffk: v\n",  # a byte order mark
    "- - - 1\n    - 2\n  - 3\n",
])
def test_plain_documents_load_as_safe_load_loads_them(text):
    assert_same_as_safe_load(text)


@pytest.mark.parametrize("text", [
    "a: &x {b: 1}\nc: *x\n",  # anchors and aliases
    "base: &b {x: 1}\nmine:\n  <<: *b\n  y: 2\n",  # a merge key
    "<<: {x: 1}\n",
    "k: =\n",  # the value tag, which SafeConstructor cannot construct
    "=: 1\n",
    "k: !!str 1\n", "k: !!int '3'\n", "k: !custom x\n", "k: ! 1\n", "!!map {a: 1}\n",
    "k: !!python/tuple [1, 2]\n",  # SafeLoader refuses it
    "? [a, b]\n: 1\n", "{[a]: 1}\n", "? {a: 1}\n: 2\n",  # unhashable keys
    "a: 1\n---\nb: 2\n",  # two documents
    "k: [1, 2\n", "a: b: c\n", "k: 'open\n", "\tk: v\n",  # syntax errors
    "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n",
])
def test_anything_else_is_declined_and_loaded_by_pyyaml_as_before(text):
    with pytest.raises(Unusual):
        load_plain(text)
    assert outcome(scenario_module._load_yaml, text) == outcome(yaml.safe_load, text)


def test_nesting_up_to_the_limit_takes_the_plain_path():
    text = "[" * MAX_DEPTH + "1" + "]" * MAX_DEPTH + "\n"
    assert_same_as_safe_load(text)


@pytest.mark.parametrize("path", sorted(p.name for p in (ROOT / "examples").glob("*.yaml")))
def test_the_example_files_load_as_safe_load_loads_them(path):
    assert_same_as_safe_load((ROOT / "examples" / path).read_text(encoding="utf-8"))


def _random_scenario(rng: random.Random) -> dict:
    """A scenario of the shapes the tests and benches write: queues, workloads, events; every scalar type."""
    queues = []
    for i in range(rng.randint(1, 4)):
        res = {rng.choice(["cpu", "memory", "nvidia.com/gpu"]): {
            "nominal": rng.choice([0, 3, "1500m", "64Gi", 2.5]),
            "borrowingLimit": rng.choice([None, 0, 10]),
        }}
        queues.append({"name": f"q{i}", "cohort": rng.choice([None, "all", "c-1"]),
                       "fairSharingWeight": rng.choice([1, 0.5, 0]),
                       "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any",
                                      "borrowWithinCohort": {"policy": "Never", "maxPriorityThreshold": None}},
                       "flavors": [{"name": rng.choice(["on-demand", "spot", "yes", "1", "null"]),
                                    "resources": res}]})
    events = [{"at": rng.choice([0, 1.5, 10, 1e3]),
               "submit": {"name": f"w{k}", "queue": "q0", "priority": rng.randint(-5, 5),
                          "requests": {"cpu": rng.choice([1, "500m", 0.25])}, "duration": rng.choice([None, 60])}}
              for k in range(rng.randint(0, 6))]
    return {"fairSharing": rng.choice([True, False]), "preemptionStrategies": ["LessThanInitialShare"],
            "queues": queues, "events": events, "until": rng.choice([None, 100, 0.5]),
            "when": rng.choice(["2026-12-01", "x"])}


@pytest.mark.parametrize("seed", range(30))
def test_generated_scenarios_in_every_style_load_as_safe_load_loads_them(seed):
    data = _random_scenario(random.Random(seed))
    for text in (yaml.safe_dump(data, sort_keys=False), yaml.safe_dump(data, default_flow_style=True),
                 yaml.safe_dump(data, default_flow_style=None, width=40)):
        assert_same_as_safe_load(text)
    for style in ('"', "'"):  # every scalar quoted: the non-strings get tags (!!int "3"), left to PyYAML
        text = yaml.safe_dump(data, default_style=style)
        assert outcome(scenario_module._load_yaml, text) == outcome(yaml.safe_load, text)


def test_a_scenario_file_loads_through_the_plain_path(tmp_path):
    text = ("fairSharing: false\nqueues:\n  - name: a\n    flavors: [{name: f, resources: {cpu: {nominal: 2}}}]\n"
            "events:\n  - {at: 60, submit: {name: a/w-0, queue: a, priority: 50, requests: {cpu: 1}, duration: 150}}\n")
    path = tmp_path / "s.yaml"
    path.write_text(text)
    assert scenario_module.load_scenario(path) == scenario_module.parse_scenario(yaml.safe_load(text), str(path))
    assert load_plain(text) == yaml.safe_load(text)


@pytest.mark.parametrize("seed", range(40))
def test_the_suites_random_scenarios_written_as_yaml_load_as_safe_load_loads_them(seed):
    from .test_properties import random_scenario

    data = random_scenario(seed)
    for text in (yaml.safe_dump(data, sort_keys=False), yaml.safe_dump(data, default_flow_style=True)):
        assert_same_as_safe_load(text)
        loaded = load_plain(text)
        assert scenario_module.parse_scenario(loaded, "s.yaml") == scenario_module.parse_scenario(data, "s.yaml")
