"""Scale: peak memory of long runs (T up to 2^24) of the streaming agents on the batch path.

Each (agent, T) runs in its own fresh subprocess (so peaks do not mix): ``gym.make("PrivLinCB-v0",
horizon=T, ...)``, ``privbandit.sim.run(agent, env, seed=0, mode="batch")``, then the child reports its
peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``), its RSS after the imports (the baseline the
library costs before any round), wall and CPU time and the final cumulative regret. The parent prints a
table and the ratio peak(T_max) / peak(T_min) per agent; the issue's target is < 2 from 2^20 to 2^24.

The streaming agents keep O(d^2) state per epoch (IW regression and SSP stream their sufficient
statistics; local fits keep only running sums of randomized outputs), the runner keeps only the logged
rounds and the env serves rounds in chunks of ``--max-chunk``, so nothing grows with T but the
ledger (one record per epoch, or per chunk for local fits) and the log (about 8 rows per doubling).

Usage::

    python scripts/bench_scale.py                                  # the issue's grid: 2^20 and 2^24
    nice python scripts/bench_scale.py --log2 16 18 20 --agents elim-jdp elim-ldp-ssp
    python scripts/bench_scale.py --out bench-out/scale.csv

Results go to ``--out`` (default ``bench-out/scale.csv``; bench-out/ is git-ignored).

References
----------
Source paper, `alg:batch-cb-meta` (epochs: the policy is fixed within one, so rounds are served in
batches); DESIGN.md ("Memory per epoch is O(d^2) where the algorithm allows it").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

STREAMING = ("uniform", "elim-nonprivate", "elim-jdp", "elim-ssp", "elim-ldp", "elim-ldp-ssp")


def child(agent_name: str, log2_horizon: int, dim: int, arms: int, family: str, max_chunk: int) -> dict:
    """Run one (agent, T) in this process and return its measurements."""
    import resource

    import gymnasium as gym

    import privbandit  # noqa: F401  (registers the envs)
    from privbandit.agents import agent_is_private, make_agent
    from privbandit.sim.runner import run

    def rss_mb() -> float:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
        return float("nan")  # pragma: no cover - non-Linux

    horizon = 2 ** log2_horizon
    budget = dict(epsilon=1.0, delta=1e-5) if agent_is_private(agent_name) else {}
    agent = make_agent(agent_name, **budget)
    env = gym.make("PrivLinCB-v0", horizon=horizon, dim=dim, n_arms=arms, family=family)
    baseline = rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    table = run(agent, env, seed=0, mode="batch", max_chunk=max_chunk)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux
    return {"agent": agent_name, "log2_T": log2_horizon, "T": horizon, "dim": dim, "n_arms": arms, "family": family,
                "max_chunk": max_chunk, "baseline_rss_mb": round(baseline, 1), "peak_rss_mb": round(peak, 1),
                "growth_mb": round(peak - baseline, 1), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                "rounds_per_s": round(horizon / max(wall, 1e-9)), "ledger_releases": len(agent.ledger.releases),
                "logged_rows": len(table),
                "cum_regret": float(table.cum_regret.iloc[-1])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", nargs="+", default=list(STREAMING))
    parser.add_argument("--log2", nargs="+", type=int, default=[20, 24], help="log2 of the horizons")
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--arms", type=int, default=10)
    parser.add_argument("--family", default="heavy-tailed")
    parser.add_argument("--max-chunk", type=int, default=1 << 14)
    parser.add_argument("--out", default="bench-out/scale.csv")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per child run (default: none)")
    parser.add_argument("--child", nargs=2, metavar=("AGENT", "LOG2T"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        out = child(args.child[0], int(args.child[1]), args.dim, args.arms, args.family, args.max_chunk)
        sys.stdout.write(json.dumps(out) + "\n")
        return 0

    import pandas as pd

    rows = []
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    for agent in args.agents:
        for log2 in sorted(args.log2):
            cmd = [sys.executable, __file__, "--child", agent, str(log2), "--dim", str(args.dim), "--arms",
                   str(args.arms), "--family", args.family, "--max-chunk", str(args.max_chunk)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout,
                                      check=True)
            except subprocess.TimeoutExpired:
                print(f"{agent} T=2^{log2}: timed out after {args.timeout:g} s", flush=True)
                continue
            except subprocess.CalledProcessError as exc:
                print(f"{agent} T=2^{log2}: failed\n{exc.stderr}", flush=True)
                continue
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"{agent:>16} T=2^{log2:<2} peak {row['peak_rss_mb']:8.1f} MB  "
                  f"(baseline {row['baseline_rss_mb']:.1f}, growth {row['growth_mb']:.1f})  "
                  f"wall {row['wall_s']:8.1f} s  cpu {row['cpu_s']:8.1f} s  "
                  f"{row['rounds_per_s']:>9} rounds/s", flush=True)
    if not rows:
        return 1
    table = pd.DataFrame(rows)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(out, index=False)
    print(f"\nwrote {out}")
    for agent, g in table.groupby("agent", sort=False):
        g = g.sort_values("log2_T")
        if len(g) > 1:
            lo, hi = g.iloc[0], g.iloc[-1]
            ratio = hi.peak_rss_mb / lo.peak_rss_mb
            print(f"{agent:>16}: peak RSS T=2^{lo.log2_T} -> 2^{hi.log2_T}: {lo.peak_rss_mb:.1f} -> "
                  f"{hi.peak_rss_mb:.1f} MB, ratio {ratio:.2f} (target < 2)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
