"""The measurements behind the teaching demos, and the conclusions computed from them.

Shared by ``scripts/demo_*.py`` (``from demo_studies import ...``, this folder being the running script's) and
the notebook ``docs/notebooks/price_of_privacy.ipynb`` (``from scripts.demo_studies import ...``, with the
repository root on the path): each study returns a tidy table, and each ``*_conclusion(s)`` function turns
measured numbers into sentences, so a short run says what it measured, never what a long run would. Teaching
code, not the library's: it is not part of the installed package.

- :func:`regret_by_seed`, :func:`ratio_of_means`, :func:`price_conclusions`, :func:`rate_conclusion`: the price
  of privacy, joint DP against local DP, as epsilon varies (regret ratios with intervals over seeds, and the
  log-log slope against epsilon beside the one `tab:comp`'s bound gives);
- :func:`regression_errors`, :func:`epsilon_slope`, :func:`slope_conclusion`: the IW-regression oracles'
  errors and the log-log slope of a measure against epsilon (0 = free of epsilon, -1 = ~1/epsilon);
- :func:`ols_sample`, :func:`ols_study`, :func:`ols_conclusion`: why perturbing OLS fails under local DP (d = 1);
- :func:`information_matrices`, :func:`axis_ratio`, :func:`information_conclusions`: U* and W* next to Sigma.

References
----------
Source paper, `tab:comp`, `eq:PoP`, `ssec:OLS`, `lem:1d-LDP`, `prop:OLS-fail-local-gen`, `def:FLDP`,
`def:FJDP`, `lem:U-L1-covariance`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from privbandit import infomatrix
from privbandit.envs import make_family
from privbandit.linalg import psd_sqrt
from privbandit.oracles import make_oracle

if TYPE_CHECKING:   # only the annotation: the notebook imports this module as scripts.demo_studies
    from paper_rates import PaperRate

__all__ = ["axis_ratio", "epsilon_slope", "first_epsilon_from_which", "information_conclusions",
           "information_matrices", "ols_conclusion", "ols_sample", "ols_study", "price_conclusions", "rate_conclusion",
           "ratio_of_means", "regression_errors", "regret_by_seed", "slope_conclusion"]


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


def regret_by_seed(final: pd.DataFrame, agent: str, eps: Sequence[float] | None = None) -> np.ndarray:
    """Final regret of one agent per seed (rows, by seed) and epsilon (columns, in the order of ``eps``).

    Parameters
    ----------
    final : DataFrame
        The runs' last rows (:func:`privbandit.report.tables.final_rows`): agent, epsilon, seed, cum_regret.
    agent : str
        The agent's label.
    eps : sequence of float, optional
        The epsilons of a private agent; None for a non-private one (one column, epsilon inf).

    Returns
    -------
    ndarray (n_seeds, len(eps)) or (n_seeds, 1)

    Raises
    ------
    ValueError
        If a requested (agent, epsilon) has no run, or the epsilons have different seeds.

    References
    ----------
    Source paper, `tab:comp` (the regrets whose dependence on epsilon the demo measures).
    """
    rows = final[final["agent"] == agent]
    wanted = [np.inf] if eps is None else [float(e) for e in eps]
    wide = rows.assign(epsilon=rows["epsilon"].astype(float)).pivot_table(
        index="seed", columns="epsilon", values="cum_regret", aggfunc="mean")
    missing = [e for e in wanted if e not in wide.columns]
    if missing:
        raise ValueError(f"no run of {agent!r} at epsilon {missing}")
    table = wide[wanted]
    if table.isna().any().any():
        raise ValueError(f"{agent!r} was not run on the same seeds at every epsilon")
    return table.to_numpy(dtype=float)


def ratio_of_means(num: np.ndarray, den: np.ndarray, *, n_boot: int = 2000,
                   rng: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """mean(num) / mean(den) per column, with a 95% percentile-bootstrap interval over paired seeds.

    Parameters
    ----------
    num : ndarray (n_seeds, m)
        The private agent's regret per seed and epsilon.
    den : ndarray (n_seeds, m) or (n_seeds, 1)
        The reference's regret on the same seeds (one column broadcasts over the epsilons).
    n_boot : int
        Resamples of the seeds (rows are resampled together, so a seed's pair stays paired); 0: NaN interval.
    rng : int
        Seed of the resampling.

    Returns
    -------
    (ratio, low, high), each ndarray (m,)

    References
    ----------
    Source paper, `eq:PoP` (the price of privacy as a ratio to the non-private rate).
    """
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if num.ndim != 2 or den.ndim != 2 or den.shape[0] != num.shape[0] or den.shape[1] not in (1, num.shape[1]):
        raise ValueError(f"num (n_seeds, m) and den (n_seeds, m or 1) must pair seeds, got {num.shape} and "
                         f"{den.shape}")
    if np.any(den.mean(axis=0) <= 0):
        raise ValueError("the reference's mean regret must be > 0")
    ratio = num.mean(axis=0) / den.mean(axis=0)
    if n_boot < 1 or num.shape[0] < 2:
        nan = np.full_like(ratio, np.nan)
        return ratio, nan, nan
    idx = np.random.default_rng(rng).integers(num.shape[0], size=(n_boot, num.shape[0]))
    boot = num[idx].mean(axis=1) / np.maximum(den[idx].mean(axis=1), np.finfo(float).tiny)   # (n_boot, m)
    low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    return ratio, low, high


def price_conclusions(eps: Sequence[float], jdp_ratio: Sequence[float], jdp_low: Sequence[float],
                      jdp_high: Sequence[float], jdp_regret: Sequence[float], ldp_regret: Sequence[float],
                      uniform: float, *, jdp: str = "elim-jdp-pooled", ldp: str = "elim-ldp-pooled",
                      reference: str = "elim-ucb", cheap: float = 1.5) -> list[str]:
    """What the measured price-of-privacy table shows, one sentence per finding, each computed from the numbers.

    Parameters
    ----------
    eps : sequence of float
        The epsilons, in the order of the other sequences.
    jdp_ratio, jdp_low, jdp_high : sequence of float
        The joint-DP agent's regret over the non-private reference's, per epsilon, with its 95% interval
        (:func:`ratio_of_means`; NaN bounds with one seed). A gap whose interval stays above 1 while the regret
        changes by at most 10% between the two largest epsilons is named as one more epsilon does not remove.
    jdp_regret, ldp_regret : sequence of float
        Mean regret of the joint-DP and the local-DP agent, per epsilon.
    uniform : float
        Mean regret of uniform play.
    jdp, ldp, reference : str
        The agents' names, as the sentences print them.
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
    ratio, low, high = (np.asarray(v, dtype=float)[order] for v in (jdp_ratio, jdp_low, jdp_high))
    jreg, lreg = np.asarray(jdp_regret, dtype=float)[order], np.asarray(ldp_regret, dtype=float)[order]

    def at(i: int) -> str:
        ci = "" if np.isnan(low[i]) else f" [95% {low[i]:.2f}, {high[i]:.2f}]"
        return f"{ratio[i]:.2f}x{ci} at epsilon = {e[i]:g}"

    lines = [f"Joint DP: {jdp}'s regret over the non-private {reference}'s is {at(len(e) - 1)} and {at(0)}."]
    start = first_epsilon_from_which(e, ratio, cheap)
    if start is None:
        i = int(np.argmin(ratio))
        lines.append(f"Joint DP is not cheap (ratio <= {cheap:g}) anywhere in this range: its smallest ratio is "
                     f"{ratio[i]:.2f}, at epsilon = {e[i]:g}.")
    else:
        lines.append(f"Joint DP is cheap (ratio <= {cheap:g}) from epsilon = {start:g} on.")
    change = jreg[-1] / jreg[-2] - 1
    if abs(change) <= 0.1 and not low[-1] <= 1:
        lines.append(f"Between epsilon = {e[-2]:g} and {e[-1]:g} {jdp}'s regret changes by {100 * change:+.0f}% while "
                     f"it stays {ratio[-1]:.2f}x {reference}'s: that remaining gap does not shrink with epsilon, so "
                     "more epsilon does not remove it (the agent's cost, not the privacy noise's).")
    rel = lreg / jreg
    lines.append(f"Local DP costs more than joint DP at every epsilon: {ldp}'s regret is {rel.min():.1f}-"
                 f"{rel.max():.1f}x {jdp}'s." if np.all(rel > 1) else
                 f"Local DP does not cost more than joint DP at every epsilon: {ldp}'s regret is "
                 f"{rel.min():.2f}-{rel.max():.2f}x {jdp}'s.")
    share = lreg / uniform
    learned = first_epsilon_from_which(e, share, 0.5)
    if learned is None:
        lines.append(f"{ldp} is not below half of uniform play's regret at the largest epsilon "
                     f"({share[-1]:.2f} of it at epsilon = {e[-1]:g}): it has barely left uniform play.")
    else:
        lines.append(f"{ldp} is below half of uniform play's regret from epsilon = {learned:g} on "
                     f"({share[0]:.2f} of it at epsilon = {e[0]:g}, {share[-1]:.3f} at {e[-1]:g}).")
    return lines


def rate_conclusion(agent: str, slope: tuple[float, float, float], rate: PaperRate, *, where: str = "",
                    ceiling: tuple[float, float] | None = None) -> str:
    """A measured log-log slope of regret against epsilon beside the slope the paper's bound gives.

    The paper's bound has exponent in 1/epsilon in ``rate.eps_range`` = [a, b], so a slope against epsilon
    in [-b, -a]. The sentence says whether the measured 95% interval meets that range, or lies flatter or
    steeper than it; with one seed (NaN interval) the point slope is compared.

    Parameters
    ----------
    agent : str
        The agent whose regret was fitted.
    slope : (slope, low, high)
        From ``paper_rates.fit_exponent`` with x = epsilon.
    rate : PaperRate
        The agent's `tab:comp` row (a private one: ``eps_range`` not None).
    where : str
        Which epsilons the fit used, if not all (printed after the slope).
    ceiling : (epsilon, share), optional
        The smallest fitted epsilon and the agent's regret there as a share of uniform play's; a share of 0.5 or
        more is named as a ceiling that flattens the slope.

    Returns
    -------
    str

    References
    ----------
    Source paper, `tab:comp`.
    """
    if rate.eps_range is None:
        raise ValueError(f"{agent}: the paper's rate {rate.bound} has no epsilon")
    s, lo, hi = slope
    a, b = rate.eps_range
    paper_lo, paper_hi = -b + 0.0, -a + 0.0
    if np.isnan(lo):
        lo = hi = s
    ci = "" if lo == hi else f" [95% {lo:+.2f}, {hi:+.2f}]"
    paper = (f"{paper_lo:+g}" if a == b else f"between {paper_lo:+g} (the 1/eps term dominates) and {paper_hi:+g} "
             "(it is negligible)")
    head = (f"{agent}: regret against epsilon{where} has log-log slope {s:+.2f}{ci}; the paper's bound {rate.bound} "
            f"(`{rate.source}`) gives {paper}")
    if hi < paper_lo:
        return f"{head}. Measured: steeper than that."
    if lo > paper_hi:
        why = ""
        if ceiling is not None and ceiling[1] >= 0.5:
            why = (f": at epsilon = {ceiling[0]:g} its regret is {ceiling[1]:.2f} of uniform play's, a ceiling that "
                   "flattens the slope")
        return f"{head}. Measured: flatter than that{why}."
    return f"{head}. Measured: within that range."


def epsilon_slope(eps: Sequence[float], values: Sequence[float]) -> float:
    """Least-squares slope of log(values) against log(epsilon): 0 when free of epsilon, -1 for ~1/epsilon."""
    e, v = np.asarray(eps, dtype=float), np.asarray(values, dtype=float)
    if e.size < 2 or e.shape != v.shape or np.unique(e).size < 2 or np.any(e <= 0) or np.any(v <= 0):
        raise ValueError("need at least two distinct epsilons > 0 and as many values > 0")
    return float(np.polyfit(np.log(e), np.log(v), 1)[0])


def slope_conclusion(what: str, slope: float, *, low: float = float("nan"), high: float = float("nan"),
                     tol: float = 0.25) -> str:
    """One sentence placing a measured log-log slope against epsilon between free (0) and ~1/epsilon (-1).

    Parameters
    ----------
    what : str
        What the slope is of, e.g. "local-DP regression error".
    slope : float
        From :func:`epsilon_slope` or ``paper_rates.fit_exponent``.
    low, high : float
        Its 95% interval (NaN: none, the point slope is classified).
    tol : float
        Without an interval: how close to 0 or -1 counts as "at" that rate (default 0.25).
    """
    ci = "" if np.isnan(low) else f" [95% {low:+.2f}, {high:+.2f}]"
    head = f"The log-log slope of the {what} against epsilon is {slope:+.2f}{ci}"
    if not np.isnan(low):
        if low <= -1 <= high:
            return f"{head}: its interval contains -1 (~1/epsilon)."
        if low <= 0 <= high:
            return f"{head}: its interval contains 0 (free of epsilon in this range)."
        if high < -1:
            return f"{head}: steeper than 1/epsilon."
        if low > 0:
            return f"{head}: it grows with epsilon, which no privacy rate predicts."
        return f"{head}: between free (0) and ~1/epsilon (-1), both outside its interval."
    if abs(slope + 1) <= tol:
        return f"{head}: close to -1, ~1/epsilon."
    if abs(slope) <= tol:
        return f"{head}: close to 0, nearly free of epsilon in this range."
    if slope < -1:
        return f"{head}: steeper than 1/epsilon."
    if slope > 0:
        return f"{head}: it grows with epsilon, which no privacy rate predicts (noise at this size)."
    return f"{head}: between free (0) and ~1/epsilon (-1), flatter than 1/epsilon in this range."


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
    return {"Sigma^1/2": psd_sqrt(sigma), "U*^-1": np.linalg.inv(u),
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
