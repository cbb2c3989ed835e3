"""Make the measured parts of the guide page "Rendering, Stable-Baselines3 and Open Bandit Pipeline".

Writes to ``--out`` (the docs build passes ``docs/_generated/interop``):

- ``render_cost.md``: the cost of a frame (``rgb_array``, ``ansi``) and of a ``step`` with and without a render
  mode, timed here on the machine that builds the docs (a few seconds), with the command printed beside it;
- ``ansi_example.txt``: what the page's ``ansi`` example prints;
- ``obp_offpolicy.md``: the table of Open Bandit Pipeline's estimates, rendered from ``--obp-data`` (default
  ``docs/data/obp_offpolicy.json``), the file ``scripts/obp_offpolicy.py`` writes when run by hand with OBP
  installed (OBP cannot be installed where the docs are built), with the command and OBP version it records.

No number on that page is typed by hand: each comes from one of these files.

Usage: ``python scripts/make_docs_interop.py --out docs/_generated/interop``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import timeit
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import privbandit  # noqa: F401  (registers the envs)
from privbandit.envs.instance import BLOCK_SIZE

ROOT = Path(__file__).resolve().parents[1]
OBP_DATA = ROOT / "docs" / "data" / "obp_offpolicy.json"
ARMS = (10, 100)
PLAYED = 1024        # rounds played before a frame is timed (the regret curve's length)
REPEATS = 5          # the best of REPEATS timings is reported: the one least disturbed by other jobs
COMMAND = "python scripts/make_docs_interop.py --out docs/_generated/interop"


def _best(fn: Callable[[], Any], number: int) -> float:
    """Seconds per call of ``fn``: the best of :data:`REPEATS` runs of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=REPEATS)) / number


def _played_env(n_arms: int, render_mode: str | None):
    env = gym.make("PrivLinCB-v0", n_arms=n_arms, render_mode=render_mode).unwrapped
    env.reset(seed=0)
    for arm in np.random.default_rng(0).integers(0, n_arms, PLAYED):
        env.step(int(arm))
    return env


def render_cost() -> list[dict[str, float]]:
    """Per K in :data:`ARMS`: seconds per ``rgb_array`` and ``ansi`` frame and per ``step`` without and with
    the ``rgb_array`` render mode (the unwrapped env, after :data:`PLAYED` rounds)."""
    rows = []
    for k in ARMS:
        frames = max(10, 2000 // k)
        rgb, ansi = _played_env(k, "rgb_array"), _played_env(k, "ansi")
        plain, shown = _played_env(k, None), _played_env(k, "rgb_array")
        steps = BLOCK_SIZE      # whole blocks: a step's cost includes its share of drawing the block of rounds
        arm = k // 2
        rows.append({"K": k, "rgb_array": _best(rgb.render, frames), "ansi": _best(ansi.render, frames),
                     "step": _best(partial(plain.step, arm), steps),
                     "step_rgb_array": _best(partial(shown.step, arm), steps)})
    return rows


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f} us"


def render_cost_page(rows: list[dict[str, float]]) -> str:
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    lines = [(f"Measured when these docs were built ({machine}; the best of {REPEATS} timings, the unwrapped env "
              f"after {PLAYED} rounds; a step's share of drawing its block of rounds included), by `{COMMAND}`:"), "",
             "| K | `rgb_array` frame | `ansi` frame | `step` without render mode | `step` with `rgb_array` |",
             "|---|---|---|---|---|"]
    lines += [f"| {r['K']} | {_ms(r['rgb_array'])} | {_ms(r['ansi'])} | {_us(r['step'])} | "
              f"{_us(r['step_rgb_array'])} |" for r in rows]
    return "\n".join(lines) + "\n"


def ansi_example() -> str:
    """What the page's ``ansi`` example prints (the same calls)."""
    env = gym.make("PrivLinCB-v0", n_arms=4, dim=3, family="isotropic", render_mode="ansi")
    env.reset(seed=0)
    for arm in (0, 3, 1):
        env.step(arm)
    return env.render() + "\n"


TARGET_NAMES = {"uniform": "uniform", "optimal": "optimal (the best arm each round)",
                "worst": "worst (the worst arm each round)"}


def obp_page(data: dict[str, Any]) -> str:
    """The OBP table from the file ``scripts/obp_offpolicy.py`` wrote."""
    setup = ", ".join(f"{k}={v!r}" for k, v in data["env_kwargs"].items())
    agent = ", ".join(f"{k} = {v:g}".replace("e-0", "e-") for k, v in data["agent_kwargs"].items())
    lines = [(f"Log: `{data['env']}` (`{setup}`), logged by `{data['agent']}` ({agent}), seed {data['seed']}; "
              f"smallest propensity {data['min_pscore']:.3f}."), "",
             (f"Estimates by OBP {data['obp_version']} (`OffPolicyEvaluation.estimate_policy_values`), "
              f"run by hand with `{data['command']}` ({data['obp_python']}; logged with {data['logged_with']}):"),
             "",
             "| target policy | true value | IPW | DM | DR | DM with OBP's RegressionModel (Ridge) |",
             "|---|---|---|---|---|---|"]
    for name, est in data["estimates"].items():
        lines.append(f"| {TARGET_NAMES.get(name, name)} | {data['truth'][name]:+.4f} | {est['ipw']:+.4f} "
                     f"| {est['dm']:+.4f} | {est['dr']:+.4f} | {est['dm_obp_ridge']:+.4f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="the folder written")
    parser.add_argument("--obp-data", type=Path, default=OBP_DATA,
                        help="the JSON file scripts/obp_offpolicy.py wrote (default docs/data/obp_offpolicy.json)")
    args = parser.parse_args(argv)
    if not args.obp_data.is_file():
        parser.error(f"--obp-data: no file {args.obp_data}; write it with scripts/obp_offpolicy.py")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "obp_offpolicy.md").write_text(obp_page(json.loads(args.obp_data.read_text())))
    (args.out / "ansi_example.txt").write_text(ansi_example())
    (args.out / "render_cost.md").write_text(render_cost_page(render_cost()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
