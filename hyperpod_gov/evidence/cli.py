"""`hyperpod-gov evidence SPEC --base OLD [--trace T] [--drift DRIFT.json] --out DIR` and
`hyperpod-gov evidence --verify DIR`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..contracts.review import iso_date
from ..spec.errors import SpecError

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


def configure_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Arguments of `evidence`."""
    parser.add_argument("spec", nargs="?", help="the governance spec being approved (YAML)")
    parser.add_argument("--base", metavar="OLD_SPEC", help="the spec before the change (required to write)")
    parser.add_argument("--trace", metavar="TRACE.csv", help="simulate this workload trace on both specs")
    parser.add_argument("--drift", metavar="DRIFT.json", help="the output of `hyperpod-gov drift --format json`")
    parser.add_argument("--out", metavar="DIR", help="a new (or empty) folder to write the record to")
    parser.add_argument("--environment", metavar="NAME", help="record this environment of both specs")
    parser.add_argument("--today", type=iso_date, default=None, metavar="YYYY-MM-DD",
                        help="contract status as of this date (default: today)")
    parser.add_argument("--verify", metavar="DIR", help="check DIR against its MANIFEST.sha256 instead of writing")
    parser.set_defaults(func=run)
    return parser


def _usage(message: str) -> int:
    print(f"usage error: evidence: {message}", file=sys.stderr)
    return EXIT_USAGE


def verify(folder: Path) -> int:
    """0 when every file matches the manifest; 1 listing each changed, missing or extra file."""
    from .manifest import MANIFEST, verify_manifest

    try:
        result = verify_manifest(folder)
    except OSError as exc:
        print(f"{folder / MANIFEST}: cannot be read ({exc.strerror or exc}); is {folder} an evidence folder?",
              file=sys.stderr)
        return EXIT_INVALID
    if result.ok:
        print(f"{folder}: every file matches {MANIFEST}")
        return EXIT_OK
    print(f"{folder}: does not match {MANIFEST}:", file=sys.stderr)
    for line in result.lines():
        print(f"  {line}", file=sys.stderr)
    return EXIT_INVALID


def run(args: argparse.Namespace) -> int:
    """Write the record (0), or verify one; 1 for a bad input or a folder that does not match, 2 usage."""
    if args.verify is not None:
        if any(v is not None for v in (args.spec, args.base, args.trace, args.drift, args.out, args.environment)):
            return _usage("--verify DIR takes no other argument")
        return verify(Path(args.verify))
    if args.spec is None or args.base is None or args.out is None:
        return _usage("give SPEC --base OLD_SPEC --out DIR (or --verify DIR)")
    from .record import Request, write_evidence

    try:
        written = write_evidence(Request(spec=args.spec, base=args.base, out=Path(args.out), trace=args.trace,
                                         drift=args.drift, today=args.today,
                                         environment=args.environment))
    except SpecError as exc:
        n = len(exc.issues)
        print(f"{exc.source or args.spec}: {n} problem{'s' if n != 1 else ''}:", file=sys.stderr)
        for issue in exc.issues:
            print(f"  - {issue}", file=sys.stderr)
        return EXIT_INVALID
    print(f"{args.out}: {len(written)} files, manifest {Path(args.out) / 'MANIFEST.sha256'}")
    return EXIT_OK

