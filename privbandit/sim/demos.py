"""The measurements behind the teaching demos, and the conclusions computed from them.

Shared by ``scripts/demo_*.py`` and the notebook ``docs/notebooks/price_of_privacy.ipynb``: each study
returns a tidy table, and each ``*_conclusion(s)`` function turns measured numbers into sentences, so a
short run says what it measured, never what a long run would.

- :func:`regression_errors`, :func:`price_conclusions`: the price of privacy, joint DP against local DP,
  as epsilon varies (regret ratios and IW-regression errors);
- :func:`epsilon_slope`, :func:`slope_conclusion`: the log-log slope of a measure against epsilon
  (0 = free, -1 = the local-DP 1/epsilon);
- :func:`ols_sample`, :func:`ols_study`, :func:`ols_conclusion`: why perturbing OLS fails under local DP (d = 1);
- :func:`information_matrices`, :func:`axis_ratio`, :func:`information_conclusions`: U* and W* next to Sigma.

References
----------
Source paper, `tab:comp`, `eq:PoP`, `ssec:OLS`, `lem:1d-LDP`, `prop:OLS-fail-local-gen`, `def:FLDP`,
`def:FJDP`, `lem:U-L1-covariance`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .. import infomatrix
from ..envs import make_family
from ..oracles import make_oracle

__all__ = ["axis_ratio", "epsilon_slope", "first_epsilon_from_which", "information_conclusions",
           "information_matrices", "ols_conclusion", "ols_sample", "ols_study", "price_conclusions",
           "regression_errors", "slope_conclusion"]


def regression_errors(eps: tuple[float, ...], n: int, seeds: int, delta: float = 1e-6) -> pd.DataFrame:
    """Sigma-norm error of IW-Regression-DP and IW-Regression-LDP on n rare-direction rows (d = 5) per epsilon.

    Returns
    -------
    DataFrame
        Columns model ("joint DP" or "local DP"), epsilon, seed, error = ||theta_hat - theta*||_Sigma.

    References
    ----------
    Source paper, `alg:JDP-linear-regression`, `alg:LDP-linear-regression`.
    """
    family = make_family("rare-direction", dim=5, n_arms=1)
    sigma = family.second_moment()
    rows = []
    for seed in range(seeds):
        data_rng, fit_rng = np.random.default_rng([seed, n]).spawn(2)
        theta = family.theta_direction(data_rng)
        x = family.sample(n, data_rng)[:, 0, :]
        y = np.where(data_rng.random(n) < (1 + x @ theta) / 2, 1.0, -1.0)
        for model, name in (("joint DP", "iw-regression-dp"), ("local DP", "iw-regression-ldp")):
            for e in eps:
                err = make_oracle(name, epsilon=e, delta=delta).fit(x, y, rng=fit_rng.spawn(1)[0]).theta - theta
                rows.append(dict(model=model, epsilon=e, seed=seed, error=float(np.sqrt(err @ sigma @ err))))
    return pd.DataFrame(rows)


def first_epsilon_from_which(eps: Sequence[float], values: Sequence[float], limit: float) -> float | None:
    """The smallest epsilon from which on (at it and every larger epsilon) ``values <= limit``, else None."""
    order = np.argsort(eps)
    e, v = np.asarray(eps, dtype=float)[order], np.asarray(values, dtype=float)[order]
    ok = v <= limit
    if not ok[-1]:
        return None
    bad = np.nonzero(~ok)[0]
    return float(e[bad[-1] + 1] if bad.size else e[0])


def price_conclusions(eps: Sequence[float], jdp_ratio: Sequence[float], ldp_regret: Sequence[float], uniform: float,
                      jdp_error: Sequence[float], ldp_error: Sequence[float], *, cheap: float = 1.5) -> list[str]:
    """What the measured price-of-privacy tables show, one sentence per finding, each computed from the numbers.

    Parameters
    ----------
    eps : sequence of float
        The epsilons, in the order of the other sequences.
    jdp_ratio : sequence of float
        Joint-DP regret / non-private regret, per epsilon.
    ldp_regret : sequence of float
        Local-DP regret, per epsilon.
    uniform : float
        Regret of uniform play.
    jdp_error, ldp_error : sequence of float
        Sigma-norm error of IW-Regression-DP and IW-Regression-LDP, per epsilon.
    cheap : float
        The ratio of joint-DP to non-private regret counted as "cheap" (default 1.5).

    Returns
    -------
    list of str

    References
    ----------
    Source paper, `tab:comp`, `eq:PoP`.
    """
    order = np.argsort(eps)
    e = np.asarray(eps, dtype=float)[order]
    ratio, ldp = np.asarray(jdp_ratio, dtype=float)[order], np.asarray(ldp_regret, dtype=float)[order]
    jerr, lerr = np.asarray(jdp_error, dtype=float)[order], np.asarray(ldp_error, dtype=float)[order]
    lines = []
    start = first_epsilon_from_which(e, ratio, cheap)
    if start is None:
        i = int(np.argmin(ratio))
        lines.append(f"Joint DP: JDP / non-private regret <= {cheap:g} is not reached in this range (smallest "
                     f"ratio {ratio[i]:.2f}, at epsilon = {e[i]:g}).")
    else:
        lines.append(f"Joint DP: JDP / non-private regret <= {cheap:g} from epsilon = {start:g} on "
                     f"(ratio {ratio[-1]:.2f} at epsilon = {e[-1]:g}, {ratio[0]:.2f} at epsilon = {e[0]:g}).")
    lines.append(f"Joint-DP regression error: {jerr[0]:.4f} at epsilon = {e[0]:g}, {jerr[-1]:.4f} at epsilon = "
                 f"{e[-1]:g} ({jerr[0] / jerr[-1]:.1f}x).")
    rel = lerr / jerr
    if np.all(rel > 1):
        lines.append(f"Local DP: its regression error is {rel.min():.1f}-{rel.max():.1f}x the joint-DP one at every "
                     f"epsilon, and {lerr[0] / lerr[-1]:.1f}x lower at epsilon = {e[-1]:g} than at {e[0]:g}.")
    else:
        lines.append(f"Local DP: its regression error is not above the joint-DP one at every epsilon "
                     f"(LDP / JDP {rel.min():.1f}-{rel.max():.1f}x).")
    left = ldp < 0.95 * uniform
    if not left.any():
        lines.append("The local-DP agent has not left uniform play at any epsilon (its regret is within 5% of the "
                     "uniform one): local-DP elimination needs a longer horizon before its epochs eliminate arms.")
    else:
        lines.append("The local-DP agent's regret is below 95% of uniform play's at epsilon in {"
                     + ", ".join(f"{v:g}" for v in e[left]) + "}.")
    return lines


def epsilon_slope(eps: Sequence[float], values: Sequence[float]) -> float:
    """Least-squares slope of log(values) against log(epsilon): 0 when free of epsilon, -1 for ~1/epsilon."""
    e, v = np.asarray(eps, dtype=float), np.asarray(values, dtype=float)
    if e.size < 2 or e.shape != v.shape or np.unique(e).size < 2 or np.any(e <= 0) or np.any(v <= 0):
        raise ValueError("need at least two distinct epsilons > 0 and as many values > 0")
    return float(np.polyfit(np.log(e), np.log(v), 1)[0])


def slope_conclusion(what: str, slope: float, *, tol: float = 0.25) -> str:
    """One sentence placing a measured log-log slope against epsilon between free (0) and 1/epsilon (-1).

    Parameters
    ----------
    what : str
        What the slope is of, e.g. "local-DP regression error".
    slope : float
        From :func:`epsilon_slope`.
    tol : float
        How close to 0 or -1 counts as "at" that rate (default 0.25).
    """
    head = f"The log-log slope of the {what} against epsilon is {slope:+.2f}"
    if abs(slope + 1) <= tol:
        return f"{head}: close to -1, the 1/epsilon rate."
    if abs(slope) <= tol:
        return f"{head}: close to 0, nearly free of epsilon in this range."
    if slope < -1:
        return f"{head}: steeper than 1/epsilon."
    if slope > 0:
        return f"{head}: it grows with epsilon, which no privacy rate predicts (noise at this size)."
    return f"{head}: between free (0) and 1/epsilon (-1), flatter than the 1/epsilon rate in this range."


def ols_sample(n: int, s: float, theta: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """x = +-s with a fair sign; y = +-1 with mean theta * x. Returns (x (n, 1), y (n,))."""
    x = s * rng.choice([-1.0, 1.0], size=n)
    y = np.where(rng.random(n) < (1 + theta * x) / 2, 1.0, -1.0)
    return x[:, None], y


def ols_study(s: float, theta: float, epsilon: float, seeds: int, tmax: int, delta: float = 1e-6, *,
              tmin: int = 10) -> pd.DataFrame:
    """|theta_hat - theta*| of ``ldp-1d`` and ``ssp-local`` for T = 2^tmin .. 2^tmax and each seed.

    Returns
    -------
    DataFrame
        Columns estimator, T, seed, error (capped at 2).

    References
    ----------
    Source paper, `lem:1d-LDP`, `alg:LDP-simple-linear-regression`, `prop:OLS-fail-local-gen`.
    """
    rows = []
    oracles = {"ldp-1d (sign(x)y, |x|)": make_oracle("ldp-1d", epsilon=epsilon, delta=delta),
               "ssp-local (x^2, xy)": make_oracle("ssp-local", epsilon=epsilon, delta=delta)}
    for k in range(tmin, tmax + 1):
        n = 2 ** k
        for seed in range(seeds):
            data_rng, fit_rng = np.random.default_rng([seed, k]).spawn(2)
            x, y = ols_sample(n, s, theta, data_rng)
            for label, oracle in oracles.items():
                est = oracle.fit(x, y, rng=fit_rng.spawn(1)[0])
                err = min(abs(float(est.theta[0]) - theta), 2.0)
                rows.append(dict(estimator=label, T=n, seed=seed, error=err))
    return pd.DataFrame(rows)


def ols_conclusion(ratio: float, s: float) -> str:
    """What the measured error ratio (SSP / sign-based, at the largest T) shows, against the rates' 1/s.

    Parameters
    ----------
    ratio : float
        ssp-local's mean error over ldp-1d's.
    s : float
        The covariate magnitude |x| = s, so E|x| / E[x^2] = 1/s.

    Returns
    -------
    str
    """
    if ratio >= 1 / s:
        return (f"SSP's error is {ratio:.1f}x the sign-based estimator's, at least the 1/s = {1 / s:g} the rates "
                "predict: under local DP the information in x is E|x| (the L1 covariance), not E[x^2], and the "
                "channel smooth in x (perturbing x^2 and xy) cannot use it.")
    if ratio > 1:
        return (f"SSP's error is {ratio:.1f}x the sign-based estimator's: worse, but by less than the 1/s = {1 / s:g} "
                "the rates predict at this T.")
    return (f"SSP's error is {ratio:.1f}x the sign-based estimator's: the separation the rates predict "
            f"(1/s = {1 / s:g}) is not visible at this T.")


def information_matrices(x: np.ndarray, w: np.ndarray | None, gamma: float, lam: float) -> dict[str, np.ndarray]:
    """Sigma^{1/2}, U*^{-1} and W*^{-1} of the law of the rows x (weights w, or equal weights).

    References
    ----------
    Source paper, `def:FLDP`, `def:FJDP`, `lem:U-L1-covariance`.
    """
    sigma = infomatrix.second_moment(x, w)
    u = infomatrix.u_star(x, w, lam=lam).matrix
    wm = infomatrix.w_star(x, w, gamma=gamma, lam=lam).matrix
    return {"Sigma^1/2": infomatrix.psd_sqrt(sigma), "U*^-1": np.linalg.inv(u),
            f"W*^-1 (gamma={gamma:g})": np.linalg.inv(wm)}


def axis_ratio(m: np.ndarray) -> float:
    """Largest over smallest semi-axis of the image of the unit ball under a symmetric matrix."""
    ev = np.sort(np.abs(np.linalg.eigvalsh((m + m.T) / 2)))
    return float(ev[-1] / ev[0])


def information_conclusions(ratios: dict[str, dict[str, float]], family: str, condition: float) -> list[str]:
    """What the axis ratios show, one sentence per finding, each computed from the printed ratios.

    Parameters
    ----------
    ratios : dict
        Family title -> {"Sigma^1/2": ratio, "U*^-1": ratio, "W*^-1 ...": ratio}.
    family : str
        The title of the family whose Sigma has condition number ``condition`` (compared with U*^-1's ratio).
    condition : float
        That condition number.

    Returns
    -------
    list of str
    """
    lines = []
    for title, r in ratios.items():
        sig, u = r["Sigma^1/2"], r["U*^-1"]
        w = next(v for k, v in r.items() if k.startswith("W*^-1"))
        more = "more" if u > sig else "not more"
        between = "between the two" if min(sig, u) <= w <= max(sig, u) else "outside [Sigma^1/2, U*^-1]"
        lines.append(f"{title}: U*^-1 is {more} lopsided than Sigma^1/2 (axis ratio {u:.2f} against {sig:.2f}); "
                     f"W*^-1 ({w:.2f}) is {between}.")
    u = ratios[family]["U*^-1"]
    near = abs(np.log(u / condition)) < abs(np.log(u / np.sqrt(condition)))
    lines.append(f"{family}: U*^-1's axis ratio {u:.2f} is closer to the condition number {condition:g} than to its "
                 f"square root {np.sqrt(condition):.2f}." if near else
                 f"{family}: U*^-1's axis ratio {u:.2f} is closer to the square root {np.sqrt(condition):.2f} of the "
                 f"condition number {condition:g} than to the condition number itself.")
    return lines
