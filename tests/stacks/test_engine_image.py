"""The template check's engine kept as an image (assets/template_checks/engine_image.js): a process started from
the image finds what a process that built its engine finds; a damaged image is built again and replaced, never
used, nor is an engine restored from it that does not answer the probe (the warm-up template) as the built one
did."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hyperpod_gov.template_checks import IMAGES, SCRIPT, prepare
from hyperpod_gov.template_engine import engine_files

# Findings of each kind the report carries: a property against its schema, a warning, an unknown type, a reference
# to nothing, none.
CRAFTED = {
    "schema": {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": "soon"}}}},
    "warning": {"Resources": {"Subnet": {"Type": "AWS::EC2::Subnet", "Properties": {
        "VpcId": "vpc-0123456789abcdef0", "CidrBlock": "10.0.0.0/24", "AvailabilityZone": "us-east-1a"}}}},
    "unknown-type": {"Resources": {"Thing": {"Type": "AWS::Nothing::Here", "Properties": {}}}},
    "reference": {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Ref": "Gone"}}}}},
    "clean": {"Resources": {"Topic": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "t"}}}},
}


def _check(images: Path, templates: list[Path]) -> dict:
    """One check process with its images in ``images``: its answer for ``templates`` (us-east-1). It runs as the
    check of a small app's synth runs (``TemplateChecks.start(tier_up=False)``: V8's baseline WebAssembly compiler
    alone), which builds the engine with half the CPU of V8's optimizing compiler; the test workers' shared checks
    restore the same image with the optimizing compiler on."""
    node = shutil.which("node")
    engine, rules = engine_files()
    request = [{"templatePath": str(t), "accountId": "111111111111", "region": "us-east-1"} for t in templates]
    done = subprocess.run([node, "--liftoff-only", str(SCRIPT), str(engine), str(rules), str(images)], check=True,
                          input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=300)
    return json.loads(done.stdout.splitlines()[0])


@pytest.fixture(scope="module")
def templates(tmp_path_factory, enterprise) -> list[Path]:
    folder = tmp_path_factory.mktemp("image-templates")
    for name, template in CRAFTED.items():
        (folder / f"{name}.template.json").write_text(json.dumps(template, indent=1))
    return sorted(folder.glob("*.template.json")) + sorted((enterprise.out_dir / "cdk.out").glob("*.template.json"))


def _damage(image: Path) -> None:
    """One byte changed inside the first compressed part: the header still fits, the part's checksum does not."""
    data = bytearray(image.read_bytes())
    at = data.index(b"\n") + 100
    data[at] ^= 0xFF
    image.write_bytes(bytes(data))


def _probed_otherwise(image: Path) -> None:
    """The image's record of what its engine answered to the probe, changed: as if the restore went wrong."""
    data = image.read_bytes()
    end = data.index(b"\n")
    header = json.loads(data[:end])
    header["probe"] = "[]"
    image.write_bytes(json.dumps(header).encode() + data[end:])


def test_an_engine_from_its_image_finds_what_a_built_engine_finds(templates, tmp_path):
    assert prepare()  # the image dev.sh keeps (built here if it is missing)
    images = tmp_path / "images"
    images.mkdir()
    (images / "engine-0000.zst").write_text("an image of another Node.js")  # removed once the new one is written
    kept = next((engine_files()[0].parent / IMAGES).glob("engine-*.zst"))
    shutil.copy(kept, images / kept.name)
    _probed_otherwise(images / kept.name)
    built = _check(images, templates)  # an engine that answers otherwise than its image says is not used
    written = sorted(images.glob("engine-*.zst"))
    assert built["restored"] is False and written == [images / kept.name]
    restored = _check(images, templates)  # the image the build wrote
    assert restored["restored"] is True
    assert restored["results"] == built["results"] and restored["version"] == built["version"]
    found = {Path(r["templatePath"]).name.split(".")[0]: {(d["ruleId"], d["severity"]) for d in r["diagnostics"]}
             for r in restored["results"]}
    assert found["schema"] == {("F3012", "FATAL")} and found["warning"] == {("W3010", "WARN")}
    assert found["unknown-type"] == {("F3006", "FATAL")} and found["reference"] == {("F1020", "FATAL")}
    assert found["clean"] == set()
    _damage(written[0])
    # the damage is found part-way into the restore: built in a fresh instance (asked the crafted findings alone:
    # checking the example's templates on that engine too cost about 1.5 s of CPU and tells nothing more)
    crafted = [t for t in templates if t.name.split(".")[0] in CRAFTED]
    rebuilt = _check(images, crafted)
    assert rebuilt["restored"] is False
    assert rebuilt["results"] == [r for r in built["results"] if Path(r["templatePath"]) in crafted]
