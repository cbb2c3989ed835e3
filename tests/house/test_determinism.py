"""Determinism: one seed, one table, byte for byte, whichever path, worker or process produced it.

For several agents (non-private, joint-DP and local-DP, deterministic and randomized policies):

- one path and one seed give byte-identical CSV tables (the batch path with small and large chunks, the
  step loop twice), and so do two runs of the same agent object (reset must forget everything); the step
  loop and the batch path choose the same arms but at decisions within rounding of a tie (margin-aware,
  as :func:`~privbandit.agents.check_agent` checks; their fits sum rows in another order);
- a serial sweep and a parallel sweep (loky, 2 workers) write byte-identical ``results.csv``, and each
  cell equals a direct ``run`` with the cell's seed;
- a fresh Python process (another PYTHONHASHSEED, BLAS limited to one thread) prints the same bytes.

Byte identity is checked on ``DataFrame.to_csv`` (shortest round-trip floats), so a difference in the
last bit of any regret or of epsilon_spent fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import gymnasium as gym
import pandas as pd
import pytest
from conftest import build_agent

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import agent_names
from privbandit.agents.checks import check_step_loop_equals_batch_path
from privbandit.bench.cells import cell_path
from privbandit.bench.grid import AgentEntry, EnvEntry, Grid
from privbandit.bench.sweep import sweep
from privbandit.report.files import read_cell
from privbandit.sim.runner import run

AGENTS = ["uniform", "epsilon-greedy", "elim-jdp", "elim-ldp", "linucb-jdp", "ldp-ucb", "squarecb-ldp-sgd",
          "elim-glm-jdp"]
HORIZON = 48
ENV_KW = {"dim": 3, "n_arms": 4, "family": "heavy-tailed"}
ENV_KW_SHAPE = {"dim": 3, "n_arms": 4}


def make_env(name: str):
    return gym.make("PrivGLMCB-v0" if "glm" in name else "PrivLinCB-v0", horizon=HORIZON, **ENV_KW)


def table_bytes(name: str, seed: int, **kw) -> bytes:
    agent = kw.pop("agent", None) or build_agent(name)
    df = run(agent, make_env(name), seed=seed, log="all", **kw)
    return df.to_csv(index=False).encode()


@pytest.mark.parametrize("name", AGENTS)
def test_one_path_and_seed_give_identical_bytes(name):
    batch = table_bytes(name, 5, mode="batch")
    assert table_bytes(name, 5, mode="batch") == batch
    assert table_bytes(name, 5, mode="batch", max_chunk=3) == batch
    loop = table_bytes(name, 5, mode="loop")
    assert table_bytes(name, 5, mode="loop") == loop
    assert table_bytes(name, 6, mode="batch") != batch  # the seed matters (the check has teeth)


@pytest.mark.parametrize("name", AGENTS)
def test_step_loop_and_batch_path_choose_alike_but_at_rounding_ties(name):
    """The contract between the paths (README, Reproducibility): the same uniforms, the same arms except at
    decisions within rounding of a tie, the same releases; checked margin-aware on check_agent's stream."""
    check_step_loop_equals_batch_path(lambda: build_agent(name), horizon=HORIZON, rng=5, **ENV_KW_SHAPE)


@pytest.mark.parametrize("name", AGENTS)
def test_reusing_an_agent_object_changes_nothing(name):
    agent = build_agent(name)
    first = table_bytes(name, 9, agent=agent)
    table_bytes(name, 10, agent=agent)  # another run in between
    assert table_bytes(name, 9, agent=agent) == first
    assert table_bytes(name, 9) == first


@pytest.mark.slow
def test_serial_and_parallel_sweeps_write_identical_bytes_for_private_agents(tmp_path):
    grid = Grid((AgentEntry("elim-jdp"), AgentEntry("linucb-jdp"), AgentEntry("elim-ldp"),
                 AgentEntry("epsilon-greedy", private=False)),
                (EnvEntry("ht", "PrivLinCB-v0", ENV_KW),), epsilons=(0.5, 2.0), seeds=2, horizon=HORIZON)
    cells = grid.cells()
    serial = sweep(cells, tmp_path / "serial", jobs=1)
    parallel = sweep(cells, tmp_path / "parallel", jobs=2)
    assert (tmp_path / "serial" / "results.csv").read_bytes() == (tmp_path / "parallel" / "results.csv").read_bytes()
    pd.testing.assert_frame_equal(serial.table, parallel.table, check_exact=True)
    # each cell equals a direct run with the cell's seed, and the levels really differ
    for cell in cells[:3]:
        agent = cell.agent.build(cell.epsilon, cell.delta)
        direct = run(agent, cell.env.make(cell.horizon), cell.horizon, cell.seed_sequence(),
                     labels={"agent": cell.agent.label, "env": cell.env.label, "seed": cell.seed})
        stored = read_cell(cell_path(tmp_path / "serial" / "cells", cell))
        pd.testing.assert_frame_equal(stored, direct, check_exact=True)
    by_eps = serial.table[serial.table.agent == "linucb-jdp"].groupby("epsilon").cum_regret.sum()
    assert by_eps.iloc[0] != by_eps.iloc[1]


SEP = "\n---- next table ----\n"
SCRIPT = textwrap.dedent("""
    import sys
    import gymnasium as gym
    import privbandit
    from privbandit.agents import agent_is_private, agent_names, make_agent
    from privbandit.sim.runner import run
    seed, tables = int(sys.argv[1]), []
    for i, name in enumerate(sys.argv[2:]):
        env = gym.make("PrivGLMCB-v0" if "glm" in name else "PrivLinCB-v0", horizon={horizon}, **{env_kw!r})
        mode = "loop" if i % 2 else "batch"
        budget = dict(epsilon=1.0, delta=1e-5) if agent_is_private(name) else {{}}
        tables.append(run(make_agent(name, **budget), env, seed=seed, log="all", mode=mode).to_csv(index=False))
    sys.stdout.write({sep!r}.join(tables))
""").format(horizon=HORIZON, env_kw=ENV_KW, sep=SEP)


@pytest.mark.slow
def test_another_process_prints_the_same_bytes():
    """One fresh interpreter (another hash seed, one BLAS thread) runs four agents, loop and batch alternating."""
    names = ["elim-jdp", "linucb-jdp", "squarecb-ldp-sgd", "epsilon-greedy"]
    env = dict(os.environ, PYTHONHASHSEED="12345", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", SCRIPT, "3", *names], capture_output=True, env=env, check=True,
                         timeout=300).stdout.decode()
    tables = out.split(SEP)
    assert len(tables) == len(names)
    for i, (name, table) in enumerate(zip(names, tables)):     # each against the same path in this process
        assert table.encode() == table_bytes(name, 3, mode="loop" if i % 2 else "batch"), name


def _stream(name: str, horizon: int, seed: int = 3):
    env = gym.make("PrivGLMCB-v0" if "glm" in name else "PrivLinCB-v0", horizon=horizon, **ENV_KW)
    env.reset(seed=seed)
    return env.unwrapped.bandit_spec(), env.unwrapped.sample_batch(horizon)


@pytest.mark.slow
@pytest.mark.parametrize("name", agent_names())
def test_per_round_path_chooses_what_the_batch_path_chooses_for_every_agent(name):
    """The per-round path (act + update of one row) against the batch path (act_batch + update while the
    policy is fixed), over several epochs, for every registered agent: the same uniforms, the same arms but
    at rounding ties (margin-aware, as check_agent checks), the same releases."""
    horizon = 300                       # past elim-jdp-ucb's first epoch of 256 rounds
    spec, batch = _stream(name, horizon)
    x, r = batch.features, batch.rewards
    check_step_loop_equals_batch_path(lambda: build_agent(name), rng=11, stream=(x, r), spec=spec)
    loop = []
    one = build_agent(name).reset(spec, rng=11)
    for t in range(horizon):
        loop.append(a := one.act(x[t]))
        one.update(x[t, a], float(r[t, a]))
    assert len(set(loop)) > 1           # the policy does choose (not a constant arm)
