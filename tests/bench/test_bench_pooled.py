"""scripts/bench_pooled.py: the coverage of a final Estimate, the Markdown table of saved runs, the committed runs of
the docs and the command line's errors."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from conftest import load_script

import privbandit  # noqa: F401  (registers the envs)
from privbandit.links import identity_link
from privbandit.oracles.base import Estimate

ROOT = Path(__file__).resolve().parents[2]
bench = load_script("bench_pooled")


@pytest.fixture
def env():
    made = gym.make("PrivLinCB-v0", family="spiky", dim=3, n_arms=2, horizon=16)
    yield made
    made.close()


def agent_with(theta: np.ndarray, width: float) -> SimpleNamespace:
    """An agent whose last release is theta with the radius ``width`` ||phi||."""
    return SimpleNamespace(estimates=[Estimate(theta, identity_link(), np.eye(theta.size), width)])


def test_the_coverage_of_an_exact_estimate_is_one_and_of_a_wrong_narrow_one_zero(env):
    theta = env.unwrapped.theta
    assert bench.final_coverage(agent_with(theta, 0.0), env, seed=0) == (1.0, 0.0)
    wrong, width = bench.final_coverage(agent_with(-theta, 1e-9), env, seed=0)
    assert wrong < 0.01 and 0.0 < width < 1e-9


def test_the_coverage_counts_the_features_whose_error_is_within_the_width(env):
    theta = env.unwrapped.theta
    off = theta + np.array([0.3, 0.0, 0.0])                 # error |0.3 phi_1| against width 0.1 ||phi||
    coverage, _ = bench.final_coverage(agent_with(off, 0.1), env, seed=3)
    features = env.unwrapped.uniform_policy_features(bench.COVERAGE_ROUNDS, rng=3 + bench.COVERAGE_SEED)
    expected = np.mean(np.abs(0.3 * features[:, 0]) <= 0.1 * np.linalg.norm(features, axis=1))
    assert coverage == pytest.approx(expected) and 0.0 < coverage < 1.0


def test_an_agent_without_a_release_has_no_coverage(env):
    for agent in (SimpleNamespace(), SimpleNamespace(estimates=[])):
        assert all(np.isnan(v) for v in bench.final_coverage(agent, env, seed=0))


def saved_runs(coverage: list[float], agent: str = "elim-ldp-pooled") -> pd.DataFrame:
    regrets = [100.0, 200.0, 300.0][:len(coverage)]
    return pd.DataFrame([dict(set="ldp", family="spiky", dim=5, n_arms=5, epsilon=1.0, agent=agent, seed=s,
                              horizon=1024, t=1024, cum_regret=r, seconds=0.1, coverage=c, median_width=0.1 * (s + 1))
                         for s, (r, c) in enumerate(zip(regrets, coverage))])


def test_the_markdown_table_gives_the_mean_coverage_and_the_lowest_seed():
    text = bench.markdown(saved_runs([0.9, 0.6, 1.0]))
    row = next(line for line in text.splitlines() if "`elim-ldp-pooled`" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:3] == ["spiky", "5", "1"]
    assert cells[4].startswith("200 [") and cells[5] == "1.50"          # mean 200, worst 300 / median 200
    assert cells[6] == "0.833 (0.600)" and cells[7] == "0.2"
    assert "T = 2^10; 3 seeds" in text


def test_runs_saved_without_coverage_are_refused_by_the_markdown_table():
    with pytest.raises(ValueError, match="no coverage"):
        bench.markdown(saved_runs([0.9, 0.6]).drop(columns=["coverage", "median_width"]))


@pytest.mark.parametrize("content, what", [(None, "cannot read"), ("", "cannot read"),
                                           ("a,b\n1,2\n", "not a saved run")])
def test_the_command_line_refuses_a_file_that_is_not_a_saved_run_in_one_line(tmp_path, capsys, content, what):
    path = tmp_path / "runs.csv"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--from-csv", str(path), "--markdown"])
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2 and "--from-csv" in err[-1] and what in err[-1]


def test_a_summary_at_a_round_the_runs_did_not_log_is_refused(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    saved_runs([0.9, 0.6]).to_csv(path, index=False)
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--from-csv", str(path), "--set", "ldp", "--at-log2", "8"])
    assert exit_info.value.code == 2 and "--at-log2" in capsys.readouterr().err


def test_a_short_run_saves_the_final_rows_with_their_coverage(tmp_path, capsys):
    out = tmp_path / "runs.csv"
    bench.main(["--set", "ldp", "--agents", "elim-ldp-pooled,uniform", "--log2-horizon", "11", "--seeds", "1",
                "--families", "spiky", "--epsilons", "1", "--final-only", "--out", str(out)])
    runs = pd.read_csv(out)
    assert set(runs["t"]) == {2 ** 11} and len(runs) == 2
    pooled = runs.set_index("agent").loc["elim-ldp-pooled"]
    assert 0.0 <= pooled["coverage"] <= 1.0 and pooled["median_width"] > 0
    assert np.isnan(runs.set_index("agent").loc["uniform", "coverage"])
    assert "coverage" in capsys.readouterr().out


def test_the_committed_runs_of_the_docs_are_full_saved_runs():
    paths = [ROOT / "docs" / "data" / f"pooled_{s}.csv" for s in ("jdp", "ldp")]
    runs = bench.load([str(p) for p in paths])
    assert set(runs["set"]) == {"jdp", "ldp"} and set(runs["horizon"]) == {2 ** 20} and set(runs["t"]) == {2 ** 20}
    assert runs.groupby(["set", "agent", "family", "epsilon"])["seed"].nunique().eq(10).all()
    assert runs["coverage"].between(0.0, 1.0).all()
    assert "| heavy-tailed | 5 | 1 | `elim-ldp-pooled (rho 1)` |" in bench.markdown(runs)
