"""The teaching demos print conclusions that follow from the numbers they print.

Each demo's closing sentences come from a function of its measured table (``conclusions`` /
``conclusion``); these tests feed those functions small hand-made tables, including ones where the
old hard-coded sentences were false (a JDP / non-private regret ratio of 3.53 at epsilon = 1 printed
beside "near 1 from epsilon ~ 1 on"), and run the price-of-privacy demo once at a tiny size.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"_demo_{name}", SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


pop = load("demo_price_of_privacy")
ols = load("demo_ols_failure")
infm = load("demo_information_matrices")

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
    jerr, lerr = (0.12, 0.054, 0.044, 0.038, 0.037), (0.40, 0.42, 0.32, 0.22, 0.13)
    lines = pop.conclusions(EPS, (4.1, 3.53, 2.0, 1.6, 1.2), [1700.0] * 5, 1700.0, jerr, lerr)
    text = "\n".join(lines)
    assert "from epsilon = 30 on" in text and "near 1" not in text
    assert "3.3-7.8x the joint-DP one at every epsilon" in text
    assert "has not left uniform play" in text
    lines = pop.conclusions(EPS, (4.0, 3.0, 2.5, 2.0, 1.6), [1700.0, 1700.0, 1500.0, 900.0, 600.0], 1700.0,
                            jerr, (0.1, 0.05, 0.04, 0.03, 0.02))
    text = "\n".join(lines)
    assert "not reached in this range (smallest ratio 1.60, at epsilon = 30)" in text
    assert "not above the joint-DP one at every epsilon" in text
    assert "below 95% of uniform play's at epsilon in {3, 10, 30}" in text


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


def test_price_of_privacy_demo_prints_conclusions_from_its_table(tmp_path, capsys):
    assert pop.main(["--horizon", "1024", "--seeds", "1", "--epsilons", "1,30", "--jobs", "1",
                     "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^\s+(\d+(?:\.\d+)?)\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s+[\d.]+$", out, flags=re.MULTILINE)
    ratios = {float(e): float(r) for e, r in rows}
    assert set(ratios) == {1.0, 30.0}
    start = pop.first_epsilon_from_which(list(ratios), list(ratios.values()), 1.5)
    if start is None:
        assert "is not reached in this range" in out
    else:
        assert f"from epsilon = {start:g} on" in out
    assert "near 1 from epsilon ~ 1" not in out


def test_epsilon_slope_and_its_sentence_follow_the_numbers():
    from privbandit.sim.demos import epsilon_slope, slope_conclusion

    eps = np.array([0.3, 1.0, 3.0, 10.0])
    assert epsilon_slope(eps, 5.0 / eps) == pytest.approx(-1.0)
    assert epsilon_slope(eps, np.full(4, 7.0)) == pytest.approx(0.0, abs=1e-12)
    assert "close to -1, the 1/epsilon rate" in slope_conclusion("LDP error", -0.9)
    assert "close to 0, nearly free" in slope_conclusion("JDP regret", 0.1)
    assert "flatter than the 1/epsilon rate" in slope_conclusion("LDP regret", -0.5)
    assert "steeper than 1/epsilon" in slope_conclusion("x", -1.6)
    assert "grows with epsilon" in slope_conclusion("x", 0.6)
    with pytest.raises(ValueError, match="two distinct epsilons"):
        epsilon_slope([1.0, 1.0], [2.0, 3.0])
