"""The wheel: `hyperpod_gov` its only top-level package, with everything it runs inside it, and the command working
from a fresh virtualenv with no repository beside it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from the files git tracks (nothing a local build or install left in the checkout), offline:
    the test environment's own setuptools, no build isolation."""
    source = tmp_path_factory.mktemp("source")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in tracked.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(source)], check=True, capture_output=True)
    (built,) = out.glob("hyperpod_gov-*.whl")
    return built


def test_the_wheel_holds_hyperpod_gov_alone_with_its_assets(wheel):
    from hyperpod_gov import __version__

    assert wheel.name == f"hyperpod_gov-{__version__}-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert top == {"hyperpod_gov", f"hyperpod_gov-{__version__}.dist-info"}, top
    tracked = subprocess.run(["git", "ls-files", "hyperpod_gov"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    assert set(tracked) <= set(names), set(tracked) - set(names)  # lifecycle scripts, handlers, JavaScript, data
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert f"hyperpod_gov-{__version__}.dist-info/licenses/LICENSE" in names
    assert "hyperpod_gov/py.typed" in names
    metadata = zipfile.ZipFile(wheel).read(f"hyperpod_gov-{__version__}.dist-info/METADATA").decode()
    assert "License-Expression: Apache-2.0" in metadata
    entry = zipfile.ZipFile(wheel).read(f"hyperpod_gov-{__version__}.dist-info/entry_points.txt").decode()
    assert "hyperpod-gov = hyperpod_gov.cli:run" in entry


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh virtualenv with the wheel installed and no repository beside it; its dependencies are this test
    environment's (a .pth to its site-packages: no package index is reached)."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)  # the pip Python bundles
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")  # its .pth files are not read
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                    "--disable-pip-version-check", str(wheel)], check=True, capture_output=True)
    return venv


def _run(venv: Path, *args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JSII_NODE")}
    environment.update(env or {})
    return subprocess.run([str(venv / "bin" / "hyperpod-gov"), *args], cwd=cwd, capture_output=True, text=True,
                          env=environment, timeout=600)


def test_the_installed_command_validates_explains_and_synthesizes_without_the_repository(installed, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(EXAMPLES / "startup.yaml", work / "governance.yaml")
    located = subprocess.run([str(installed / "bin" / "python"), "-c",
                              "import hyperpod_gov; print(hyperpod_gov.__file__)"],
                             cwd=work, capture_output=True, text=True, check=True).stdout
    assert str(installed) in located and str(ROOT) not in located
    version = _run(installed, "--version", cwd=work)
    assert version.returncode == 0 and version.stdout.startswith("hyperpod-gov ")
    assert _run(installed, "validate", "governance.yaml", cwd=work).returncode == 0
    explained = _run(installed, "explain", "governance.yaml", cwd=work)
    assert explained.returncode == 0 and "startup-capacity" in explained.stdout
    node = ROOT / "node_modules" / ".bin" / "node"
    if not node.exists():
        pytest.skip("no node_modules/.bin/node: ./dev.sh installs Node.js 22 there")
    synth = _run(installed, "synth", "governance.yaml", "--out", "build", cwd=work, env={"JSII_NODE": str(node)})
    assert synth.returncode == 0, synth.stderr[-3000:]
    assert (work / "build" / "cdk.out" / "startup-capacity.template.json").exists()
    assert (work / "build" / "k8s" / "cluster.yaml").exists()
    assert "!!" not in synth.stderr  # jsii's banner for an unsupported Node.js
