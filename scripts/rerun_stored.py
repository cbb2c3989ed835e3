"""Run stored baseline cells again on this machine and compare them with the stored tables.

The stored reference results (``privbandit/data/reference``) stand in for a run wherever a cell's round stream
matches the stored one up to rounding (:data:`privbandit.bench.stored.STREAM_TOLERANCE`). This script measures
what that means for the agents: it re-runs a sample of a suite's stored cells here, under whatever CPU settings
the shell gives it, and writes one row per cell: the stored and the re-run final regret, their relative
difference, whether the tables are equal bit for bit, and how far the cell's round stream is from the stored one.
To run as another machine would, limit numpy's SIMD dispatch and pick another OpenBLAS kernel::

    python scripts/rerun_stored.py --suite quick --jobs 2 --out docs/data/rerun_stored.csv
    NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL" OPENBLAS_CORETYPE=Prescott \\
        python scripts/rerun_stored.py --suite quick --jobs 2 --out docs/data/rerun_stored.csv
    NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL" OPENBLAS_CORETYPE=Prescott \\
        python scripts/rerun_stored.py --suite paper --streams heavy-tailed --sample 60 --jobs 2 \\
        --out docs/data/rerun_stored.csv
    python scripts/rerun_stored.py --from docs/data/rerun_stored.csv --markdown

(the names after ``NPY_DISABLE_CPU_FEATURES`` are the "found" SIMD extensions ``numpy.show_config()`` lists).
``--out`` appends to an existing file, so the runs above make one table. ``--from`` reports a saved file.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

SETTINGS = ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE")
"""The environment variables that make this machine compute as another would; each row records them."""


def sampled(cells: list, streams: str | None, sample: int | None) -> list:
    """The cells whose stream key contains ``streams``, ``sample`` of them spread over the list (all if None)."""
    from privbandit.bench.stored import stream_key

    cells = [c for c in cells if streams is None or streams in stream_key(c)]
    if sample is not None and sample < len(cells):
        cells = [cells[i] for i in np.linspace(0, len(cells) - 1, sample).round().astype(int)]
    return cells


def rerun(suite_name: str, cells: list, jobs: int) -> pd.DataFrame:
    """Re-run ``cells`` beside their stored tables; one row per cell."""
    from privbandit.bench.cells import cell_path
    from privbandit.bench.stored import (
        install_stored,
        machine,
        stored_manifest,
        stream_difference,
        stream_key,
        stream_summary,
    )
    from privbandit.bench.suites import get_suite
    from privbandit.bench.sweep import sweep
    from privbandit.report.files import read_cell

    stored_streams = stored_manifest(suite_name)["streams"]
    here = machine()
    setting = " ".join(f"{k}={os.environ[k]}" for k in SETTINGS if os.environ.get(k)) or "as stored"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        install_stored(get_suite(suite_name), Path(tmp) / "stored", {c.key for c in cells})
        sweep(cells, Path(tmp) / "rerun", jobs=jobs, progress=True)
        for c in cells:
            again = read_cell(cell_path(Path(tmp) / "rerun" / "cells", c))
            stored = read_cell(cell_path(Path(tmp) / "stored" / "cells", c))
            a, b = float(again["cum_regret"].iloc[-1]), float(stored["cum_regret"].iloc[-1])
            rows.append(dict(suite=suite_name, setting=setting, numpy_simd=here["numpy_simd"], blas=here["blas"],
                             stream=stream_key(c), agent=c.agent.label, epsilon=c.epsilon, stored_regret=b,
                             rerun_regret=a, rel_diff=abs(a - b) / max(abs(b), 1e-300),
                             table_identical=bool(again.equals(stored)),
                             stream_difference=stream_difference(stored_streams[stream_key(c)], stream_summary(c))))
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    """One row per (suite, setting): cells, streams not bit for bit the stored ones, identical tables, and the
    largest and median relative difference of final regret."""
    lines = ["| suite | settings | numpy SIMD used | BLAS | cells | streams not bit-identical | tables identical "
             "| largest relative difference of final regret | median |",
             "|---|---|---|---|---:|---:|---:|---:|---:|"]
    for (suite, setting, simd, blas), g in table.groupby(["suite", "setting", "numpy_simd", "blas"], sort=False):
        inexact = g.loc[g["stream_difference"] > 0, "stream"].nunique()
        rel = g["rel_diff"]
        lines.append(f"| {suite} | {setting} | {simd} | {blas} | {len(g)} | {inexact} of {g['stream'].nunique()} "
                     f"| {int(g['table_identical'].sum())} | {rel.max():.2g} | {rel.median():.2g} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from privbandit.bench.suites import SUITES, get_suite

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", choices=sorted(SUITES))
    p.add_argument("--streams", help="only the cells whose stream (env|T=horizon|seed) contains this text")
    p.add_argument("--sample", type=int, help="this many cells, spread over the suite's list (default: all)")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", type=Path, help="CSV to append the rows to")
    p.add_argument("--from", dest="source", type=Path, help="report a saved CSV instead of running")
    p.add_argument("--markdown", action="store_true", help="print the summary as a Markdown table")
    args = p.parse_args(argv)
    if (args.suite is None) == (args.source is None):
        p.error("give --suite (run) or --from (report a saved run)")
    if args.sample is not None and args.sample < 1:
        p.error(f"--sample must be a positive count, got {args.sample}")
    if args.source is not None:
        try:
            table = pd.read_csv(args.source)
        except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            p.error(f"--from {args.source}: {exc}")
        missing = {"suite", "setting", "numpy_simd", "blas", "stream", "rel_diff", "table_identical",
                   "stream_difference"} - set(table.columns)
        if missing:
            p.error(f"--from {args.source}: not a saved run of this script (no column {', '.join(sorted(missing))})")
    else:
        table = rerun(args.suite, sampled(get_suite(args.suite).cells(), args.streams, args.sample), args.jobs)
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            table.to_csv(args.out, mode="a", header=not args.out.exists(), index=False)
    print(markdown(table) if args.markdown else table.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
