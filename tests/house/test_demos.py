"""The teaching demos print conclusions that follow from the numbers they print.

Each demo's closing sentences come from a function of its measured table (``price_conclusions``,
``rate_conclusion``, ``conclusion(s)``, in ``scripts/demo_studies.py``); these tests feed those functions small
hand-made tables, including ones where a hard-coded sentence would be false (a JDP / non-private regret ratio of
3.53 at epsilon = 1 beside "near 1 from epsilon ~ 1 on"; a local-DP slope of -0.30 beside "1/epsilon"), and run the
price-of-privacy demo once at a tiny size.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import load_script

pop = load_script("demo_price_of_privacy")
ols = load_script("demo_ols_failure")
infm = load_script("demo_information_matrices")
studies = load_script("demo_studies")
rates = load_script("paper_rates")

EPS = (0.3, 1.0, 3.0, 10.0, 30.0)


@pytest.mark.parametrize("ratios, expected", [
    ((4.1, 3.53, 2.0, 1.6, 1.2), 30.0),      # the reported run: 3.53 at epsilon = 1, cheap only at 30
    ((2.0, 1.4, 1.3, 1.1, 1.0), 1.0),
    ((1.2, 1.4, 1.3, 1.1, 1.0), 0.3),
    ((1.2, 1.4, 1.6, 1.1, 1.0), 10.0),       # "from epsilon on" means at every larger epsilon too
    ((4.0, 3.0, 2.5, 2.0, 1.6), None),
])
def test_cheap_from_epsilon_follows_the_ratios(ratios, expected):
    assert pop.first_epsilon_from_which(EPS, ratios, 1.5) == expected
    # Order-free: the same table shuffled gives the same answer.
    order = [3, 0, 4, 1, 2]
    assert pop.first_epsilon_from_which([EPS[i] for i in order], [ratios[i] for i in order], 1.5) == expected


def test_price_of_privacy_conclusions_state_what_was_measured():
    ratio, low, high = (5.0, 4.0, 2.0, 1.4, 1.2), (4.0, 3.5, 1.8, 1.2, 1.1), (6.0, 4.5, 2.2, 1.6, 1.3)
    jdp, ldp = (500.0, 400.0, 200.0, 140.0, 120.0), (60000.0, 20000.0, 4000.0, 1400.0, 600.0)
    text = "\n".join(pop.price_conclusions(EPS, ratio, low, high, jdp, ldp, 100000.0))
    assert ("elim-jdp-pooled's regret over the non-private elim-ucb's is 1.20x [95% 1.10, 1.30] at epsilon = 30 and "
            "5.00x [95% 4.00, 6.00] at epsilon = 0.3") in text
    assert "Joint DP is cheap (ratio <= 1.5) from epsilon = 10 on" in text
    assert "remaining gap" not in text                 # 140 -> 120 between epsilon 10 and 30: still falling
    assert "Local DP costs more than joint DP at every epsilon: elim-ldp-pooled's regret is 5.0-120.0x" in text
    assert "below half of uniform play's regret from epsilon = 1 on (0.60 of it at epsilon = 0.3" in text
    # Shuffled input gives the same sentences.
    order = [3, 0, 4, 1, 2]
    pick = [[v[i] for i in order] for v in (EPS, ratio, low, high, jdp, ldp)]
    assert "\n".join(pop.price_conclusions(*pick, 100000.0)) == text
    # The opposite table: JDP never cheap, LDP not above JDP everywhere, LDP never below half of uniform.
    nan = [float("nan")] * 5
    text = "\n".join(pop.price_conclusions(EPS, (4.0, 3.0, 2.5, 2.0, 1.6), nan, nan, jdp,
                                            (90000.0, 80000.0, 70000.0, 60000.0, 100.0), 100000.0))
    assert "1.60x at epsilon = 30" in text and "[95%" not in text
    assert "not cheap (ratio <= 1.5) anywhere in this range: its smallest ratio is 1.60, at epsilon = 30" in text
    assert "does not cost more than joint DP at every epsilon" in text
    assert "below half of uniform play's regret from epsilon = 30 on" in text
    text = "\n".join(pop.price_conclusions(EPS, ratio, low, high, jdp, [99000.0] * 5, 100000.0))
    assert "not below half of uniform play's regret at the largest epsilon (0.99 of it" in text
    # A flat tail with a gap that stays: named, but only when the interval excludes 1.
    flat = (500.0, 400.0, 200.0, 198.0, 197.0)
    text = "\n".join(pop.price_conclusions(EPS, ratio, low, high, flat, ldp, 100000.0))
    assert "Between epsilon = 10 and 30 elim-jdp-pooled's regret changes by -1% while it stays 1.20x" in text
    wide = (4.0, 3.5, 1.8, 1.2, 0.9)
    assert "remaining gap" not in "\n".join(pop.price_conclusions(EPS, ratio, wide, high, flat, ldp, 100000.0))


def test_rate_conclusion_puts_the_measured_slope_beside_the_papers():
    rate_conclusion, PAPER_RATES = studies.rate_conclusion, rates.PAPER_RATES
    ldp, jdp = PAPER_RATES["elim-ldp-pooled"], PAPER_RATES["elim-jdp-pooled"]
    flat = rate_conclusion("elim-ldp-pooled", (-0.30, -0.40, -0.20), ldp, ceiling=(0.3, 0.97))
    assert "slope -0.30 [95% -0.40, -0.20]" in flat and "sqrt(d^5 T)/eps (`thm:regret-upper-LDP`) gives -1" in flat
    assert "flatter than that: at epsilon = 0.3 its regret is 0.97 of uniform play's" in flat
    assert "ceiling" not in rate_conclusion("elim-ldp-pooled", (-0.30, -0.40, -0.20), ldp, ceiling=(0.3, 0.2))
    assert "within that range" in rate_conclusion("elim-ldp-pooled", (-0.95, -1.1, -0.8), ldp)
    assert "steeper than that" in rate_conclusion("elim-ldp-pooled", (-1.5, -1.7, -1.3), ldp)
    one_seed = rate_conclusion("elim-ldp-pooled", (-0.9, float("nan"), float("nan")), ldp, where=" at epsilon >= 1")
    assert "at epsilon >= 1 has log-log slope -0.90;" in one_seed and "flatter than that." in one_seed
    near_zero = rate_conclusion("elim-jdp-pooled", (-0.1, -0.15, -0.05), jdp)
    assert "between -1 (the 1/eps term dominates) and +0 (it is negligible). Measured: within that range." in near_zero
    with pytest.raises(ValueError, match="has no epsilon"):
        rate_conclusion("elim-ucb", (-0.1, -0.2, 0.0), PAPER_RATES["elim-ucb"])


def test_regret_by_seed_and_the_paired_ratio_follow_the_table():
    import pandas as pd

    ratio_of_means, regret_by_seed = studies.ratio_of_means, studies.regret_by_seed
    final = pd.DataFrame([dict(agent="a", epsilon=e, seed=s, cum_regret=10.0 * (s + 1) / e)
                          for e in (1.0, 10.0) for s in range(3)]
                         + [dict(agent="ref", epsilon=np.inf, seed=s, cum_regret=s + 1.0) for s in range(3)])
    a = regret_by_seed(final, "a", (10.0, 1.0))
    np.testing.assert_allclose(a, [[1.0, 10.0], [2.0, 20.0], [3.0, 30.0]])
    ref = regret_by_seed(final, "ref")
    assert ref.shape == (3, 1)
    with pytest.raises(ValueError, match="no run of 'a' at epsilon"):
        regret_by_seed(final, "a", (3.0,))
    with pytest.raises(ValueError, match="same seeds"):
        regret_by_seed(final.drop(index=0), "a", (1.0, 10.0))
    ratio, low, high = ratio_of_means(a, ref, n_boot=200)
    np.testing.assert_allclose(ratio, [1.0, 10.0])
    # Each seed's pair has the same ratio, so a paired bootstrap cannot move it; an unpaired one would.
    np.testing.assert_allclose(low, ratio) and np.testing.assert_allclose(high, ratio)
    ratio, low, high = ratio_of_means(a, ref[::-1], n_boot=200)
    assert np.all(low < ratio) and np.all(ratio < high)
    assert np.isnan(ratio_of_means(a[:1], ref[:1])[1]).all()
    with pytest.raises(ValueError, match="must pair seeds"):
        ratio_of_means(a, ref[:2])


def test_ols_conclusion_compares_the_ratio_with_one_over_s():
    assert "at least the 1/s = 5" in ols.conclusion(6.0, 0.2)
    assert "by less than the 1/s = 5" in ols.conclusion(1.7, 0.2)
    assert "not visible" in ols.conclusion(0.9, 0.2)


def test_information_matrix_conclusions_follow_the_axis_ratios():
    ratios = {"spiky": {"Sigma^1/2": 3.16, "U*^-1": 9.99, "W*^-1 (gamma=0.3)": 4.36},
              "other": {"Sigma^1/2": 5.0, "U*^-1": 4.0, "W*^-1 (gamma=0.3)": 6.0}}
    lines = infm.conclusions(ratios, "spiky", 10.0)
    assert lines[0].startswith("spiky: U*^-1 is more lopsided") and "is between the two" in lines[0]
    assert "is not more lopsided" in lines[1] and "outside" in lines[1]
    assert "closer to the condition number 10 than" in lines[2]
    ratios["spiky"]["U*^-1"] = 3.5
    assert "closer to the square root 3.16" in infm.conclusions(ratios, "spiky", 10.0)[2]
    assert infm.axis_ratio(np.diag([2.0, -0.5])) == pytest.approx(4.0)


@pytest.mark.slow
def test_price_of_privacy_demo_prints_conclusions_from_its_table(tmp_path, capsys):
    assert pop.main(["--horizon", "1024", "--seeds", "2", "--epsilons", "1,30", "--jobs", "1", "--bootstrap", "50",
                     "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^\s+(\d+(?:\.\d+)?)\s.*\s(\d+\.\d\d)(?: \[[\d.]+, [\d.]+\])?\s+([\d.]+)$", out,
                      flags=re.MULTILINE)
    ratios = {float(e): float(r) for e, r, _ in rows}
    assert set(ratios) == {1.0, 30.0}
    start = pop.first_epsilon_from_which(list(ratios), list(ratios.values()), 1.5)
    if start is None:
        assert "not cheap (ratio <= 1.5) anywhere in this range" in out
    else:
        assert f"cheap (ratio <= 1.5) from epsilon = {start:g} on" in out
    slope = re.search(r"^  elim-ldp-pooled\s+measured ([+-]\d\.\d\d) .*paper -1 ", out, flags=re.MULTILINE)
    assert slope and f"elim-ldp-pooled: regret against epsilon has log-log slope {slope.group(1)}" in out
    assert "1/epsilon rate" not in out and (tmp_path / "price_of_privacy.png").is_file()


def test_epsilon_slope_and_its_sentence_follow_the_numbers():
    epsilon_slope, slope_conclusion = studies.epsilon_slope, studies.slope_conclusion
    eps = np.array([0.3, 1.0, 3.0, 10.0])
    assert epsilon_slope(eps, 5.0 / eps) == pytest.approx(-1.0)
    assert epsilon_slope(eps, np.full(4, 7.0)) == pytest.approx(0.0, abs=1e-12)
    assert "close to -1, ~1/epsilon" in slope_conclusion("LDP error", -0.9)
    assert "close to 0, nearly free" in slope_conclusion("JDP regret", 0.1)
    assert "flatter than 1/epsilon" in slope_conclusion("LDP regret", -0.5)
    assert "interval contains -1" in slope_conclusion("x", -0.8, low=-1.1, high=-0.6)
    assert "interval contains 0" in slope_conclusion("x", -0.2, low=-0.5, high=0.1)
    assert "both outside its interval" in slope_conclusion("x", -0.3, low=-0.4, high=-0.2)
    assert "[95% -0.40, -0.20]" in slope_conclusion("x", -0.3, low=-0.4, high=-0.2)
    assert "steeper than 1/epsilon" in slope_conclusion("x", -1.6)
    assert "grows with epsilon" in slope_conclusion("x", 0.6)
    with pytest.raises(ValueError, match="two distinct epsilons"):
        epsilon_slope([1.0, 1.0], [2.0, 3.0])
