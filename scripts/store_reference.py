"""Regenerate the stored reference results of a suite (the package data under ``privbandit/data/reference``).

Runs every baseline cell of the suite into ``--out`` (resumable: finished cells are kept), then packs the
cell files with their manifest (suite version, privbandit version, this command, round-stream
summaries, the machine they were made on) through :func:`privbandit.sim.reference.store_reference`::

    python scripts/store_reference.py --suite quick --out results/reference-quick --jobs -1
    python scripts/store_reference.py --suite paper --out results/reference-paper --jobs -1   # hours

Commit the two files it prints (``SUITE.tar.xz`` and ``SUITE.json``) whenever the suite version changes.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from privbandit.sim.reference import store_reference
    from privbandit.sim.suites import SUITES, get_suite
    from privbandit.sim.sweep import sweep

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", choices=sorted(SUITES), required=True)
    p.add_argument("--out", type=Path, required=True, help="results folder of the baseline cells")
    p.add_argument("--jobs", type=int, default=-1, help="parallel workers (default -1: all cores)")
    args = p.parse_args(argv)
    suite = get_suite(args.suite)
    start = time.perf_counter()
    res = sweep(suite.cells(), args.out, jobs=args.jobs, progress=True)
    print(f"{len(res.ran)} cells run, {len(res.skipped)} found finished in {time.perf_counter() - start:.1f} s")
    command = f"python scripts/store_reference.py --suite {shlex.quote(args.suite)} --out DIR --jobs {args.jobs}"
    archive, manifest = store_reference(suite, args.out, command)
    print(f"{archive} ({archive.stat().st_size / 1024:.0f} KiB)\n{manifest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
