"""Benchmark the env speed paths: batch-sampler rounds/s and env.step steps/s (medians of repeats).

Targets, at d = 10, K = 10: batch sampler >= 5e5 rounds/s; a bare ``step`` loop >= 2e4 steps/s.
Measured per context family:

- ``batch``: ``reset(seed)`` + ``sample_batch(rounds)`` on the unwrapped env (rounds / seconds);
- ``step_bare``: a loop of ``env.unwrapped.step(a)``;
- ``step_make``: the same loop through ``gym.make``'s wrappers (OrderEnforcing, checker);
- ``vector``: ``gym.make_vec(..., vectorization_mode="vector_entry_point")`` with ``--num-envs`` sub-envs,
  in sub-env steps per second.

Usage::

    python scripts/bench_envs.py                       # full grid: all families, 5 repeats
    python scripts/bench_envs.py --families heavy-tailed --repeats 3 --out bench-out/envs.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import privbandit  # noqa: F401  (registers the envs)
from privbandit.envs import family_names

TARGET_BATCH = 5e5
TARGET_STEP = 2e4


def _time(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process): on a shared machine the CPU time shows what a free
    core would do, the wall time what this run got."""
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def bench_family(family: str, *, dim: int, arms: int, rounds: int, steps: int, num_envs: int,
                 repeats: int) -> dict:
    kwargs = dict(family=family, dim=dim, n_arms=arms, horizon=max(rounds, steps) + 1)
    env = gym.make("PrivLinCB-v0", **kwargs)
    raw = env.unwrapped
    actions = np.random.default_rng(0).integers(0, arms, size=steps).tolist()

    def batch():
        raw.reset(seed=1)
        raw.sample_batch(rounds)

    def loop(target):
        def run():
            step = target.step
            for a in actions:
                step(a)
        return run

    vec = gym.make_vec("PrivLinCB-v0", num_envs=num_envs, vectorization_mode="vector_entry_point", **kwargs)
    vec_actions = np.random.default_rng(0).integers(0, arms, size=(steps // num_envs, num_envs))

    def vec_loop():
        for a in vec_actions:
            vec.step(a)

    out = {}
    for name, setup, fn, work in (
        ("batch", None, batch, rounds),
        ("step_bare", lambda: raw.reset(seed=1), loop(raw), steps),
        ("step_make", lambda: env.reset(seed=1), loop(env), steps),
        ("vector", lambda: vec.reset(seed=1), vec_loop, len(vec_actions) * num_envs),
    ):
        wall, cpu = [], []
        for _ in range(repeats):
            if setup is not None:
                setup()
            w, c = _time(fn)
            wall.append(work / w)
            cpu.append(work / max(c, 1e-9))
        out[name] = {"median": statistics.median(wall), "median_cpu": statistics.median(cpu), "all": wall}
    vec.close()
    env.close()
    return out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--families", nargs="+", default=list(family_names()), choices=family_names())
    p.add_argument("--dim", type=int, default=10)
    p.add_argument("--arms", type=int, default=10)
    p.add_argument("--rounds", type=int, default=2 ** 16, help="rounds per sample_batch call")
    p.add_argument("--steps", type=int, default=20_000, help="steps per step-loop repeat")
    p.add_argument("--num-envs", type=int, default=8)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--out", type=Path, default=Path("bench-out/bench_envs.json"))
    args = p.parse_args(argv)

    results = {"config": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
               "machine": {"python": platform.python_version(), "numpy": np.__version__,
                           "gymnasium": gym.__version__, "processor": platform.processor() or platform.machine()},
               "families": {}}
    print("rates per wall second (per CPU second of this process in brackets)")
    print(f"{'family':24s} {'batch rounds/s':>20s} {'bare step/s':>20s} {'make step/s':>20s} {'vector step/s':>20s}")
    for fam in args.families:
        r = bench_family(fam, dim=args.dim, arms=args.arms, rounds=args.rounds, steps=args.steps,
                         num_envs=args.num_envs, repeats=args.repeats)
        results["families"][fam] = r
        print(f"{fam:24s}" + "".join(f"{r[k]['median']:11.3g} ({r[k]['median_cpu']:6.3g})"
                                     for k in ("batch", "step_bare", "step_make", "vector")))
    keys = ("batch", "step_bare", "step_make", "vector")
    meds = {k: statistics.median(r[k]["median"] for r in results["families"].values()) for k in keys}
    meds.update({k + "_cpu": statistics.median(r[k]["median_cpu"] for r in results["families"].values())
                 for k in keys})
    results["summary"] = meds
    print(f"median over families: batch {meds['batch']:.3g} rounds/s ({meds['batch_cpu']:.3g} per CPU s; "
          f"target {TARGET_BATCH:.0e}), bare step {meds['step_bare']:.3g} steps/s "
          f"({meds['step_bare_cpu']:.3g} per CPU s; target {TARGET_STEP:.0e})")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
