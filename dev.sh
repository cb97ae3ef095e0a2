#!/usr/bin/env bash
# The project's one entry point. Installs what it needs into ./.venv and
# ./node_modules (Python packages pinned by constraints.txt, Node.js 22 and the
# CDK CLI pinned by package-lock.json), then runs one job:
#   ./dev.sh synth [SPEC]  validate, explain and synthesize SPEC (default examples/enterprise.yaml) into build/
#   ./dev.sh test [ARGS]   run the whole test suite on every core (pytest ARGS; -n 0 for one process)
#   ./dev.sh bench         run the benchmarks in bench/ (not part of the tests)
#   ./dev.sh cdk ARGS      the pinned AWS CDK CLI, e.g. ./dev.sh cdk synth -c spec=examples/startup.yaml
set -euo pipefail
cd "$(dirname "$0")"

PY=${PYTHON:-python3}
# uv (from PyPI, into .venv, pinned here) installs the pinned packages; pip where uv cannot be installed or cannot
# install them. With warm caches on 2 cores, uv took 4.4 s (3.8 s of CPU) where pip took 224 s (123 s of CPU, most
# of it compiling every installed module's bytecode), bench/install_steps.sh, 7 December.
uv_version=0.13.9
PROGRESS_SECONDS=15  # a line at least this often during a long step, so that a silent install does not look hung

say() { echo "dev.sh: $*" >&2; }

# A long step prints "still WHAT (N s)" from a background loop until progress_stop (or the end of dev.sh, by the
# EXIT trap). The loop also ends by itself once dev.sh is gone (killed), and kills its own sleep when stopped.
beat=""
heartbeat() {
  local what=$1 start=$SECONDS sleeper=""
  trap '[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null; exit 0' TERM
  while :; do
    sleep "$PROGRESS_SECONDS" &
    sleeper=$!
    wait "$sleeper"
    kill -0 "$$" 2>/dev/null || exit 0
    say "still $what ($((SECONDS - start)) s)"
  done
}
progress_start() { progress_stop; heartbeat "$1" & beat=$!; }
progress_stop() {
  if [ -n "$beat" ]; then
    kill "$beat" 2>/dev/null || true
    wait "$beat" 2>/dev/null || true
    beat=""
  fi
}
trap progress_stop EXIT

# Shows the installer's lines that name progress (unbuffered all the way, so each shows as it comes); the whole
# output goes to LOG. Fails as the installer does.
filtered() {
  local log=$1 pattern=$2; shift 2
  PYTHONUNBUFFERED=1 "$@" 2>&1 | tee "$log" | { grep --line-buffered -E "$pattern" || true; } | sed -u 's/^/  /' >&2
}

# Imports every module of the library (and what jsii and the kubectl layer choice import lazily), so that Python writes
# their bytecode and that of everything they import. Prints what did not import.
IMPORT_ALL='
import importlib, importlib.util, pkgutil, sys
import aws_cdk
names = ["hyperpod_gov", "aws_cdk.cx_api", "typeguard"] + ["stacks"] * bool(importlib.util.find_spec("stacks"))
names += ["aws_cdk." + m.name for m in pkgutil.iter_modules(aws_cdk.__path__)
          if m.name.startswith("lambda_layer_kubectl_v")]
failed = []
for name in list(names):
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {exc!r}")
        continue
    for sub in pkgutil.walk_packages(getattr(module, "__path__", []), name + ".", onerror=failed.append):
        try:
            importlib.import_module(sub.name)
        except Exception as exc:
            failed.append(f"{sub.name}: {exc!r}")
for line in failed:
    print("dev.sh: not imported:", line, file=sys.stderr)
sys.exit(1 if failed else 0)
'

install_python_packages() {
  progress_start "installing Python packages"
  if .venv/bin/python -m pip install -q --disable-pip-version-check "uv==$uv_version" >.venv/uv-install.log 2>&1; then
    say "installing Python packages into .venv with uv $uv_version (pinned by constraints.txt)"
    # aws-cdk-lib and aws-cdk.cloud-assembly-schema both ship aws_cdk/cloud_assembly_schema/__init__.py. pip installs
    # a package after its dependencies, so aws-cdk-lib's copy is the one left, and jsii needs it (without it every
    # synth fails: "Unknown interface: aws-cdk-lib.cloud_assembly_schema.MetadataEntry"); uv installs them in
    # parallel and may leave the other. So aws-cdk-lib is installed once more after the rest (about 1 s, from uv's
    # cache).
    if filtered .venv/install.log '^(Resolved|Prepared|Installed|Uninstalled|Built|error|  [×x] )' \
        .venv/bin/uv pip install --python .venv/bin/python -c constraints.txt -e '.[test]' &&
      .venv/bin/uv pip install -q --python .venv/bin/python -c constraints.txt --no-deps --reinstall-package \
        aws-cdk-lib aws-cdk-lib >>.venv/install.log 2>&1; then
      progress_stop
      return
    fi
    say "uv could not install them (.venv/install.log); pip tries"
  else
    say "uv $uv_version could not be installed from the package index (.venv/uv-install.log); pip installs instead"
  fi
  say "installing Python packages into .venv with pip (pinned by constraints.txt)"
  filtered .venv/install.log '^(Collecting|Successfully installed|ERROR)' \
    .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off -c constraints.txt -e '.[test]' || {
    say "the install of the Python packages failed; the whole log is in .venv/install.log"; exit 2; }
  progress_stop
}

setup() {
  if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "hyperpod-gov needs Python 3.11 or later (found $("$PY" --version 2>&1))" >&2
    exit 2
  fi
  if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    progress_start "creating .venv"
    "$PY" -m venv .venv
    progress_stop
  fi
  local want have
  want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
  have=$(cat .venv/.hyperpod-gov-installed 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    install_python_packages
    echo "$want" > .venv/.hyperpod-gov-installed
  fi
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  have=$(cat node_modules/.hyperpod-gov-installed 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    say "installing Node.js 22, the AWS CDK CLI and cdk-assets into node_modules (pinned by package-lock.json)"
    progress_start "installing node_modules"
    npm ci --no-audit --no-fund --loglevel=error
    progress_stop
    echo "$want" > node_modules/.hyperpod-gov-installed
  fi
  # jsii runs on this Node.js 22 (the npm package `node`), not the machine's Node.js 20.
  export PATH="$PWD/node_modules/.bin:$PWD/.venv/bin:$PATH"
  node -e 'process.exit(parseInt(process.versions.node) >= 22 ? 0 : 1)' || {
    echo "node_modules/.bin/node is not Node.js 22+; delete node_modules and retry" >&2; exit 2; }
  # The project's own bytecode at both levels (the CLI and the test workers import it; cdk.json's app runs under -O),
  # brought up to date here: where Python writes none itself, every process would compile these sources again.
  local own=(hyperpod_gov)
  [ ! -d stacks ] || own+=(stacks)
  python -m compileall -q -o 0 -o 1 "${own[@]}" >/dev/null
  # The same for what the library imports from the installed packages, at both levels, once per install and set of
  # import lines: cdk.json runs the app under `python -O` (jsii's type checks off), which reads `.opt-1.pyc` files
  # that neither installer writes, and uv writes no plain ones either. Where Python writes no bytecode itself
  # (PYTHONDONTWRITEBYTECODE, as on CI machines), every `cdk synth` would compile aws-cdk-lib's sources again (about
  # 9 s). Importing every module of the library writes just those: 52 MB of `.opt-1.pyc` (16 s of CPU) where
  # `compileall -O` of all site-packages wrote 315 MB (80 s of CPU); after it an -O synth of examples/enterprise.yaml
  # compiled 0.26 MB (jsii's and the kubectl layer choice's lazy imports, since imported here too).
  want=$( (cat pyproject.toml constraints.txt; grep -rhE '^\s*(from|import) ' --include='*.py' "${own[@]}" | sort -u) \
    | sha256sum | cut -d' ' -f1)
  have=$(cat .venv/.hyperpod-gov-compiled 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    say "compiling the bytecode of what the library imports (plain and python -O), once per install"
    progress_start "compiling the bytecode of what the library imports"
    local plain optimized failed=0
    env -u PYTHONDONTWRITEBYTECODE python -c "$IMPORT_ALL" & plain=$!
    env -u PYTHONDONTWRITEBYTECODE python -O -c "$IMPORT_ALL" & optimized=$!
    wait "$plain" || failed=1
    wait "$optimized" || failed=1
    [ "$failed" = 0 ] || say "some modules did not import (above); they compile when something imports them"
    progress_stop
    echo "$want" > .venv/.hyperpod-gov-compiled
  fi
  # CDK's template check builds its engine in every process that checks templates (2 to 5 s of CPU); built here
  # once per engine and Node.js version and kept as an image that each process restores (template_checks.prepare).
  progress_start "building the template check's engine image"
  python -m hyperpod_gov.template_checks || say "no image of the template check's engine: each synth builds it"
  progress_stop
}

job=${1:-}
shift || true
case "$job" in
  synth)
    setup
    spec=${1:-examples/enterprise.yaml}
    hyperpod-gov explain "$spec"
    hyperpod-gov synth "$spec" --out build
    ;;
  test)
    setup
    # One worker per core (pytest-xdist), a module's tests on one worker (tests/conftest.py: scope_of).
    # Later arguments win: `./dev.sh test -n 0 tests/x.py` runs in this process.
    # pytest keeps its assertion-rewritten test modules (tests/**/__pycache__) only where Python may write bytecode.
    # Where PYTHONDONTWRITEBYTECODE is set (CI machines), every worker rewrote every test module in every run: a
    # collection took 4.5 to 5.6 s, 3.1 to 3.2 s with them kept (`pytest --collect-only`, 5 December, 2 runs each).
    # Everything else a test process imports is compiled already (setup).
    unset PYTHONDONTWRITEBYTECODE
    exec python -m pytest -n "${HYPERPOD_GOV_TEST_WORKERS:-auto}" --dist loadscope "$@"
    ;;
  cdk)
    setup
    exec cdk "$@"
    ;;
  bench)
    setup
    for b in bench/*.py; do python "$b"; done
    ;;
  *)
    echo "usage: ./dev.sh synth [SPEC] | test [PYTEST ARGS] | bench | cdk [CDK ARGS]" >&2
    exit 2
    ;;
esac
