"""privbandit.bench.sweep: cells persisted at once, resume after a kill, serial == parallel, seeds by identity."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from joblib import Parallel, delayed

from privbandit.agents.workers import BackendUnavailable, backend_context
from privbandit.bench.cells import cell_path
from privbandit.bench.grid import AgentEntry, Cell, EnvEntry, Grid
from privbandit.bench.sweep import sweep
from privbandit.report.files import read_cell

ENVS = (EnvEntry("ht", "PrivLinCB-v0", dict(family="heavy-tailed", dim=3, n_arms=3)),
        EnvEntry("rare", "PrivLinCB-v0", dict(family="rare-direction", dim=3, n_arms=3)))


def small_grid(seeds: int = 2, horizon: int = 64) -> Grid:
    return Grid((AgentEntry("uniform", private=False),), ENVS, epsilons=(1.0,), seeds=seeds, horizon=horizon)


@pytest.mark.slow
def test_serial_and_parallel_sweeps_give_identical_tables(tmp_path):
    cells = small_grid().cells()
    serial = sweep(cells, tmp_path / "serial", jobs=1)
    parallel = sweep(cells, tmp_path / "parallel", jobs=2)
    pd.testing.assert_frame_equal(serial.table, parallel.table, check_exact=True)
    assert (tmp_path / "serial" / "results.csv").read_bytes() == (tmp_path / "parallel" / "results.csv").read_bytes()
    assert sorted(serial.ran) == sorted(parallel.ran) == sorted(c.key for c in cells)
    assert len(serial.table) == sum(len(read_cell(cell_path(tmp_path / "serial" / "cells", c))) for c in cells)
    # the table read back equals the runner's output exactly (floats round-trip through CSV)
    again = read_cell(tmp_path / "serial" / "results.csv")
    pd.testing.assert_frame_equal(again, serial.table, check_exact=True)


def test_rerun_skips_finished_cells_and_order_does_not_matter(tmp_path):
    cells = small_grid().cells()
    first = sweep(cells[:2], tmp_path)
    stamps = {c.key: cell_path(tmp_path / "cells", c).stat().st_mtime_ns for c in cells[:2]}
    second = sweep(list(reversed(cells)), tmp_path)
    assert sorted(second.skipped) == sorted(first.ran) and len(second.ran) == len(cells) - 2
    assert all(cell_path(tmp_path / "cells", c).stat().st_mtime_ns == stamps[c.key] for c in cells[:2])
    fresh = sweep(cells, tmp_path / "fresh")
    order = ["env", "agent", "seed", "t"]
    pd.testing.assert_frame_equal(second.table.sort_values(order).reset_index(drop=True),
                                  fresh.table.sort_values(order).reset_index(drop=True), check_exact=True)


def test_cell_seeds_come_from_the_cells_identity():
    grid = Grid((AgentEntry("uniform", private=False), AgentEntry("uniform", private=False, label="u2")), ENVS,
                seeds=2, horizon=64)
    cells = grid.cells()
    by = {(c.agent.label, c.env.label, c.seed): c.seed_sequence() for c in cells}
    state = {k: tuple(v.generate_state(4)) for k, v in by.items()}
    assert state[("uniform", "ht", 0)] == state[("u2", "ht", 0)]  # common random numbers across agents
    assert state[("uniform", "ht", 0)] != state[("uniform", "ht", 1)]
    assert state[("uniform", "ht", 0)] != state[("uniform", "rare", 0)]
    # the same cell built anew (another process, another position) has the same seed and key
    again = Cell(AgentEntry("uniform", private=False), ENVS[0], None, 1, 64)
    assert again.key == cells[1].key
    assert tuple(again.seed_sequence().generate_state(4)) == state[("uniform", "ht", 1)]
    other = Cell(AgentEntry("uniform", private=False), ENVS[0], None, 1, 64, entropy=1)
    assert tuple(other.seed_sequence().generate_state(4)) != state[("uniform", "ht", 1)]
    # a raised version gives the agent's cells a new key (run again), with the same round stream
    raised = Cell(AgentEntry("uniform", private=False, version=2), ENVS[0], None, 1, 64)
    assert raised.key != again.key and raised.key.rsplit("__", 1)[0] == again.key.rsplit("__", 1)[0]
    assert tuple(raised.seed_sequence().generate_state(4)) == state[("uniform", "ht", 1)]
    with pytest.raises(ValueError, match="version"):
        AgentEntry("uniform", version=0)


def test_private_agents_get_one_cell_per_epsilon_and_nonprivate_one_per_seed():
    grid = Grid((AgentEntry("uniform", private=False), AgentEntry("x", private=True)), ENVS[:1],
                epsilons=(0.1, 1.0), seeds=3, horizon=8)
    cells = grid.cells()
    assert len(cells) == 3 + 2 * 3
    assert {c.epsilon for c in cells if c.agent.label == "x"} == {0.1, 1.0}
    assert {c.epsilon for c in cells if c.agent.label == "uniform"} == {None}
    assert len({c.key for c in cells}) == len(cells)


_SCRIPT = textwrap.dedent("""
    import json, sys, time
    from privbandit.agents import UniformAgent, register_agent
    from privbandit.bench.grid import AgentEntry, EnvEntry, Grid
    from privbandit.bench.sweep import sweep

    class Slow(UniformAgent):
        name = "slow"
        def _choose(self, features, uniforms):
            time.sleep(0.25)
            return super()._choose(features, uniforms)

    register_agent("slow", Slow)
    env = EnvEntry("ht", "PrivLinCB-v0", dict(family="heavy-tailed", dim=3, n_arms=3))
    cells = Grid((AgentEntry("slow", private=False),), (env,), seeds=8, horizon=32).cells()
    res = sweep(cells, sys.argv[1], jobs=1)
    print(json.dumps(dict(ran=res.ran, skipped=res.skipped, rows=len(res.table))))
""")


def _start(out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _SCRIPT, str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


@pytest.mark.slow
def test_a_killed_sweep_loses_no_finished_cell_and_the_rerun_completes_only_the_missing(tmp_path):
    out = tmp_path / "killed"
    proc = _start(out)
    cells_dir = out / "cells"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (cells_dir.is_dir() and any(cells_dir.glob("*.csv"))):
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)  # kill the sweep (and any worker) mid-run
    proc.communicate()
    finished = {p.name: p.stat().st_mtime_ns for p in cells_dir.glob("*.csv")}
    assert 1 <= len(finished) < 8, "the sweep must be killed after its first cell and before its last"
    for p in cells_dir.glob("*.csv"):
        assert len(read_cell(p)) > 0  # every file that exists is complete

    rerun = subprocess.run([sys.executable, "-c", _SCRIPT, str(out)], capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    report = json.loads(rerun.stdout.strip().splitlines()[-1])
    assert sorted(f"{k}.csv" for k in report["skipped"]) == sorted(finished)
    assert len(report["ran"]) == 8 - len(finished)
    assert {p.name: p.stat().st_mtime_ns for p in cells_dir.glob("*.csv") if p.name in finished} == finished
    assert not list(cells_dir.glob(".*.tmp"))
    table = read_cell(out / "results.csv")
    assert sorted(table["seed"].unique()) == list(range(8)) and len(table) == report["rows"]


def test_bad_arguments(tmp_path):
    cells = small_grid(seeds=1).cells()
    with pytest.raises(ValueError, match="backend"):
        sweep(cells, tmp_path, backend="spark")
    with pytest.raises(ValueError, match="jobs"):
        sweep(cells, tmp_path, jobs=0)
    with pytest.raises(ValueError, match="distinct"):
        sweep(cells + cells[:1], tmp_path)
    with pytest.raises(ValueError, match="epsilon"):
        Grid((AgentEntry("uniform"),), ENVS, epsilons=(0.0,))
    with pytest.raises(ValueError, match="seeds"):
        Grid((AgentEntry("uniform"),), ENVS, seeds=0)
    with pytest.raises(ValueError, match="agents"):
        Grid((), ENVS)


def test_missing_backend_gives_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(BackendUnavailable, match=r"privbandit\[dist\]"):
        sweep(small_grid(seeds=1).cells(), tmp_path, jobs=2, backend="ray")


@pytest.mark.slow
def test_loky_workers_run_with_one_blas_thread():
    with backend_context("loky", 2):
        got = Parallel()(delayed(lambda: os.environ.get("OPENBLAS_NUM_THREADS"))() for _ in range(2))
    assert got == ["1", "1"]


@pytest.mark.slow
def test_dask_backend_on_a_local_cluster_equals_serial(tmp_path):
    distributed = pytest.importorskip("dask.distributed",
                                      reason="the dask backend needs the dist extra: pip install '.[dist]'")
    cells = small_grid().cells()
    serial = sweep(cells, tmp_path / "serial", jobs=1)
    # a local cluster of worker threads (no process start-up cost); the sweep uses the current client
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as lc, \
            distributed.Client(lc):
        dask = sweep(cells, tmp_path / "dask", jobs=2, backend="dask")
    pd.testing.assert_frame_equal(serial.table, dask.table, check_exact=True)


@pytest.mark.slow
def test_ray_backend_equals_serial(tmp_path):
    pytest.importorskip("ray", reason="the ray backend needs ray (in the test and dist extras); not installed here")
    cells = small_grid().cells()
    serial = sweep(cells, tmp_path / "serial", jobs=1)
    ray = sweep(cells, tmp_path / "ray", jobs=2, backend="ray")
    pd.testing.assert_frame_equal(serial.table, ray.table, check_exact=True)


def _synthetic(slopes: dict[tuple[str, float], float], seeds: int = 3, horizon: int = 1024) -> pd.DataFrame:
    t = np.unique(np.geomspace(1, horizon, 30).astype(int))
    rows = []
    for (agent, eps), slope in slopes.items():
        for seed in range(seeds):
            for ti in t:
                rows.append(dict(env="e", agent=agent, privacy_model="none" if np.isinf(eps) else "jdp", epsilon=eps,
                                 delta=0.0 if np.isinf(eps) else 1e-5, horizon=horizon, seed=seed, t=ti,
                                 cum_regret=(1 + seed) * float(ti) ** slope,
                                 epsilon_spent=0.0 if np.isinf(eps) else eps * (1.5 if agent == "leaky" else 0.99)))
    return pd.DataFrame(rows)


def test_report_numbers():
    from scipy import stats

    from privbandit.report.tables import final_regret, ledger_guarantees, loglog_slopes, price_of_privacy

    df = _synthetic({("ref", np.inf): 0.5, ("priv", 1.0): 0.75, ("leaky", 1.0): 0.5})
    final = final_regret(df).set_index("agent")
    vals = np.array([1, 2, 3]) * 1024 ** 0.75
    half = stats.t.ppf(0.975, 2) * vals.std(ddof=1) / np.sqrt(3)
    assert np.isclose(final.loc["priv", "mean"], vals.mean())
    factor = np.exp(half / vals.mean())  # the t interval of log(mean), by the delta method
    assert np.isclose(final.loc["priv", "ci_high"], vals.mean() * factor)
    assert np.isclose(final.loc["priv", "ci_low"], vals.mean() / factor)
    slopes = loglog_slopes(df).set_index("agent")
    assert np.allclose(slopes.loc[["ref", "priv"], "mean"], [0.5, 0.75])
    pop = price_of_privacy(final_regret(df), {"priv": "ref"})
    pop = pop.set_index("agent")  # every private agent, against the best non-private one (ref)
    assert list(pop.index) == ["priv", "leaky"] and np.isclose(pop.loc["priv", "ratio"], 1024 ** 0.25)
    ledger = ledger_guarantees(df).set_index("agent")
    assert ledger.loc["priv", "within_budget"] and not ledger.loc["leaky", "within_budget"]
    assert ledger.loc["ref", "runs"] == 3


def test_final_regret_at_an_earlier_round_gives_the_price_of_privacy_over_time():
    from privbandit.report.tables import final_regret, price_of_privacy

    df = _synthetic({("ref", np.inf): 0.5, ("priv", 1.0): 0.75})
    for t in (17, 244, 1024):
        final = final_regret(df, at=t).set_index("agent")
        assert np.isclose(final.loc["priv", "mean"], 2 * t ** 0.75)   # seeds 0, 1, 2: mean factor 2
        pop = price_of_privacy(final_regret(df, at=t), {"priv": "ref"})
        assert np.isclose(pop["ratio"].iloc[0], t ** 0.25)
    with pytest.raises(ValueError, match="at = 7"):
        final_regret(df, at=7)
    for bad in (0, -4, 2.0, True):
        with pytest.raises(ValueError, match="at must be a positive integer"):
            final_regret(df, at=bad)


def test_results_csv_covers_every_cell_of_the_folder(tmp_path):
    uniform = small_grid(seeds=1).cells()
    greedy = Grid((AgentEntry("epsilon-greedy", private=False),), ENVS[:1], seeds=1, horizon=64).cells()
    sweep(uniform, tmp_path)
    res = sweep(greedy, tmp_path)  # another agent into the same folder: the first sweep's cells stay
    table = read_cell(tmp_path / "results.csv")
    assert set(table["agent"]) == {"uniform", "epsilon-greedy"}
    assert sorted(res.others) == sorted(c.key for c in uniform)
    assert list(dict.fromkeys(table["agent"])) == ["epsilon-greedy", "uniform"]  # this sweep's cells first
    pd.testing.assert_frame_equal(res.table, table, check_exact=True)


def test_regret_intervals_never_go_below_zero_and_few_seeds_are_flagged(tmp_path):
    from scipy import stats

    from privbandit.report.tables import final_regret, headline_table, loglog_slopes, write_report

    two = _synthetic({("priv", 1.0): 0.75}, seeds=2)  # regrets x and 2x: the t interval reaches -4.85x
    final = final_regret(two).iloc[0]
    vals = np.array([1, 2]) * 1024 ** 0.75
    half = stats.t.ppf(0.975, 1) * vals.std(ddof=1) / np.sqrt(2)
    factor = np.exp(half / vals.mean())  # the interval is taken on the log scale: mean divided and multiplied by it
    assert vals.mean() - half < 0 and np.isclose(final["ci_low"], vals.mean() / factor) and final["ci_low"] > 0
    assert np.isclose(final["ci_high"], vals.mean() * factor)
    assert final["few_seeds"] and headline_table(final_regret(two))["flag"].tolist() == ["< 3 seeds"]
    three = _synthetic({("priv", 1.0): 0.75}, seeds=3)
    assert not final_regret(three)["few_seeds"].any() and headline_table(final_regret(three))["flag"].eq("").all()
    assert not loglog_slopes(three)["few_seeds"].any() and loglog_slopes(two)["few_seeds"].all()
    text = write_report(two, tmp_path).read_text()
    regret_section = text.split("## Final regret")[1].split("## Log-log slopes")[0]
    row = next(line for line in regret_section.splitlines() if line.startswith("| e | priv"))
    assert "[0, " not in row and "-" not in row.split("|")[7] and row.rstrip(" |").endswith("< 3 seeds")


@pytest.mark.slow
@pytest.mark.parametrize("before", [None, "default"])
def test_loky_context_silences_only_the_resource_trackers_warnings_and_restores_the_environment(before, monkeypatch):

    from privbandit.agents.workers import TRACKER_FILTER

    if before is None:
        monkeypatch.delenv("PYTHONWARNINGS", raising=False)
    else:
        monkeypatch.setenv("PYTHONWARNINGS", before)
    with backend_context("loky", 2):
        inside = os.environ["PYTHONWARNINGS"]
        assert inside.endswith(TRACKER_FILTER) and (before is None or inside.startswith(before + ","))
        code = ("import warnings\n"
                "for m in ('joblib.externals.loky.backend.resource_tracker', 'privbandit.bench.sweep'):\n"
                "    warnings.warn_explicit('from ' + m, UserWarning, 'f.py', 1, module=m)\n")
        err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ)).stderr
    assert "from privbandit.bench.sweep" in err and "resource_tracker" not in err
    assert os.environ.get("PYTHONWARNINGS") == before


def test_estimate_times_each_combination_once_and_list_schedules_the_cells():
    from privbandit.bench.sweep import estimate

    grid = Grid(agents=(AgentEntry("uniform"), AgentEntry("elim-jdp")),
                envs=(EnvEntry("iso-d2", kwargs={"family": "isotropic", "n_arms": 3, "dim": 2}),),
                epsilons=(0.5, 1.0), seeds=3, horizon=256)
    cells = grid.cells()
    one = estimate(cells, jobs=1)
    assert one.timed == 2 and set(one.seconds) == {c.key for c in cells} and len(cells) == 9
    by_agent = {c.agent.label: one.seconds[c.key] for c in cells}
    assert all(one.seconds[c.key] == by_agent[c.agent.label] for c in cells)  # one run stands for its combination
    assert one.wall == pytest.approx(sum(one.seconds.values()))
    many = estimate(cells, jobs=len(cells))
    assert many.wall == pytest.approx(max(many.seconds.values()))
    assert "9 cells, 2 combinations timed once" in many.line() and f"on {len(cells)} idle workers" in many.line()
    with pytest.raises(ValueError, match="jobs"):
        estimate(cells, jobs=0)
