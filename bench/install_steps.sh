#!/usr/bin/env bash
# Times each step of dev.sh's first install, one by one, in a fresh clone of this checkout's HEAD, with the Python
# packages installed by pip or by uv (from PyPI, pinned as dev.sh pins it):
#   bench/install_steps.sh pip|uv [CLONE_DIR]
# COMPILE=imports (default) times dev.sh's bytecode step (every module of the library imported at both levels, in
# parallel); COMPILE=all times the step it replaced (`python -O -m compileall -j 0` of all site-packages).
# Prints one line a step: wall seconds and CPU seconds (user + sys of the step and every process it waited for,
# from /usr/bin/time). Not part of ./dev.sh bench (that runs bench/*.py). Caches are whatever pip's, uv's and npm's
# are; point PIP_CACHE_DIR, UV_CACHE_DIR and npm_config_cache at empty folders for a cold run.
set -euo pipefail
installer=${1:?usage: bench/install_steps.sh pip|uv [CLONE_DIR]}
here=$(cd "$(dirname "$0")/.." && pwd)
clone=${2:-$(mktemp -d /tmp/install-steps-XXXXXX)/clone}
uv_pin=${UV_PIN:-$(sed -n 's/^uv_version=//p' "$here/dev.sh")}
git clone -q "$here" "$clone"
cd "$clone"
times=$(mktemp)
step() {  # step NAME COMMAND...: run it under /usr/bin/time, output to the clone's step-NAME.log
  local name=$1; shift
  /usr/bin/time -f '%e %U %S' -o "$times" "$@" >"step-$name.log" 2>&1 || {
    echo "step $name failed; see $clone/step-$name.log" >&2; exit 1; }
  read -r wall user sys <"$times"
  printf '%-22s wall %7.1f s  cpu %7.1f s (user %.1f, sys %.1f)\n' "$name" "$wall" "$(echo "$user + $sys" | bc)" \
    "$user" "$sys"
}
step venv python3 -m venv .venv
case "$installer" in
  pip)
    step python-packages .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off \
      -c constraints.txt -e '.[test]'
    ;;
  uv)
    step uv-itself .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off "uv==$uv_pin"
    step python-packages .venv/bin/uv pip install --python .venv/bin/python -c constraints.txt -e '.[test]'
    ;;
  *) echo "installer: pip or uv" >&2; exit 2 ;;
esac
step npm-ci npm ci --no-audit --no-fund --loglevel=error
export PATH="$PWD/node_modules/.bin:$PWD/.venv/bin:$PATH"
own=(hyperpod_gov)
[ ! -d stacks ] || own+=(stacks)
step project-compile python -m compileall -q -o 0 -o 1 "${own[@]}"
if [ "${COMPILE:-imports}" = all ]; then
  purelib=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  step compileall-O python -O -m compileall -q -j 0 "$purelib"
else
  import_all=$(sed -n "/^IMPORT_ALL='/,/^'/p" "$here/dev.sh" | sed '1d;$d')
  export import_all
  step import-compile env -u PYTHONDONTWRITEBYTECODE bash -c \
    'python -c "$import_all" & a=$!; python -O -c "$import_all" & b=$!; wait $a; x=$?; wait $b; exit $((x | $?))'
fi
step template-checks python -m hyperpod_gov.template_checks
echo "clone: $clone"
