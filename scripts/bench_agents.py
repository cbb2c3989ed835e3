"""Benchmark every bandit agent: regret curves, final regret, log-log slopes, the targets, and speed.

The full grid (the defaults):

- joint DP, d = 10, K = 10: uniform, epsilon-greedy, linucb, elim-nonprivate, squarecb-nonprivate,
  elim-jdp (IW-Regression-DP), elim-ssp, linucb-jdp (Shariff & Sheffet), squarecb-dpsgd;
- local DP, d = 5, K = 5: elim-nonprivate, linucb, elim-ldp (IW-Regression-LDP), elim-ldp-ssp, ldp-ucb
  (Zheng et al.), squarecb-ldp-sgd;
- the LinUCB baselines with both radii: ``linucb``, ``linucb-jdp``, ``ldp-ucb`` (the theorem's radius, their
  default) and ``*-practical`` (``radius="practical"``, the calibrated per-phi radius; :data:`VARIANTS`);
- on the heavy-tailed-norm, rare-direction and spiky families (``PrivLinCB-v0``) and one GLM instance
  (``PrivGLMCB-v0``, heavy-tailed, logistic link: elim-glm-jdp / elim-glm-ldp against elim-jdp / elim-ldp);
- epsilon in {0.1, 0.3, 1} (delta = 1e-5), T = 2^20, 10 seeds; slopes over t in [2^14, 2^20].

The real-data block (opt in: ``--blocks real-jdp,real-ldp --families digits,wine``): ``PrivCBify-v0`` on
digits (top 8 principal directions, d = 80, K = 10) and wine (d = 39, K = 3), the cbify label reward
(``--real-reward linear-fit`` for the exact linear model), the paper's and the practical agents
(:data:`REAL_AGENTS`), joint and local DP. The issue's size is epsilon in {0.3, 1}, T = 2^18, 5 seeds::

    python scripts/bench_agents.py --blocks real-jdp,real-ldp --families digits,wine --epsilons 0.3,1 \\
        --log2-horizon 18 --seeds 5 --slope-window 12,18 --out bench-out/real

Every run goes through ``privbandit.sim.run_many`` (batch path, geometric logging; each table exactly
``privbandit.sim.run``'s), which also checks each agent's privacy ledger against its spec. The LinUCB-family
baselines update their policy every ``--ucb-batch`` rounds in the benchmark (1 = every round, the textbook
algorithm; per-round updates of 2^20 rounds x 10 seeds would take hours in Python); the noise and the tree are
unchanged by batching.

The grid's runs (cells) go to ``--jobs`` worker processes (default: every core; joblib's loky backend through
``privbandit.sim.sweep.backend_context``, one BLAS thread per worker) in groups that play the same rounds (one
block, env, seed and epsilon: the rounds are drawn once per group, not once per agent), the costliest groups
first (:data:`CELL_COST`), so that the grid does not end waiting on one long group. Each run is seeded by its
cell alone, so the tables do not depend on ``--jobs`` or on the grouping. Each finished cell is appended to
``runs.csv`` at once; Ctrl-C exits with code 130 and one line saying how many cells are saved, and the same
command again runs only the rest (resume). Bad arguments exit with code 2 and one line.

Outputs (in ``--out``, an ignored folder): ``runs.csv`` (tidy, one row per logged round, the cells in the
grid's order once the grid is done, whatever order they finished in; cells already in it are skipped on a
rerun), ``final.csv`` and ``slopes.csv`` (``privbandit.sim``'s summaries: Student-t 95%
intervals over seeds), ``report.md`` (tables, targets, the price of privacy over time, speed),
and ``curves_<block>_<family>.png`` (log-log regret curves with 95% bands, one panel per epsilon).

Speed (``--speed``): rounds/s of the elimination batch path (d = 10, K = 10, elim-jdp-ucb against a
2e5 target and elim-jdp against 1e5; oracle fits included, the env's sampling timed separately,
BLAS on one thread, median of 3 alternating runs), and per-round time of our LinUCB in the Gymnasium step
loop against MABWiser's LinUCB on the same stream (MABWiser is imported only here: ``pip install mabwiser``).

Examples
--------
The full grid (1760 runs; 44 minutes wall with ``--jobs 2`` on 2 cores, measured 2026-11-26)::

    python scripts/bench_agents.py --out bench-out/agents

A reduced grid (minutes)::

    python scripts/bench_agents.py --log2-horizon 16 --seeds 3 --families heavy-tailed,rare-direction \\
        --slope-window 12,16 --speed --out bench-out/agents-small

References
----------
Source paper, `tab:comp`, `alg:batch-cb-JDP`, `appdx:regret-upper-LDP`, `appdx:proof-JDP-gen-linear`,
`alg:square-cb`, `thm:regret-upper-JDP-better`.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

# One BLAS thread, as privbandit's sweeps run their workers (privbandit.sim.sweep): on 2 cores a second
# OpenBLAS thread spins after the planner's product and halves the elimination batch path's speed, and
# results are byte-reproducible only for a fixed thread count. Set the variables yourself to override.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import gymnasium as gym
import numpy as np
import pandas as pd

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import agent_is_private, make_agent
from privbandit.agents.elimination import JDP_UCB_FIRST_EPOCH
from privbandit.cli import _jobs
from privbandit.sim import final_regret, loglog_slopes, run_many
from privbandit.sim.sweep import atomic_write, backend_context

JDP_AGENTS = ("uniform", "epsilon-greedy", "linucb", "linucb-practical", "elim-nonprivate", "elim-ucb",
              "squarecb-nonprivate", "elim-jdp", "elim-jdp-ucb", "elim-ssp", "linucb-jdp", "linucb-jdp-practical",
              "squarecb-dpsgd", "squarecb-jdp-iw")
LDP_AGENTS = ("uniform", "elim-nonprivate", "elim-ucb", "linucb", "linucb-practical", "elim-ldp", "elim-ldp-greedy",
              "elim-ldp-ssp", "ldp-ucb", "ldp-ucb-practical", "squarecb-ldp-sgd")
GLM_JDP_AGENTS = ("elim-nonprivate", "elim-ucb", "elim-jdp", "elim-jdp-ucb", "elim-glm-jdp", "elim-glm-jdp-ucb")
GLM_LDP_AGENTS = ("elim-ldp", "elim-ldp-greedy", "elim-glm-ldp")
VARIANTS = {"linucb-practical": ("linucb", {"radius": "practical"}),
            "linucb-jdp-practical": ("linucb-jdp", {"radius": "practical"}),
            "ldp-ucb-practical": ("ldp-ucb", {"radius": "practical"}),
            "elim-glm-jdp-ucb": ("elim-glm-jdp", {"play": "ucb", "first_epoch": JDP_UCB_FIRST_EPOCH})}
"""Benchmark labels of registered agents with other settings: label -> (agent name, keyword arguments).
The LinUCB baselines run with both radii (the theorem's, their default, and the calibrated per-phi one);
GLM elimination runs with UCB play and elim-jdp-ucb's first epoch too."""
UCB = {"linucb", "linucb-jdp", "ldp-ucb", "linucb-practical", "linucb-jdp-practical", "ldp-ucb-practical"}


def is_private(label: str) -> bool:
    """Whether a grid label (a registered name or a :data:`VARIANTS` label) is a private agent."""
    return agent_is_private(VARIANTS.get(label, (label,))[0])


NONPRIVATE = "non-private"
BLOCK_SHAPE = {"jdp": (10, 10), "ldp": (5, 5)}

# --- the real-data block (PrivCBify-v0): opt in with --blocks real-jdp,real-ldp --families digits,wine ---------
REAL_DATASETS = {"digits": dict(dataset="digits", n_components=8), "wine": dict(dataset="wine")}
"""Real-data families: digits on its top 8 principal directions (d = 80, K = 10) and wine (d = 39, K = 3)."""
REAL_AGENTS = {"real-jdp": ("uniform", "elim-nonprivate", "elim-ucb", "linucb-practical", "elim-jdp", "elim-jdp-ucb",
                            "linucb-jdp-practical"),
               "real-ldp": ("elim-nonprivate", "elim-ucb", "elim-ldp", "elim-ldp-greedy", "ldp-ucb-practical")}
"""The paper's agents (elim-*), the practical ones (elim-ucb, elim-jdp-ucb, elim-ldp-greedy) and the practical
LinUCB baselines, joint and local DP."""


class _Parser(argparse.ArgumentParser):
    """Bad arguments: one line on stderr (``bench_agents.py: error: ...``), exit code 2, no usage block."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def parse_args(argv=None) -> argparse.Namespace:
    p = _Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="bench-out/agents", help="output folder (ignored by git)")
    p.add_argument("--log2-horizon", type=int, default=20, help="T = 2^this")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--epsilons", default="0.1,0.3,1")
    p.add_argument("--delta", type=float, default=1e-5)
    p.add_argument("--families", default="heavy-tailed,rare-direction,spiky,glm",
                   help="comma list of heavy-tailed, rare-direction, spiky, glm")
    p.add_argument("--blocks", default="jdp,ldp", help="comma list of jdp (d=K=10), ldp (d=K=5), and the real-data "
                   "blocks real-jdp, real-ldp (PrivCBify-v0 on the --families digits, wine; both when none is named)")
    p.add_argument("--real-reward", default="label", choices=("label", "linear-fit"),
                   help="reward model of the real-data blocks (PrivCBify-v0's reward)")
    p.add_argument("--agents", default="", help="restrict to these agent names (comma list)")
    p.add_argument("--ucb-batch", type=int, default=64, help="policy update period of the LinUCB baselines")
    p.add_argument("--jobs", type=_jobs, default=os.cpu_count() or 1,
                   help="worker processes for the grid's runs (default: all cores; -1 also means all cores)")
    p.add_argument("--slope-window", default="14,20", help="log2 t range of the log-log slope")
    p.add_argument("--speed", action="store_true", help="also measure speed")
    p.add_argument("--speed-log2-rounds", type=int, default=18, help="rounds of the elimination speed runs")
    p.add_argument("--speed-repeats", type=int, default=3, help="elimination speed runs per agent (median)")
    p.add_argument("--mabwiser-rounds", type=int, default=2000)
    p.add_argument("--no-curves", action="store_true", help="skip the regret runs (speed only)")
    p.add_argument("--estimate", action="store_true",
                   help="only estimate the grid's wall time on --jobs workers: time one run per block, family and "
                        "agent (its first cell, seed 0) in CPU seconds, list-schedule every cell longest first")
    args = p.parse_args(argv)
    if args.speed_repeats < 1:
        p.error(f"--speed-repeats must be >= 1, got {args.speed_repeats}")
    return args


# --- the grid ----------------------------------------------------------------------------------------
def cells(args) -> list[dict]:
    eps_list = [float(e) for e in args.epsilons.split(",") if e]
    families = [f for f in args.families.split(",") if f]
    keep = set(a for a in args.agents.split(",") if a)
    out = []
    for block in [b for b in args.blocks.split(",") if b]:
        if block in REAL_AGENTS:
            out += real_cells(args, block, families, eps_list, keep)
            continue
        d, k = BLOCK_SHAPE[block]
        for fam in [f for f in families if f not in REAL_DATASETS]:
            glm = fam == "glm"
            agents = (GLM_JDP_AGENTS if block == "jdp" else GLM_LDP_AGENTS) if glm else \
                (JDP_AGENTS if block == "jdp" else LDP_AGENTS)
            for name in agents:
                if keep and name not in keep:
                    continue
                for eps in (eps_list if is_private(name) else [math.nan]):
                    for seed in range(args.seeds):
                        out.append(dict(block=block, family=fam, agent=name, epsilon=eps, seed=seed, dim=d, n_arms=k))
    return out


def real_cells(args, block: str, families: list[str], eps_list: list[float], keep: set[str]) -> list[dict]:
    """The cells of a real-data block: its agents on the datasets named in ``families`` (all when none)."""
    out = []
    for fam in [f for f in families if f in REAL_DATASETS] or list(REAL_DATASETS):
        for name in REAL_AGENTS[block]:
            if keep and name not in keep:
                continue
            for eps in (eps_list if is_private(name) else [math.nan]):
                for seed in range(args.seeds):
                    out.append(dict(block=block, family=fam, agent=name, epsilon=eps, seed=seed,
                                    env_label=f"{block}-{fam}-{args.real_reward}",  # unique per block
                                    env_kwargs=dict(REAL_DATASETS[fam], reward=args.real_reward)))
    return out


def make_env(cell: dict, horizon: int):
    if "env_kwargs" in cell:
        return gym.make("PrivCBify-v0", horizon=horizon, max_episode_steps=horizon, **cell["env_kwargs"])
    glm = cell["family"] == "glm"
    return gym.make("PrivGLMCB-v0" if glm else "PrivLinCB-v0", n_arms=cell["n_arms"], dim=cell["dim"],
                    horizon=horizon, family="heavy-tailed" if glm else cell["family"], max_episode_steps=horizon)


def build_agent(name: str, epsilon: float, delta: float, ucb_batch: int):
    """The agent of a grid label (a registered name or a :data:`VARIANTS` label)."""
    agent, variant = VARIANTS.get(name, (name, {}))
    kw = dict(variant)
    if is_private(name):
        kw.update(epsilon=epsilon, delta=delta)
    if name in UCB:
        kw.update(batch_size=ucb_batch)
    return make_agent(agent, **kw)


def cell_key(c: dict) -> tuple:
    return (c["block"], c["family"], c["agent"], eps_label(c["epsilon"]), c["seed"])


def eps_label(epsilon: float) -> str:
    """The epsilon column of the outputs: "non-private" or the value."""
    return NONPRIVATE if math.isnan(epsilon) else f"{epsilon:g}"


def read_runs(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype={"eps_label": str, "family_label": str, "block": str})


def env_label(c: dict) -> str:
    """The env column of a cell's table (one per env: block shape, family or dataset)."""
    return c.get("env_label") or f"{'glm' if c['family'] == 'glm' else 'lin'}-{c['family']}-d{c['dim']}K{c['n_arms']}"


def group_key(c: dict) -> tuple:
    """The cells that play the same rounds (env and seed), one epsilon at a time: :func:`run_group` draws
    them once for the group."""
    return c["block"], env_label(c), c["seed"], eps_label(c["epsilon"])


def run_group(group: list[dict], horizon: int, delta: float, ucb_batch: int) -> list[tuple[dict, pd.DataFrame]]:
    """Cells of one :func:`group_key` on the same rounds, and each run's table with the benchmark's columns
    (runs in a worker).

    ``privbandit.sim.run_many`` draws the group's rounds once; each table is exactly the cell's own
    ``run`` (seeded by the cell alone, ``seed=c["seed"]``), so it does not depend on the process, on the
    other cells or on ``--jobs``. Only the ``seconds`` column does: the cell's agent's own wall seconds plus
    an equal share of the group's env draws.
    """
    first = group[0]
    if any(group_key(c) != group_key(first) for c in group):
        raise ValueError("run_group takes cells of one group_key")
    agents = [build_agent(c["agent"], c["epsilon"], delta, ucb_batch) for c in group]
    labels = [dict(agent=c["agent"], env=env_label(c)) for c in group]
    tables = run_many(agents, make_env(first, horizon), horizon, seed=first["seed"], labels=labels)
    out = []
    for c, df in zip(group, tables):
        seconds = df.attrs["agent_seconds"] + df.attrs["env_seconds"] / len(group)
        df["block"], df["family_label"], df["seed"] = c["block"], c["family"], c["seed"]
        df["eps_label"] = eps_label(c["epsilon"])
        df["seconds"] = seconds
        out.append((c, df))
    return out


def run_group_in_worker(group: list[dict], horizon: int, delta: float,
                        ucb_batch: int) -> list[tuple[dict, pd.DataFrame]]:
    """:func:`run_group` in a loky worker, which ignores Ctrl-C from then on: the terminal sends SIGINT to the
    whole process group, and the main process alone answers it (it saves the finished cells, joblib kills the
    workers), so no worker prints a traceback of its own beside the one line on stderr."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return run_group(group, horizon, delta, ucb_batch)


def run_cell(c: dict, horizon: int, delta: float, ucb_batch: int) -> tuple[dict, pd.DataFrame]:
    """One cell of the grid alone (:func:`run_group` of one cell)."""
    return run_group([c], horizon, delta, ucb_batch)[0]


CELL_COST = {("jdp", "uniform"): 0.42, ("jdp", "epsilon-greedy"): 0.43, ("jdp", "linucb"): 0.96,
             ("jdp", "linucb-practical"): 0.88, ("jdp", "elim-nonprivate"): 1.67, ("jdp", "elim-ucb"): 1.46,
             ("jdp", "squarecb-nonprivate"): 0.45, ("jdp", "elim-jdp"): 1.61, ("jdp", "elim-jdp-ucb"): 0.98,
             ("jdp", "elim-ssp"): 1.73, ("jdp", "linucb-jdp"): 1.78, ("jdp", "linucb-jdp-practical"): 1.78,
             ("jdp", "squarecb-dpsgd"): 1.26, ("jdp", "squarecb-jdp-iw"): 0.49, ("jdp", "elim-glm-jdp"): 1.37,
             ("jdp", "elim-glm-jdp-ucb"): 1.04,
             ("ldp", "uniform"): 0.14, ("ldp", "elim-nonprivate"): 0.62, ("ldp", "elim-ucb"): 0.53,
             ("ldp", "linucb"): 0.57, ("ldp", "linucb-practical"): 0.57, ("ldp", "elim-ldp"): 0.81,
             ("ldp", "elim-ldp-greedy"): 0.44, ("ldp", "elim-ldp-ssp"): 0.78, ("ldp", "ldp-ucb"): 1.47,
             ("ldp", "ldp-ucb-practical"): 1.54, ("ldp", "squarecb-ldp-sgd"): 0.24, ("ldp", "elim-glm-ldp"): 1.12}
"""Estimated cost of a cell per (block, agent): CPU seconds of one run at T = 2^18 (epsilon = 1, seed 0, one
BLAS thread), mean over the block's families; measured 2026-11-26 on the 2-core machine. Only the order
matters (:func:`schedule`); the runs grow about linearly in T."""


def cell_cost(c: dict) -> float:
    """A cell's estimated cost (:data:`CELL_COST`; a cell it does not know, e.g. of a real-data block, counts
    as the costliest, so it starts early)."""
    return CELL_COST.get((c["block"], c["agent"]), max(CELL_COST.values()))


def schedule(todo: list[dict]) -> list[list[dict]]:
    """The cells in groups (:func:`group_key`, grid order within a group), the costliest groups first
    (the sum of :func:`cell_cost`), grid order among equals: with several workers the grid then ends on
    short groups instead of waiting for one long group started last."""
    groups: dict[tuple, list[dict]] = {}
    for c in todo:
        groups.setdefault(group_key(c), []).append(c)
    return sorted(groups.values(), key=lambda g: sum(map(cell_cost, g)), reverse=True)  # stable, also reversed


def finished_cells(path: Path, horizon: int) -> set[tuple]:
    """The keys (:func:`cell_key`) of the cells in ``runs.csv`` that reached ``horizon`` (none in an empty
    file: a run killed between creating the file and writing to it)."""
    if not path.exists() or path.stat().st_size == 0:
        return set()
    old = read_runs(path)
    old = old[old["horizon"] == horizon]
    last = old.groupby(["block", "family_label", "agent", "eps_label", "seed"])["t"].max()
    return {tuple(key) for key, t in last.items() if t == horizon}


@contextlib.contextmanager
def sigint_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) held back while the block runs and raised after it, as the handler it found would.

    A Python handler records the signal: blocking it with ``pthread_sigmask`` would not do, since the kernel
    then hands it to another thread of the process (loky's, with ``--jobs`` > 1) and the interpreter still
    runs the handler in the main thread, in the middle of the block. Outside the main thread (where no
    handler can be set) the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        if caught:
            signal.raise_signal(signal.SIGINT)


def append_cell(path: Path, df: pd.DataFrame) -> None:
    """Append one finished cell's rows to ``runs.csv`` in one write, Ctrl-C held back meanwhile
    (:func:`sigint_held`): an interrupted grid keeps whole cells only."""
    text = df.to_csv(index=False, header=not path.exists())
    with sigint_held(), open(path, "a") as fh:
        fh.write(text)


def grid_order(path: Path, grid: list[dict], horizon: int) -> None:
    """Rewrite ``runs.csv`` (atomically) with the grid's cells in the grid's order, whatever order they
    finished in, then the other rows (other horizons or flags) in their order; every field is kept as
    written (read as text)."""
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    rank = {cell_key(c): i for i, c in enumerate(grid)}
    keys = zip(raw["block"], raw["family_label"], raw["agent"], raw["eps_label"], raw["seed"].astype(int))
    ours = pd.to_numeric(raw["horizon"]) == horizon
    order = [rank.get(k, len(rank)) if mine else len(rank) for k, mine in zip(keys, ours)]
    atomic_write(path, raw.iloc[np.argsort(order, kind="stable")].to_csv(index=False))


class GridInterrupted(KeyboardInterrupt):
    """Ctrl-C during the grid: how many of its cells are saved in ``runs.csv``."""

    def __init__(self, saved: int, total: int, path: Path):
        super().__init__(f"interrupted: {saved} of {total} cells saved in {path}; run the same command again "
                         "to resume")


def finish(todo: list[dict], args, horizon: int) -> Iterator[tuple[dict, pd.DataFrame]]:
    """Run the cells by groups, the costliest first (:func:`schedule`), yielding each cell as its group
    finishes: in this process for one job, else in ``--jobs`` loky processes with one BLAS thread each
    (``privbandit.sim.sweep``'s :func:`~privbandit.sim.sweep.backend_context`)."""
    order = schedule(todo)
    jobs = min(args.jobs if args.jobs > 0 else os.cpu_count() or 1, len(order))
    if jobs <= 1:
        for group in order:
            yield from run_group(group, horizon, args.delta, args.ucb_batch)
        return
    from joblib import Parallel, delayed

    with backend_context("loky", jobs), warnings.catch_warnings():
        # Ctrl-C while groups run: joblib cancels them and warns that it did; the one line on stderr says so
        warnings.filterwarnings("ignore", message=r"\d+ tasks (have been successfully executed|which were still)",
                                category=UserWarning)
        for done in Parallel(return_as="generator_unordered")(
                delayed(run_group_in_worker)(group, horizon, args.delta, args.ucb_batch) for group in order):
            yield from done


def run_grid(args, out: Path) -> pd.DataFrame:
    """Run the grid's cells not yet in ``<out>/runs.csv``, appending each as it finishes, then put the file
    in the grid's order.

    Raises
    ------
    GridInterrupted
        On Ctrl-C, after the finished cells are saved (a rerun does only the rest).
    """
    horizon = 2 ** args.log2_horizon
    path = out / "runs.csv"
    grid = cells(args)
    done = finished_cells(path, horizon)
    todo = [c for c in grid if cell_key(c) not in done]
    print(f"{len(todo)} runs to do ({len(done)} already in {path})", flush=True)
    try:
        for i, (c, df) in enumerate(finish(todo, args, horizon)):
            append_cell(path, df)
            print(f"[{i + 1}/{len(todo)}] {c['block']} {c['family']} {c['agent']} eps={c['epsilon']:g} "
                  f"seed={c['seed']}: R_T={df['cum_regret'].iloc[-1]:.1f} ({df['seconds'].iloc[0]:.1f}s)", flush=True)
    except KeyboardInterrupt:      # counted in the file: a Ctrl-C held back by append_cell lands after its write
        finished = finished_cells(path, horizon)
        raise GridInterrupted(sum(cell_key(c) in finished for c in grid), len(grid), path) from None
    if todo:
        grid_order(path, grid, horizon)
    data = read_runs(path)
    return data[data["horizon"] == horizon]


def estimate(args) -> list[str]:
    """The grid's wall time on ``args.jobs`` idle workers, estimated from one timed run per combination.

    Every (block, family, agent) combination's first cell in grid order (seed 0, the first epsilon) runs once
    in this process (one BLAS thread, as the workers), grouped as the grid groups them (:func:`run_group`:
    the rounds drawn once per group); a group's CPU seconds are shared among its cells in proportion to their
    ``seconds`` column, and each cell's share stands for every cell of its combination. The groups are then
    list-scheduled costliest first on the workers, as :func:`finish` does.
    """
    horizon = 2 ** args.log2_horizon
    grid = cells(args)
    first: dict[tuple, dict] = {}
    for c in grid:
        first.setdefault((c["block"], c["family"], c["agent"]), c)
    seconds: dict[tuple, float] = {}
    for group in schedule(list(first.values())):
        start = time.process_time()
        done = run_group(group, horizon, args.delta, args.ucb_batch)
        cpu = time.process_time() - start
        wall = [df["seconds"].iloc[0] for _, df in done]
        for (c, _), w in zip(done, wall):
            combo = (c["block"], c["family"], c["agent"])
            seconds[combo] = cpu * w / sum(wall)
            print(f"{combo[0]} {combo[1]} {combo[2]}: {seconds[combo]:.2f} CPU s", flush=True)
    costs = sorted((sum(seconds[(c["block"], c["family"], c["agent"])] for c in g) for g in schedule(grid)),
                   reverse=True)
    workers = [0.0] * (args.jobs if args.jobs > 0 else os.cpu_count() or 1)
    for cost in costs:                         # costliest first, each to the worker that frees up first
        workers[workers.index(min(workers))] += cost
    total = sum(costs)
    return [f"Estimate: {len(grid)} runs in {len(costs)} groups at T = 2^{args.log2_horizon}, {len(seconds)} "
            f"combinations timed once ({total / len(grid):.2f} CPU s per run on average, {total / 60:.1f} CPU "
            f"minutes in all); on {len(workers)} idle workers, costliest first: {max(workers) / 60:.1f} minutes "
            f"wall, plus the tables and figures."]


# --- summaries -----------------------------------------------------------------------------------------
def _label(data: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The library's summary tables keyed by the benchmark's (block, family_label, agent, epsilon label)."""
    labels = data.drop_duplicates("env").set_index("env")[["block", "family_label"]]
    out = table.join(labels, on="env")
    out["epsilon"] = ["-" if math.isinf(e) else f"{e:g}" for e in out["epsilon"]]
    return out


def summarize(data: pd.DataFrame, args) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Final regret and log-log slopes over the slope window (mean and Student-t 95% CI over seeds)."""
    lo, hi = (2 ** int(v) for v in args.slope_window.split(","))
    return _label(data, final_regret(data)), _label(data, loglog_slopes(data, lo, hi))


PRIVACY_COST = {"jdp": [("elim-jdp", "elim-nonprivate"), ("elim-jdp-ucb", "elim-ucb"), ("elim-ssp", "elim-nonprivate"),
                        ("linucb-jdp", "linucb"), ("linucb-jdp-practical", "linucb-practical")],
                "ldp": [("elim-ldp", "elim-nonprivate"), ("elim-ldp-greedy", "elim-ucb"), ("ldp-ucb", "linucb"),
                        ("ldp-ucb-practical", "linucb-practical")],
                "real-jdp": [("elim-jdp", "elim-nonprivate"), ("elim-jdp-ucb", "elim-ucb"),
                             ("linucb-jdp-practical", "linucb-practical")],
                "real-ldp": [("elim-ldp", "elim-nonprivate"), ("elim-ldp-greedy", "elim-ucb"),
                             ("ldp-ucb-practical", "linucb-practical")]}


def privacy_cost_over_time(data: pd.DataFrame, args, epsilon: float = 1.0) -> list[str]:
    """Regret ratio private / non-private twin at t = 2^12, 2^14, ..., T, and of the last doubling's regret.

    The cumulative ratio at T is the "privacy almost for free" target; the ratio of the regret earned in
    (t/2, t] shows where it is heading (a private agent that has started to eliminate pays less per round).
    """
    eps_lab = f"{epsilon:g}"
    times = [2 ** k for k in range(12, args.log2_horizon + 1, 2)]
    means = {}
    for t in sorted(set(times) | {t // 2 for t in times}):
        if (data["t"] == t).any():
            final = _label(data, final_regret(data, at=t))
            means[t] = final.set_index(["block", "family_label", "agent", "epsilon"])["mean"]
    lines = [f"## Price of privacy over time (epsilon = {epsilon:g})", "",
             "Mean regret of the private agent over its non-private twin's, cumulative at t "
             "(and, in brackets, of the rounds (t/2, t] alone).", "",
             "| block | family | private / reference | "
             + " | ".join(f"t = 2^{int(math.log2(t))}" for t in times) + " |",
             "|---|---|---|" + "---|" * len(times)]
    for block, pairs in PRIVACY_COST.items():
        for fam in sorted(data.loc[data["block"] == block, "family_label"].unique()):
            for agent, ref in pairs:
                cells, seen = [], False
                for t in times:
                    try:
                        a, b = means[t][(block, fam, agent, eps_lab)], means[t][(block, fam, ref, "-")]
                        a2, b2 = means[t // 2][(block, fam, agent, eps_lab)], means[t // 2][(block, fam, ref, "-")]
                    except KeyError:
                        cells.append("")
                        continue
                    seen = True
                    cells.append(f"{a / b:.2f} ({(a - a2) / (b - b2):.2f})" if b > b2 else f"{a / b:.2f}")
                if seen:
                    lines.append(f"| {block} | {fam} | {agent} / {ref} | " + " | ".join(cells) + " |")
    return lines


def _get(fin: pd.DataFrame, block, fam, agent, eps) -> float:
    eps = "-" if not is_private(agent) else f"{eps:g}"
    row = fin[(fin["block"] == block) & (fin["family_label"] == fam) & (fin["agent"] == agent)
              & (fin["epsilon"] == eps)]
    return float(row["mean"].iloc[0]) if len(row) else math.nan


def targets(fin: pd.DataFrame, sl: pd.DataFrame, args) -> list[str]:
    horizon = 2 ** args.log2_horizon
    eps_list = [float(e) for e in args.epsilons.split(",") if e]
    lines = [f"## Targets (T = 2^{args.log2_horizon}, {args.seeds} seeds)", ""]
    for fam in sorted(fin["family_label"].unique()):
        if fam == "glm":
            continue
        a, b = _get(fin, "jdp", fam, "elim-jdp", 1.0), _get(fin, "jdp", fam, "elim-nonprivate", 1.0)
        if not math.isnan(a * b):
            lines.append(f"- privacy almost for free ({fam}, eps=1): elim-jdp / elim-nonprivate = {a / b:.2f} "
                         f"({'met' if a <= 2 * b else 'MISSED'}; target <= 2)")
    for fam in ("heavy-tailed", "rare-direction"):
        for eps in eps_list:
            a = _get(fin, "jdp", fam, "elim-jdp", eps)
            for other in ("linucb-jdp", "linucb-jdp-practical", "elim-ssp"):
                b = _get(fin, "jdp", fam, other, eps)
                if not math.isnan(a * b):
                    lines.append(f"- {fam}, eps={eps:g}: elim-jdp {a:.0f} vs {other} {b:.0f} "
                                 f"({'met' if a < b else 'MISSED'})")
    for fam in sorted(fin["family_label"].unique()):
        a, b = _get(fin, "ldp", fam, "elim-ldp", 1.0), _get(fin, "ldp", fam, "ldp-ucb", 1.0)
        if not math.isnan(a * b):
            lines.append(f"- local ({fam}, eps=1): elim-ldp {a:.0f} vs ldp-ucb {b:.0f} "
                         f"({'met' if a < b else 'MISSED'})")
    s = sl[(sl["block"] == "jdp") & (sl["agent"] == "elim-jdp") & (sl["epsilon"] == "1")]
    for _, r in s.iterrows():
        window = args.slope_window.replace(",", ", 2^")
        verdict = "met" if r["mean"] <= 0.6 else "MISSED"
        lines.append(f"- slope elim-jdp ({r['family_label']}, eps=1) over t in [2^{window}]: "
                     f"{r['mean']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}] ({verdict}; target <= 0.6)")
    lines += practical_targets(fin)
    if "jdp" not in set(fin["block"]):
        return lines
    d = 10
    lines += ["", "Rates of `tab:comp` at these sizes (constants 1, logs dropped), d = 10:"]
    for eps in eps_list:
        ss = d * math.sqrt(horizon) + d ** 0.75 * math.sqrt(horizon / eps)
        ours = d ** 2 * math.sqrt(horizon) + d ** 2.5 / eps
        lines.append(f"- eps={eps:g}: Shariff-Sheffet d sqrt(T) + d^(3/4) sqrt(T/eps) = {ss:.3g}; "
                     f"IW elimination d^2 sqrt(T) + d^(5/2)/eps = {ours:.3g} "
                     + ("(the rates predict IW elimination loses)" if ours > ss
                        else "(the rates favour IW elimination)"))
    return lines


NONPRIVATE_AGENTS = ("epsilon-greedy", "linucb", "linucb-practical", "elim-nonprivate", "elim-ucb",
                     "squarecb-nonprivate")


def practical_targets(fin: pd.DataFrame) -> list[str]:
    """Issue 12's targets for the practical agents (elim-ucb, elim-jdp-ucb, elim-ldp-greedy), met or missed."""
    lines = []
    fams = [f for f in ("rare-direction", "heavy-tailed", "spiky") if f in set(fin["family_label"])]

    def best(block, fam, agents):
        vals = {a: _get(fin, block, fam, a, math.nan) for a in agents}
        vals = {a: v for a, v in vals.items() if not math.isnan(v)}
        return min(vals.items(), key=lambda kv: kv[1]) if vals else (None, math.nan)

    for fam in fams:
        a = _get(fin, "jdp", fam, "elim-ucb", math.nan)
        name, b = best("jdp", fam, ("linucb", "linucb-practical"))
        if not math.isnan(a * b):
            lines.append(f"- elim-ucb vs the best-radius LinUCB ({fam}): {a:.0f} vs {name} {b:.0f} = {a / b:.2f}x "
                         f"({'met' if a <= 1.5 * b else 'MISSED'}; target <= 1.5x)")
    for eps, need in ((1.0, len(fams)), (0.3, min(2, len(fams)))):
        wins = seen = 0
        for fam in fams:
            a = _get(fin, "jdp", fam, "elim-jdp-ucb", eps)
            b = min(_get(fin, "jdp", fam, o, eps) for o in ("linucb-jdp", "linucb-jdp-practical"))
            if not math.isnan(a * b):
                wins, seen = wins + (a < b), seen + 1
                lines.append(f"- elim-jdp-ucb vs linucb-jdp (best radius), {fam}, eps={eps:g}: {a:.0f} vs {b:.0f}")
        if seen:
                lines.append(f"  -> wins on {wins} of {seen} families at eps={eps:g} "
                         f"({'met' if wins >= need else 'MISSED'}; target >= {need})")
    for fam in fams:
        a = _get(fin, "jdp", fam, "elim-jdp-ucb", 1.0)
        name, b = best("jdp", fam, NONPRIVATE_AGENTS)
        if not math.isnan(a * b):
            goal = "" if fam == "rare-direction" else f" ({'met' if a <= 3 * b else 'MISSED'}; target <= 3x)"
            lines.append(f"- elim-jdp-ucb (eps=1) vs the best non-private agent ({fam}): {a:.0f} vs {name} {b:.0f} "
                         f"= {a / b:.2f}x{goal}")
    wins = seen = 0
    for fam in fams:
        a, b = _get(fin, "ldp", fam, "elim-ldp-greedy", 1.0), _get(fin, "ldp", fam, "ldp-ucb", 1.0)
        u = _get(fin, "ldp", fam, "uniform", math.nan)
        if not math.isnan(a * b * u):
            wins, seen = wins + (a < b), seen + 1
            lines.append(f"- elim-ldp-greedy (eps=1, {fam}): {a:.0f}, ldp-ucb {b:.0f}, uniform {u:.0f} "
                         f"(half of uniform: {'met' if a <= 0.5 * u else 'MISSED'})")
    if seen:
        lines.append(f"  -> elim-ldp-greedy beats ldp-ucb on {wins} of {seen} families "
                     f"({'met' if wins >= 2 else 'MISSED'}; target >= 2)")
    return lines


AGENT_ORDER = ("uniform", "epsilon-greedy", "linucb", "linucb-practical", "elim-nonprivate", "elim-ucb",
               "squarecb-nonprivate", "elim-jdp", "elim-jdp-ucb", "elim-ssp", "linucb-jdp", "linucb-jdp-practical",
               "squarecb-dpsgd", "squarecb-jdp-iw", "elim-glm-jdp", "elim-glm-jdp-ucb", "elim-ldp", "elim-ldp-greedy",
               "elim-ldp-ssp", "ldp-ucb", "ldp-ucb-practical", "squarecb-ldp-sgd", "elim-glm-ldp")
AGENT_ORDER += tuple(a for block in REAL_AGENTS.values() for a in block if a not in AGENT_ORDER)  # real-data block


def figures(data: pd.DataFrame, out: Path, x_min: int = 2 ** 10) -> list[Path]:
    """One figure per (block, family): log-log regret curves from t = ``x_min``, one panel per epsilon.

    Each agent keeps its colour (:func:`privbandit.plots.agent_palette`) in every panel and figure;
    non-private references are dashed.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from privbandit.plots import agent_palette, regret_curves

    data = data.assign(privacy=np.where(data["eps_label"] == NONPRIVATE, "non-private", "private"))
    palette = agent_palette(data["agent"].unique())
    paths = []
    for (block, fam), g in data.groupby(["block", "family_label"]):
        eps_vals = sorted((v for v in g["eps_label"].unique() if v != NONPRIVATE), key=float)
        order = [a for a in AGENT_ORDER if a in set(g["agent"])]
        n = max(1, len(eps_vals))
        fig, axes = plt.subplots(1, n, figsize=(4.6 * n + 2.2, 4.0), squeeze=False, sharey=True)
        for ax, eps in zip(axes[0], eps_vals or [NONPRIVATE]):
            sub = g[(g["eps_label"] == eps) | (g["eps_label"] == NONPRIVATE)]
            regret_curves(sub, loglog=True, ax=ax, title=f"{block} {fam}, epsilon = {eps}", x_min=x_min,
                          hue_order=[a for a in order if a in set(sub["agent"])], palette=palette,
                          style="privacy", style_order=["private", "non-private"])
            ax.get_legend().remove()
        handles, labels = axes[0][-1].get_legend_handles_labels()
        keep = [(h, lab) for h, lab in zip(handles, labels) if lab in order]
        fig.legend([h for h, _ in keep], [lab for _, lab in keep], loc="center right", fontsize=8,
                   title="agent (dashed: non-private)", title_fontsize=8)
        fig.tight_layout(rect=(0, 0, 1 - 2.0 / (4.6 * n + 2.2), 1))
        path = out / f"curves_{block}_{fam}.png"
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths


# --- speed ---------------------------------------------------------------------------------------------
SPEED_TARGETS = (("elim-jdp-ucb", 2e5), ("elim-jdp", 1e5))
"""Elimination agents timed by ``--speed``, with their rounds/s target for the agent alone (fits included)."""


def _elimination_run(name: str, horizon: int, delta: float) -> tuple[float, float, int]:
    """One batch-path run of ``name`` at d = K = 10 (heavy-tailed, epsilon = 1): (agent s, env sampling s, fits).

    The agent's time covers act_batch and update, so every epoch's oracle fit (and the ledger) is included.
    """
    env = gym.make("PrivLinCB-v0", n_arms=10, dim=10, horizon=horizon, family="heavy-tailed",
                   max_episode_steps=horizon)
    env.reset(seed=0)
    agent = make_agent(name, epsilon=1.0, delta=delta)
    agent.reset(env.unwrapped.bandit_spec(), rng=0)
    t_env = t_agent = 0.0
    t = 0
    while t < horizon:
        n = min(agent.rounds_until_update(), horizon - t, 1 << 16)
        s0 = time.perf_counter()
        batch = env.unwrapped.sample_batch(n)
        s1 = time.perf_counter()
        a = agent.act_batch(batch.features)
        rows = np.arange(n)
        agent.update(batch.features[rows, a], batch.rewards[rows, a])
        s2 = time.perf_counter()
        t_env += s1 - s0
        t_agent += s2 - s1
        t += n
    return t_agent, t_env, len(agent.estimates)


def speed_elimination(args) -> list[str]:
    """Rounds/s of the elimination batch path, median of ``--speed-repeats`` runs, with each target's verdict.

    The agents' runs alternate (run i of every agent, then run i + 1), so a shared machine's load falls
    on all of them alike.
    """
    horizon, reps = 2 ** args.speed_log2_rounds, args.speed_repeats
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name, _ in SPEED_TARGETS}
    for _ in range(reps):
        for name, done in runs.items():
            done.append(_elimination_run(name, horizon, args.delta))
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    lines = []
    for name, target in SPEED_TARGETS:
        agent = np.array([horizon / a for a, _, _ in runs[name]])
        both = np.array([horizon / (a + e) for a, e, _ in runs[name]])
        med = float(np.median(agent))
        verdict = "met" if med >= target else f"MISSED by {target / med:.2f}x"
        lines.append(f"- {name} batch path (d = K = 10, heavy-tailed, epsilon = 1, T = 2^{args.speed_log2_rounds}, "
                     f"{runs[name][0][2]} oracle fits included, OPENBLAS_NUM_THREADS={threads}), median of {reps}: "
                     f"agent {med:,.0f} rounds/s ({agent.min():,.0f}-{agent.max():,.0f}); with the env's sampling "
                     f"{float(np.median(both)):,.0f} rounds/s")
        lines.append(f"  - target: agent >= {target:,.0f} rounds/s: {verdict}")
    return lines


def speed_linucb(args) -> list[str]:
    """Per-round time of our LinUCB and MABWiser's on the same stream, measured in interleaved blocks.

    The machine may be shared, so the two are timed alternately on blocks of 50 rounds (both see the
    same load); ours is also timed in the plain Gymnasium step loop (env step included).
    """
    n = args.mabwiser_rounds
    k, d = 10, 10
    env = gym.make("PrivLinCB-v0", n_arms=k, dim=d, horizon=n, family="heavy-tailed", max_episode_steps=n)
    obs, _ = env.reset(seed=0)
    agent = make_agent("linucb")
    agent.reset(env.unwrapped.bandit_spec(), rng=0)
    s0 = time.perf_counter()
    for _ in range(n):
        a = agent.act(obs)
        nxt, r, _, _, _ = env.step(a)
        agent.update(obs[a], r)
        obs = nxt
    ours_loop = (time.perf_counter() - s0) / n
    env2 = gym.make("PrivLinCB-v0", n_arms=k, dim=d, horizon=n, family="heavy-tailed", max_episode_steps=n)
    env2.reset(seed=0)
    stream = env2.unwrapped.sample_batch(n)
    ctx = stream.features.mean(axis=1)          # MABWiser's context: the round's mean feature row
    agent.reset(env.unwrapped.bandit_spec(), rng=0)
    try:
        from mabwiser.mab import MAB, LearningPolicy
    except ImportError:
        mab = None
    else:
        mab = MAB(arms=list(range(k)), learning_policy=LearningPolicy.LinUCB(alpha=1.0, l2_lambda=1.0), seed=0)
        mab.fit(decisions=list(range(k)), rewards=[0.0] * k, contexts=ctx[:k])
    t_ours = t_theirs = 0.0
    for lo in range(0, n, 50):
        hi = min(n, lo + 50)
        s0 = time.perf_counter()
        for t in range(lo, hi):
            a = agent.act(stream.features[t])
            agent.update(stream.features[t, a], stream.rewards[t, a])
        s1 = time.perf_counter()
        if mab is not None:
            for t in range(lo, hi):
                arm = mab.predict(ctx[t:t + 1])
                mab.partial_fit([arm], [float(stream.rewards[t, int(arm)])], ctx[t:t + 1])
        s2 = time.perf_counter()
        t_ours += s1 - s0
        t_theirs += s2 - s1
    ours, theirs = t_ours / n, t_theirs / n
    lines = [f"- our LinUCB, Gymnasium step loop (env step included): {ours_loop * 1e6:.0f} us/round; "
             f"agent only (act + update, input checks and clipping included): {ours * 1e6:.0f} us/round "
             f"(d = K = 10, {n} rounds)"]
    if mab is None:
        return lines + ["- MABWiser not installed: `pip install mabwiser` to compare"]
    lines.append(f"- MABWiser LinUCB (predict + partial_fit per round; K disjoint d x d models, the round's mean "
                 f"feature row as context), timed in blocks of 50 rounds alternating with ours: "
                 f"{theirs * 1e6:.0f} us/round -> ours is {theirs / ours:.1f}x faster per round (target >= 20x)")
    return lines


def main(argv=None) -> int:
    """Run the benchmark; the exit code (2 on bad arguments, 130 on Ctrl-C, with one line on stderr)."""
    try:
        return bench(argv)
    except KeyboardInterrupt as exc:  # GridInterrupted says how many cells are saved
        print(str(exc) if isinstance(exc, GridInterrupted) else "interrupted", file=sys.stderr)
        return 130


def bench(argv=None) -> int:
    args = parse_args(argv)
    if args.estimate:
        print("\n".join(estimate(args)))
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report = [f"# Agent benchmark\n\nCommand: `python scripts/bench_agents.py {' '.join(argv or sys.argv[1:])}`\n"]
    if not args.no_curves:
        data = run_grid(args, out)
        fin, sl = summarize(data, args)
        fin.to_csv(out / "final.csv", index=False)
        sl.to_csv(out / "slopes.csv", index=False)
        table = fin.merge(sl, on=["block", "family_label", "agent", "epsilon"], how="left", suffixes=("", "_slope"))
        report += ["## Final regret and log-log slope", "",
                   f"Mean over seeds with Student-t 95% intervals; slope of log R_t against log t over "
                   f"t in [2^{args.slope_window.replace(',', ', 2^')}].", "",
                   "| block | family | agent | epsilon | R_T mean [95% CI] | seeds | slope [95% CI] |",
                   "|---|---|---|---|---|---|---|"]
        for _, r in table.iterrows():
            report.append(f"| {r['block']} | {r['family_label']} | {r['agent']} | {r['epsilon']} | "
                          f"{r['mean']:.0f} [{r['ci_low']:.0f}, {r['ci_high']:.0f}] | {int(r['n_seeds'])} | "
                          f"{r['mean_slope']:.3f} [{r['ci_low_slope']:.3f}, {r['ci_high_slope']:.3f}] |")
        report += [""] + targets(fin, sl, args) + [""]
        report += privacy_cost_over_time(data, args) + [""]
        for p in figures(data, out):
            report.append(f"![{p.stem}]({p.name})")
    if args.speed:
        report += ["", "## Speed", ""] + speed_elimination(args) + speed_linucb(args)
    (out / "report.md").write_text("\n".join(report) + "\n")
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
