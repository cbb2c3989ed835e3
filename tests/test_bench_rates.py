"""scripts/bench_rates.py: the exponent fit (curves of known slope) and the command line's errors."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import load_script

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
