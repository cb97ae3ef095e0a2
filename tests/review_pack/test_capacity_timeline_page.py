"""Issue 57 on the review page: a capacity timeline (`review-pack --capacity`, `simulate --format html --capacity`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from hyperpod_gov.review_pack.cli import run
from tests.conftest import EXAMPLES
from tests.review_pack.conftest import TRACE, chatbot_change, pack_args
from tests.review_pack.test_formats import _simulate

ELASTIC = EXAMPLES / "elastic.yaml"
ELASTIC_TRACE = EXAMPLES / "elastic-trace.csv"


def _digest(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name] + b"\0")
    return h.hexdigest()


def _folder(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


# Recorded before the capacity timeline reached the page, with constraints.txt's matplotlib (3.11.2): every file of
# each pack, and each `simulate --format html` page. A page without --capacity must keep these bytes.
BEFORE = {
    "startup": "ecec46c09d6e4ee3b3330e128a88017c2d909a629f1eba882325418c576b7650",
    "startup-change": "9edb0d37da52096e2c47cfd3ac6e1b2f068eedc4979b7d25136a8416ae92010b",
    "chatbot-change": "f9d9f5cdabde1f8e33b5a0706a7b45c350e338eaba13b975fd15e2f93151f09c",
    "elastic": "086e50496dacc3c51a2464ac07b0e71f069d7e2ce677a30b92bdda4f9fa4f0a2",
    "simulate-elastic": "ffba9d8714d0fa6235f8bee190e03c5850384c020ca0b33cc5940e55ca14001a",
    "simulate-startup-compare": "56112467cd9a6845c6ac19437dd4db46706423d786f19bb91003bb6a89927d4c",
}


@pytest.fixture(scope="module")
def outputs_without_capacity(packs, tmp_path_factory) -> dict[str, dict[str, bytes]]:
    root = tmp_path_factory.mktemp("before")
    out = {name: _folder(packs[name]) for name in ("startup", "startup-change")}
    chatbot = root / "chatbot"
    assert run(pack_args(chatbot_change(root), chatbot, "--base", str(EXAMPLES / "startup.yaml"),
                         "--trace", str(TRACE))) == 0
    out["chatbot-change"] = _folder(chatbot)
    elastic = root / "elastic"
    assert run(pack_args(ELASTIC, elastic, "--trace", str(ELASTIC_TRACE))) == 0
    out["elastic"] = _folder(elastic)
    code, page, err = _simulate(str(ELASTIC), "--trace", str(ELASTIC_TRACE), "--format", "html")
    assert code == 0, err
    out["simulate-elastic"] = {"page.html": page.encode()}
    code, page, err = _simulate(str(EXAMPLES / "startup.yaml"), "--trace", str(TRACE), "--compare",
                                str(packs["change-spec"]), "--format", "html")
    assert code == 0, err
    out["simulate-startup-compare"] = {"page.html": page.encode()}
    return out


@pytest.mark.parametrize("name", BEFORE)
def test_without_capacity_the_page_keeps_its_bytes(outputs_without_capacity, name):
    import os
    if os.environ.get("W57_DUMP"):
        for f, b in outputs_without_capacity[name].items():
            Path(os.environ["W57_DUMP"], name).mkdir(parents=True, exist_ok=True)
            Path(os.environ["W57_DUMP"], name, f).write_bytes(b)
    assert _digest(outputs_without_capacity[name]) == BEFORE[name]
