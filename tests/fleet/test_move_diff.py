"""``diff`` of two fleet specs shows a capacity move (fleet.moves, MoveClusterNodes) as one move (issue 60): the pair
in tests/fleet/moves moves 2 p5 nodes from use1-infer/gpu (4 -> 2) to use1-train/gpu-worker (4 -> 6). A move whose
counts do not show it is said to be a review finding, and its count changes stay under their clusters; and
``explain --format json`` gives each move's command as the text prints it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from hyperpod_gov.cli import main
from tests.test_cli_json import check

MOVES = Path(__file__).parent / "moves"
BEFORE, AFTER = str(MOVES / "before.yaml"), str(MOVES / "after.yaml")
MOVE = ("move: 2 nodes of ml.p5.48xlarge from use1-infer/gpu to use1-train/gpu-worker (MoveClusterNodes; run before "
        "deploying; instances 4 -> 2 and 4 -> 6)")
# the governance changes a count change of use1-infer/gpu (4 -> 2) makes, when nothing explains it
INFER_COUNTS = ["capacity ml.p5.48xlarge (instances): 4 -> 2", "instance group gpu instances: 4 -> 2",
                "instance group gpu guaranteed instances: 4 -> 2"]


def _data(path: str) -> dict:
    return yaml.safe_load(Path(path).read_text())


def _write(tmp_path: Path, data: dict, name: str) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def _group(data: dict, cluster: str, group: str) -> dict:
    member = next(c for c in data["clusters"] if c["name"] == cluster)
    return next(g for g in member["cluster"]["instanceGroups"] if g["name"] == group)


def _sections(out: str) -> tuple[list[str], dict[str, list[str]]]:
    """The lines before the first cluster, and each cluster's lines."""
    top: list[str] = []
    sections: dict[str, list[str]] = {}
    current = top
    for line in out.splitlines():
        if line.startswith("cluster "):
            current = sections.setdefault(line.split()[1].rstrip(":"), [])
        current.append(line)
    return top, sections


def _json_diff(capsys, old: str, new: str, *flags: str) -> tuple[int, dict]:
    code = main(["diff", old, new, "--governance-only", "--format", "json", *flags])
    return code, check("fleet-diff", json.loads(capsys.readouterr().out))


def _changes(doc: dict, cluster: str) -> list[str]:
    return [c["words"] for c in doc["clusters"][cluster]["changes"]]


def test_a_move_whose_counts_show_it_is_one_line_and_not_two_count_changes(capsys):
    assert main(["diff", BEFORE, AFTER, "--governance-only"]) == 0
    top, sections = _sections(capsys.readouterr().out)
    assert top == [MOVE]
    text = "\n".join(line for lines in sections.values() for line in lines)
    assert "instances: 4 ->" not in text and "(instances): 4 ->" not in text
    # the clusters' other changes are still theirs: the quota that grew with the moved nodes, the reviews
    assert "    team research owns: 32 GPUs (ml.p5.48xlarge) -> 48 GPUs (ml.p5.48xlarge)" in sections["use1-train"]
    assert "    team research: review (cluster capacity): ml.p5.48xlarge instances 4 -> 2" in sections["use1-infer"]


def test_the_json_diff_has_the_move_and_leaves_its_count_changes_out(capsys):
    code, doc = _json_diff(capsys, BEFORE, AFTER)
    assert code == 0 and doc["changed"] is True
    assert doc["moves"] == [{"from": {"cluster": "use1-infer", "instanceGroup": "gpu"},
                             "to": {"cluster": "use1-train", "instanceGroup": "gpu-worker"}, "count": 2,
                             "instanceType": "ml.p5.48xlarge", "matches": True,
                             "note": "MoveClusterNodes; run before deploying; instances 4 -> 2 and 4 -> 6"}]
    assert not [w for w in _changes(doc, "use1-infer") + _changes(doc, "use1-train") if "instances" in w]
    assert _changes(doc, "use1-infer") == ["the 16 unowned GPUs of ml.p5.48xlarge are no longer unowned"]


def test_without_the_move_entry_the_counts_are_two_count_changes(tmp_path, capsys):
    data = _data(AFTER)
    del data["fleet"]
    code, doc = _json_diff(capsys, BEFORE, _write(tmp_path, data, "new.yaml"))
    assert doc["moves"] == []
    assert [w for w in _changes(doc, "use1-infer") if "instances" in w] == INFER_COUNTS
    assert "instance group gpu-worker instances: 4 -> 6" in _changes(doc, "use1-train")


def test_a_move_that_does_not_explain_the_counts_is_a_finding_and_the_counts_stay(tmp_path, capsys):
    data = _data(AFTER)
    _group(data, "use1-train", "gpu-worker")["count"] = 7  # -2 on the source, +3 on the target
    new = _write(tmp_path, data, "new.yaml")
    code, doc = _json_diff(capsys, BEFORE, new)
    (move,) = doc["moves"]
    assert move["matches"] is False
    assert move["note"].startswith("does not explain the counts (review): use1-infer/gpu 4 -> 2 (-2) and "
                                   "use1-train/gpu-worker 4 -> 7 (+3), where the spec's moves change them by -2 and +2")
    assert [w for w in _changes(doc, "use1-infer") if "instances" in w] == INFER_COUNTS
    assert "instance group gpu-worker instances: 4 -> 7" in _changes(doc, "use1-train")
    assert main(["diff", BEFORE, new, "--governance-only"]) == 0
    top, _ = _sections(capsys.readouterr().out)
    assert top == [f"move: 2 nodes of ml.p5.48xlarge from use1-infer/gpu to use1-train/gpu-worker: {move['note']}"]


def test_a_new_move_entry_without_count_changes_is_a_finding_and_a_change(tmp_path, capsys):
    data = _data(BEFORE)
    data["fleet"] = _data(AFTER)["fleet"]
    new = _write(tmp_path, data, "new.yaml")
    code, doc = _json_diff(capsys, BEFORE, new, "--fail")
    (move,) = doc["moves"]
    assert move["matches"] is False and "use1-infer/gpu 4 -> 4 (unchanged)" in move["note"]
    assert all(not d["changed"] for d in doc["clusters"].values())  # nothing else changed ...
    assert code == 1 and doc["changed"] is True  # ... and --fail counts the move


def test_a_move_carried_over_unchanged_is_no_change(capsys):
    code, doc = _json_diff(capsys, AFTER, AFTER, "--fail")
    (move,) = doc["moves"]
    assert move["matches"] is True and move["note"].startswith("listed in the old spec too")
    assert code == 0 and doc["changed"] is False


def test_a_group_the_old_spec_lacks_does_not_match(tmp_path, capsys):
    old = _data(BEFORE)
    _group(old, "use1-infer", "gpu")["name"] = "gpu-old"
    code, doc = _json_diff(capsys, _write(tmp_path, old, "old.yaml"), AFTER)
    (move,) = doc["moves"]
    assert move["matches"] is False and "use1-infer/gpu is not in the old spec" in move["note"]


def test_two_moves_through_one_group_match_on_their_sum(tmp_path, capsys):
    """2 nodes to use1-train and 1 more back to use1-infer's other p5 group: use1-infer/gpu falls by 2, gpu-b rises
    by 1, use1-train/gpu-worker rises by 2 and falls by 1."""
    old, new = _data(BEFORE), _data(AFTER)
    for data, count in ((old, 1), (new, 2)):
        infer = next(c for c in data["clusters"] if c["name"] == "use1-infer")["cluster"]["instanceGroups"]
        infer.append({"name": "gpu-b", "instanceType": "ml.p5.48xlarge", "count": count, "volumeSizeGb": 500})
    _group(new, "use1-train", "gpu-worker")["count"] = 5
    new["fleet"]["moves"].append({"from": {"cluster": "use1-train", "instanceGroup": "gpu-worker"},
                                  "to": {"cluster": "use1-infer", "instanceGroup": "gpu-b"}, "count": 1})
    new["teams"][0]["quota"]["use1-train"][0]["accelerators"] = 40
    code, doc = _json_diff(capsys, _write(tmp_path, old, "old.yaml"), _write(tmp_path, new, "new.yaml"))
    assert [m["matches"] for m in doc["moves"]] == [True, True]
    assert not [w for c in ("use1-infer", "use1-train") for w in _changes(doc, c) if "instances" in w]
    _group(new, "use1-train", "gpu-worker")["count"] = 6  # the second move no longer shows in the target's count
    code, doc = _json_diff(capsys, _write(tmp_path, old, "old.yaml"), _write(tmp_path, new, "new.yaml"))
    assert [m["matches"] for m in doc["moves"]] == [False, False]
    assert "instance group gpu-worker instances: 4 -> 6" in _changes(doc, "use1-train")


def test_explain_json_gives_each_move_with_the_command_the_text_prints(capsys):
    assert main(["explain", AFTER]) == 0
    text = capsys.readouterr().out
    assert main(["explain", AFTER, "--format", "json"]) == 0
    doc = check("fleet-explain", json.loads(capsys.readouterr().out))
    (move,) = doc["moves"]
    assert f"    {move['command']}\n" in text and move["command"].startswith("aws sagemaker move-cluster-nodes ")
    assert {k: v for k, v in move.items() if k != "command"} == {
        "from": {"cluster": "use1-infer", "instanceGroup": "gpu"},
        "to": {"cluster": "use1-train", "instanceGroup": "gpu-worker"}, "count": 2, "instanceType": "ml.p5.48xlarge",
        "region": "us-east-1"}
    assert main(["explain", BEFORE, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["moves"] == []
