"""The regret rates the paper states (`tab:comp`) and the exponents measured runs show.

- :class:`PaperRate`, :data:`PAPER_RATES`: each agent's `tab:comp` row, its exponent in T and in 1/epsilon;
- :func:`fit_exponent`: the log-log slope of a mean curve over seeds, with a percentile-bootstrap interval.

Shared by ``scripts/bench_rates.py`` (exponents in T and 1/epsilon), the price-of-privacy demo
(``scripts/demo_price_of_privacy.py``) and its notebook (``docs/notebooks/price_of_privacy.ipynb``), so all
put a measured slope beside the same paper row. Benchmark code, not the library's: it is not part of the
installed package.

References
----------
Source paper, `tab:comp`, `thm:regret-upper-JDP`, `thm:regret-upper-LDP`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PAPER_RATES", "PaperRate", "fit_exponent"]


@dataclass(frozen=True)
class PaperRate:
    """A `tab:comp` row: the regret bound and its exponents in T and in 1/epsilon.

    Attributes
    ----------
    source : str
        The theorem or paper the row cites.
    bound : str
        The regret bound, as the table prints it (alpha written eps).
    t_exponent : float
        Its exponent in T.
    eps_exponent : str
        Its exponent in 1/epsilon as text ("1", "0..1 (additive)", "-" without privacy).
    eps_range : (float, float) or None
        The same as numbers: the exponent in 1/epsilon lies in [low, high]. An additive term c/eps beside a
        term free of epsilon gives (0, 1): its local slope goes from 1 (privacy term dominates) to 0.
        None without privacy.
    """

    source: str
    bound: str
    t_exponent: float
    eps_exponent: str
    eps_range: tuple[float, float] | None


JDP_OURS = PaperRate("thm:regret-upper-JDP", "d^2 sqrt(T) + d^{5/2}/eps", 0.5, "0..1 (additive)", (0.0, 1.0))
LDP_OURS = PaperRate("thm:regret-upper-LDP", "sqrt(d^5 T)/eps", 0.5, "1", (1.0, 1.0))
NON_PRIVATE = PaperRate("LinUCB / elimination", "d sqrt(T)", 0.5, "-", None)
PAPER_RATES: dict[str, PaperRate] = {
    "elim-jdp": JDP_OURS, "elim-jdp-ucb": JDP_OURS, "elim-jdp-pooled": JDP_OURS,
    "linucb-jdp": PaperRate("Shariff & Sheffet 2018", "d sqrt(T) + d^{3/4} sqrt(T/eps)", 0.5, "0..0.5 (additive)",
                            (0.0, 0.5)),
    "elim-ldp": LDP_OURS, "elim-ldp-greedy": LDP_OURS, "elim-ldp-pooled": LDP_OURS,
    "ldp-ucb": PaperRate("Zheng et al. 2020", "(dT)^{3/4}/eps", 0.75, "1", (1.0, 1.0)),
    "linucb": NON_PRIVATE, "elim-ucb": NON_PRIVATE,
}
"""`tab:comp`'s rate for each agent (the practical and pooled variants share their algorithm's row)."""


def fit_exponent(x: np.ndarray, curves: np.ndarray, *, n_boot: int = 2000, rng: int = 0) -> tuple[float, float, float]:
    """The slope of log(mean over seeds of ``curves``) against log(x), and its 95% bootstrap interval.

    Parameters
    ----------
    x : ndarray (m,)
        Positive abscissae (horizons, epsilons or 1/epsilon), at least two distinct.
    curves : ndarray (n_seeds, m)
        Positive values (regret) per seed and abscissa.
    n_boot : int
        Bootstrap resamples of the seeds (0: no interval, NaNs).
    rng : int
        Seed of the resampling.

    Returns
    -------
    (slope, low, high)
        The fitted exponent and the 2.5% / 97.5% percentiles of the refitted slopes.

    References
    ----------
    Source paper, `tab:comp` (the rates whose exponents the slope estimates).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(curves, dtype=float)
    if y.ndim != 2 or y.shape[1] != x.shape[0] or y.shape[0] < 1:
        raise ValueError(f"curves must have shape (n_seeds, {x.shape[0]}), got {y.shape}")
    if np.unique(x).size < 2 or np.any(x <= 0):
        raise ValueError("x needs at least two distinct positive values")
    if np.any(~np.isfinite(y)) or np.any(y <= 0):
        raise ValueError("curves must be finite and > 0 (a log-log fit)")
    lx = np.log(x)
    design = np.column_stack([lx, np.ones_like(lx)])
    slope = float(np.linalg.lstsq(design, np.log(y.mean(axis=0)), rcond=None)[0][0])
    if n_boot < 1:
        return slope, float("nan"), float("nan")
    gen = np.random.default_rng(rng)
    idx = gen.integers(y.shape[0], size=(n_boot, y.shape[0]))
    means = np.log(y[idx].mean(axis=1))                                 # (n_boot, m)
    slopes = np.linalg.lstsq(design, means.T, rcond=None)[0][0]
    low, high = np.percentile(slopes, [2.5, 97.5])
    return slope, float(low), float(high)
