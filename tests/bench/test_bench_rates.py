"""scripts/bench_rates.py: the exponent fit (curves of known slope), reports of saved runs and the command line's
errors."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import load_script

ROOT = Path(__file__).resolve().parents[2]
bench = load_script("bench_rates")
T = 2.0 ** np.arange(10, 17)


def test_a_power_law_gives_its_exponent_and_an_interval_around_it():
    gen = np.random.default_rng(0)
    curves = 3.0 * T ** 0.5 * np.exp(0.1 * gen.standard_normal((8, T.size)))    # 8 seeds, 10% noise
    slope, low, high = bench.fit_exponent(T, curves, n_boot=500)
    assert abs(slope - 0.5) < 0.03 and low < slope < high and low < 0.5 < high and high - low < 0.1
    exact, lo, hi = bench.fit_exponent(T, np.tile(2.0 * T ** 0.75, (3, 1)), n_boot=100)
    assert exact == pytest.approx(0.75) and lo == pytest.approx(0.75) and hi == pytest.approx(0.75)


def test_an_additive_term_lowers_the_fitted_exponent_below_the_rate():
    # sqrt(T) + c: the local slope is below 1/2 while c dominates (what the script's notes warn about)
    slope, _, _ = bench.fit_exponent(T, np.tile(T ** 0.5 + 200.0, (2, 1)), n_boot=0)
    assert 0.1 < slope < 0.4


def test_the_fit_in_one_over_epsilon_uses_the_mean_over_seeds():
    inv_eps = np.array([0.1, 1.0, 10.0])
    curves = np.array([[10.0, 100.0, 1000.0], [30.0, 300.0, 3000.0]])       # slope 1 on the mean
    slope, _, _ = bench.fit_exponent(inv_eps, curves, n_boot=0)
    assert slope == pytest.approx(1.0)


@pytest.mark.parametrize("x, curves, match", [
    (np.array([1.0, 1.0]), np.ones((2, 2)), "two distinct positive"),
    (np.array([1.0, 2.0]), np.ones((2, 3)), r"shape \(n_seeds, 2\)"),
    (np.array([1.0, 2.0]), np.array([[1.0, 0.0]]), "finite and > 0"),
])
def test_the_fit_refuses_what_it_cannot_fit(x, curves, match):
    with pytest.raises(ValueError, match=match):
        bench.fit_exponent(x, curves)


@pytest.mark.parametrize("argv, what", [
    (["--seeds", "0"], "--seeds"),
    (["--agents", "elim-jdp,uniform"], "--agents"),
    (["--agents", ""], "--agents"),
    (["--log2-horizons", "12"], "--log2-horizons"),
    (["--log2-horizons", "14,12"], "--log2-horizons"),
    (["--epsilons", "1"], "--epsilons"),
    (["--epsilons", "0,1"], "--epsilons"),
    (["--epsilon", "-1"], "--epsilon"),
    (["--log2-eps-horizon", "30"], "--log2-eps-horizon"),
    (["--families", ","], "--families"),
])
def test_bad_arguments_are_one_line_and_exit_code_2(argv, what, capsys):
    with pytest.raises(SystemExit) as exc:
        bench.parse_args(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert re.fullmatch(rf"\S+: error: argument {what}: .*\n", err), err


def test_every_agent_has_a_paper_rate_and_a_block():
    in_blocks = {a for members, _, _ in bench.BLOCKS.values() for a in members}
    assert in_blocks == set(bench.PAPER_RATES)
    assert bench.PAPER_RATES["ldp-ucb"].t_exponent == 0.75 and bench.PAPER_RATES["elim-jdp"].t_exponent == 0.5


def _saved_runs(path, t_slope=0.5, eps_slope=1.0, seeds=3):
    """A --out CSV of elim-jdp-pooled with known slopes in T and in 1/epsilon (what ``measure`` writes)."""
    rows = []
    for seed in range(seeds):
        for log2 in range(10, 15):
            rows.append(dict(fit="T", block="jdp", agent="elim-jdp-pooled", family="spiky", seed=seed,
                             horizon=2 ** log2, epsilon=1.0, regret=(1 + seed) * 2.0 ** (log2 * t_slope)))
        for eps in (0.1, 1.0, 10.0):
            rows.append(dict(fit="eps", block="jdp", agent="elim-jdp-pooled", family="spiky", seed=seed,
                             horizon=2 ** 14, epsilon=eps, regret=(1 + seed) * 100.0 * eps ** -eps_slope))
    pd.DataFrame(rows, columns=bench.RUN_COLUMNS).to_csv(path, index=False)
    return path


def test_a_saved_run_is_reported_with_its_own_settings(tmp_path, capsys):
    path = _saved_runs(tmp_path / "runs.csv", t_slope=0.5, eps_slope=1.0)
    bench.main(["--from", str(path), "--bootstrap", "50", "--seeds", "9"])
    out = capsys.readouterr().out
    assert "3 seeds" in out and "T = 2^10..2^14 at epsilon 1" in out and "epsilon 0.1,1,10 at T = 2^14" in out
    row = next(line for line in out.splitlines() if line.startswith("elim-jdp-pooled"))
    assert re.search(r"0\.50 \[ 0\.50,  0\.50\]\s+0\.5\s+as stated\s+1\.00 \[ 1\.00,  1\.00\]\s+0\.\.1 \(additive\)\s+"
                     r"as stated", row), row


def test_the_markdown_table_says_where_a_slope_lies_against_the_paper(tmp_path, capsys):
    path = _saved_runs(tmp_path / "runs.csv", t_slope=0.9, eps_slope=0.2)
    bench.main(["--from", str(path), "--bootstrap", "20", "--markdown"])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| elim-jdp-pooled"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:] == ["0.90 [0.90, 0.90]", "0.5", "above", "0.20 [0.20, 0.20]", "0..1 (additive)", "as stated"]
    assert "| elim-jdp-pooled | d^2 sqrt(T) + d^{5/2}/eps | thm:regret-upper-JDP |" in out


@pytest.mark.parametrize("low, high, paper, expected", [
    (0.1, 0.2, (0.5, 0.5), "below"), (0.6, 0.7, (0.5, 0.5), "above"), (0.4, 0.6, (0.5, 0.5), "as stated"),
    (0.2, 0.3, (0.0, 1.0), "as stated"), (0.5, 0.6, (1.0, 1.0), "below"), (0.5, 0.6, None, "-"),
    (float("nan"), float("nan"), (0.5, 0.5), "-"),
])
def test_the_verdict_compares_the_interval_with_the_paper_range(low, high, paper, expected):
    assert bench.verdict(low, high, paper) == expected


def test_a_file_that_is_not_a_saved_run_is_one_line_and_exit_code_2(tmp_path, capsys):
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("a,b\n1,2\n")
    unknown = tmp_path / "unknown.csv"
    pd.read_csv(_saved_runs(tmp_path / "r.csv")).assign(agent="uniform").to_csv(unknown, index=False)
    for path, what in ((tmp_path / "missing.csv", "cannot read"), (wrong, "missing columns"),
                       (unknown, "without a paper rate: uniform")):
        with pytest.raises(SystemExit) as exc:
            bench.parse_args(["--from", str(path)])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and re.fullmatch(r"\S+: error: argument --from: .*\n", err) and what in err, err


def test_the_committed_runs_of_the_docs_are_a_full_saved_run():
    runs = pd.read_csv(ROOT / "docs" / "data" / "rates.csv")
    assert list(runs.columns) == list(bench.RUN_COLUMNS)
    assert set(runs["agent"]) <= set(bench.PAPER_RATES) and runs["seed"].nunique() == 10
    assert runs[runs["fit"] == "T"]["horizon"].max() == 2 ** 20
