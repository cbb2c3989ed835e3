"""The default audit's wall time against the quick suite's, on the same machine in one run.

Runs, as a user types them (each in its own process, progress bars off),

- ``privbandit audit --agent elim-jdp --epsilon 1`` (the audit at its defaults), and
- ``privbandit bench --suite quick --baselines rerun --out TMPDIR`` (every cell of the quick suite computed, in
  a fresh temporary folder),

alternating ``--repeats`` times (audit, suite, audit, suite, ...) so that a shared machine's load falls on both
alike, and prints each wall time, their medians and the ratio audit / suite. Issue 45's target: the ratio at most
0.5. Any extra arguments after ``--`` go to the audit (e.g. ``-- --quick`` or ``-- --jobs 1``).

Usage::

    python scripts/bench_audit_speed.py                  # one of each
    python scripts/bench_audit_speed.py --repeats 3
    python scripts/bench_audit_speed.py -- --quick       # the quick audit against the same suite

A benchmark, not a test: its numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

AUDIT = ["audit", "--agent", "elim-jdp", "--epsilon", "1", "--no-progress"]
SUITE = ["bench", "--suite", "quick", "--baselines", "rerun", "--no-progress"]


def timed(args: list[str]) -> tuple[float, int, str]:
    """Wall seconds, exit code and the last line of stdout of ``python -m privbandit.cli ARGS``."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "privbandit.cli", *args], capture_output=True, text=True,
                          check=False)
    wall = time.perf_counter() - start
    lines = (done.stdout.strip() or done.stderr.strip()).splitlines()
    return wall, done.returncode, lines[-1] if lines else ""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="runs of each, alternating (default 1)")
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    audit, suite = [], []
    for i in range(args.repeats):
        wall, code, _ = timed(AUDIT + extra)
        audit.append(wall)
        print(f"audit {i + 1}: {wall:.1f} s (exit {code})", flush=True)
        with tempfile.TemporaryDirectory() as out:
            wall, code, last = timed([*SUITE, "--out", out])
        suite.append(wall)
        print(f"quick suite {i + 1}: {wall:.1f} s (exit {code}{'' if code == 0 else ': ' + last})", flush=True)
    a, s = statistics.median(audit), statistics.median(suite)
    print(f"median wall: audit {a:.1f} s ({' '.join(AUDIT + extra)}), quick suite {s:.1f} s "
          f"({' '.join(SUITE)} --out TMPDIR); ratio audit / suite {a / s:.2f} (target <= 0.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
