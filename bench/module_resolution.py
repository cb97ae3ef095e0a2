"""What jsii's Node.js spends resolving `require("aws-cdk-lib")` once per resource that `CfnInclude` reads, with
and without the preload that resolves each specifier once (hyperpod_gov/assets/jsii/resolve_once.js).

    python bench/module_resolution.py                    # 5,546 requires (the 300-team spec's resources), 7 rounds
    python bench/module_resolution.py --requires 1000 --rounds 11

aws-cdk-lib's jsii package is unpacked into a temporary folder; a Node.js process then loads it by its path (as
jsii's kernel does) and requires it by name from `cloudformation-include/lib/cfn-include.js`'s folder as many
times as asked (as `CfnInclude` does for each resource), timing that loop's CPU with `process.cpuUsage()`. The two
cases run in turn, round by round (`--preserve-symlinks`, as jsii starts its Node.js); medians of each and of the
ratio, pair by pair. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hyperpod_gov.cdk_start import preload_option  # noqa: E402
from hyperpod_gov.template_engine import cdk_tarball  # noqa: E402

LOOP = """
const [lib, times] = [process.argv[1], Number(process.argv[2])];
require(lib);
const fromInclude = require("node:module").createRequire(lib + "/cloudformation-include/lib/cfn-include.js");
const start = process.cpuUsage();
for (let i = 0; i < times; i++) fromInclude("aws-cdk-lib");
const spent = process.cpuUsage(start);
console.log(JSON.stringify({ ms: (spent.user + spent.system) / 1000 }));
"""


def loop_ms(node: str, lib: Path, times: int, preload: bool) -> float:
    env = {k: v for k, v in os.environ.items() if k != "NODE_OPTIONS"}
    if preload:
        env["NODE_OPTIONS"] = preload_option()
    done = subprocess.run([node, "--preserve-symlinks", "-e", LOOP, str(lib), str(times)], env=env,
                          capture_output=True, text=True, check=True, timeout=300)
    return json.loads(done.stdout)["ms"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requires", type=int, default=5546)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    node = shutil.which("node")
    tarball = cdk_tarball()
    if node is None or tarball is None:
        raise SystemExit("needs node on the PATH and aws-cdk-lib's jsii package (./dev.sh bench sets both up)")
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(tarball) as archive:
            archive.extractall(tmp, filter="data")
        lib = Path(tmp) / "package"
        without, with_preload = [], []
        for r in range(args.rounds):
            without.append(loop_ms(node, lib, args.requires, preload=False))
            with_preload.append(loop_ms(node, lib, args.requires, preload=True))
            print(f"round {r + 1}: {without[-1]:7.0f} ms without, {with_preload[-1]:7.0f} ms with the preload",
                  file=sys.stderr)
    ratios = [w / o for w, o in zip(with_preload, without)]
    print(f"{args.requires} requires of aws-cdk-lib from cfn-include's folder, CPU ms (medians of {args.rounds} "
          "rounds, in turn)")
    print(f"without the preload {statistics.median(without):8.0f}")
    print(f"with the preload    {statistics.median(with_preload):8.0f}   with/without {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
