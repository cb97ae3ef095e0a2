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

say() { echo "dev.sh: $*" >&2; }

setup() {
  if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "hyperpod-gov needs Python 3.11 or later (found $("$PY" --version 2>&1))" >&2
    exit 2
  fi
  [ -x .venv/bin/python ] || { say "creating .venv"; "$PY" -m venv .venv; }
  local want have
  want=$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)
  have=$(cat .venv/.hyperpod-gov-installed 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    say "installing Python packages into .venv (pinned by constraints.txt; about 2 minutes the first time)"
    # Unbuffered all the way (pip's output, grep, sed), so each package shows as pip reaches it.
    if ! PYTHONUNBUFFERED=1 .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off \
        -c constraints.txt -e '.[test]' 2>&1 | tee .venv/pip-install.log \
        | { grep --line-buffered -E '^(Collecting|Successfully installed)' || true; } | sed -u 's/^/  /' >&2; then
      echo "dev.sh: pip install failed; the whole log is in .venv/pip-install.log" >&2
      exit 2
    fi
    echo "$want" > .venv/.hyperpod-gov-installed
  fi
  # cdk.json runs the app under `python -O` (jsii's type checks off), which reads `.opt-1.pyc` files that pip does not
  # write. Where Python writes no bytecode (PYTHONDONTWRITEBYTECODE, as on CI machines), every `cdk synth` would
  # compile aws-cdk-lib's sources again (about 9 s); compiled here once per install instead (about 40 s on 2 cores).
  have=$(cat .venv/.hyperpod-gov-optimized 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    say "compiling the installed packages' optimized bytecode (python -O), once per install"
    .venv/bin/python -O -m compileall -q -j 0 "$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
      >/dev/null 2>&1 || say "some installed files did not compile under -O; those compile when imported"
    echo "$want" > .venv/.hyperpod-gov-optimized
  fi
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  have=$(cat node_modules/.hyperpod-gov-installed 2>/dev/null || true)
  if [ "$want" != "$have" ]; then
    say "installing Node.js 22, the AWS CDK CLI and cdk-assets into node_modules (pinned by package-lock.json)"
    npm ci --no-audit --no-fund --loglevel=error
    echo "$want" > node_modules/.hyperpod-gov-installed
  fi
  # jsii runs on this Node.js 22 (the npm package `node`), not the machine's Node.js 20.
  export PATH="$PWD/node_modules/.bin:$PWD/.venv/bin:$PATH"
  node -e 'process.exit(parseInt(process.versions.node) >= 22 ? 0 : 1)' || {
    echo "node_modules/.bin/node is not Node.js 22+; delete node_modules and retry" >&2; exit 2; }
  # The project's own bytecode at both levels (the CLI and the test workers import it; cdk.json's app runs under -O),
  # brought up to date here: where Python writes none itself, every process would compile these sources again.
  python -m compileall -q hyperpod_gov stacks >/dev/null && python -O -m compileall -q hyperpod_gov stacks >/dev/null
  # CDK's template check builds its engine in every process that checks templates (2 to 5 s of CPU); built here
  # once per engine and Node.js version and kept as an image that each process restores (template_checks.prepare).
  python -m hyperpod_gov.template_checks || say "no image of the template check's engine: each synth builds it"
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
