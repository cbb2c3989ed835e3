"""The one-dimensional LDP regression study of `ssec:OLS`: L1 covariance vs second moment.

Covariates on [-1, 1] with E|x| held fixed while E[x^2] shrinks: x = +-1 with probability q and x = +-s
otherwise, with q and s chosen so that E|x| = q + (1 - q) s = m (fixed) and E[x^2] = q + (1 - q) s^2
ranges from m down to about m^2 (q -> 0, s -> m). Labels y = +-1 with mean theta* x. Two epsilon-LDP
estimators see the same users:

- ``ldp-1d`` (`alg:LDP-simple-linear-regression`), whose error * E|x| * epsilon * sqrt(T) should stay
  roughly constant across the distributions (`lem:1d-LDP`);
- ``ssp-local`` (local sufficient-statistics perturbation of (x^2, x y)), whose error grows like
  1 / E[x^2] (`prop:OLS-fail-local-gen`: a lower bound, for the worst theta*, on LDP mechanisms smooth in
  x when d = 1 and E x = 0, as here with fair signs): both the oracle as used by the agents (the central SSP's
  noise-shifted ridge, which at these T mostly shrinks to 0, so its error saturates near |theta*|) and
  ``ssp-local-plain``, the same channel with the plain solve clip_1(b_hat / G_hat).

Writes ``ols_1d.csv`` (one row per distribution x T x epsilon x seed x estimator) and ``ols_1d.png``
(error against E[x^2], log-log, and the normalised error of ldp-1d) into ``--out``, and prints, for the
largest T and each epsilon, the ratio SSP error / ldp-1d error at the smallest E[x^2] (target >= 3 at
T = 2^16, epsilon = 1).

Full grid: ``python scripts/bench_ols_1d.py --tlog 12 14 16 18 --epsilons 0.5 1 2 --seeds 50``.
Reduced (what the issue's note reports): ``--tlog 14 16 --epsilons 1 --seeds 20``.

References
----------
Source paper, `ssec:OLS`, `lem:1d-LDP`, `alg:LDP-simple-linear-regression`, `prop:OLS-fail-local-gen`, `def:SSP`.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from privbandit.oracles import make_oracle  # noqa: E402

ESTIMATORS = {"ldp-1d": {}, "ssp-local": {}, "ssp-local-plain": {"shift": False}}


def design(mean_abs: float, second: float) -> tuple[float, float]:
    """(q, s) with q + (1-q) s = mean_abs and q + (1-q) s^2 = second (mean_abs^2 < second <= mean_abs)."""
    if not (mean_abs ** 2 < second <= mean_abs <= 1):
        raise ValueError(f"need mean_abs^2 < second <= mean_abs <= 1, got mean_abs={mean_abs}, second={second}")
    if math.isclose(second, mean_abs):  # all mass on {0, +-1}
        return mean_abs, 0.0
    # q = (m - s)/(1 - s) and q + (1-q) s^2 = e  <=>  m - s + (1 - m) s^2 = e (1 - s) ... solve for s:
    # (1 - m) s^2 + (e - 1) s + (m - e) = 0, root in (0, m).
    a, b, c = 1.0 - mean_abs, second - 1.0, mean_abs - second
    disc = math.sqrt(b * b - 4 * a * c)
    s = (-b - disc) / (2 * a)
    q = (mean_abs - s) / (1 - s)
    return q, s


def sample(n: int, q: float, s: float, theta: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """x = +-1 w.p. q, +-s otherwise (fair signs); y = +-1 with mean theta x."""
    mag = np.where(rng.random(n) < q, 1.0, s)
    x = mag * rng.choice([-1.0, 1.0], size=n)
    y = np.where(rng.random(n) < (1 + theta * x) / 2, 1.0, -1.0)
    return x[:, None], y


def run(mean_abs: float, seconds: list[float], tlogs: list[int], epsilons: list[float], seeds: int,
        theta: float, delta: float, chunk: int = 1 << 16) -> pd.DataFrame:
    rows = []
    for e2 in seconds:
        q, s = design(mean_abs, e2)
        for k in tlogs:
            n = 2 ** k
            for eps in epsilons:
                oracles = {name: make_oracle(name.removesuffix("-plain"), epsilon=eps, delta=delta, **kw)
                           for name, kw in ESTIMATORS.items()}
                for seed in range(seeds):
                    data_rng, fit_rng = np.random.default_rng([seed, k, int(e2 * 1e9), int(eps * 1e6)]).spawn(2)
                    x, y = sample(n, q, s, theta, data_rng)
                    for name, oracle in oracles.items():
                        fit = oracle.start(n, dim=1, rng=fit_rng.spawn(1)[0])
                        for i in range(0, n, chunk):
                            fit.add(x[i:i + chunk], y[i:i + chunk])
                        err = min(abs(float(fit.result().theta[0]) - theta), 2.0)
                        rows.append(dict(estimator=name, mean_abs=mean_abs, second_moment=e2, q=q, s=s, T=n,
                                         epsilon=eps, seed=seed, error=err,
                                         normalised=err * mean_abs * eps * math.sqrt(n)))
    return pd.DataFrame(rows)


def figure(df: pd.DataFrame, path: Path) -> None:
    tmax = df["T"].max()
    sub = df[df["T"] == tmax]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    sns.lineplot(sub, x="second_moment", y="error", hue="estimator", style="epsilon", marker="o", ax=axes[0],
                 errorbar=("ci", 95))
    axes[0].set(xscale="log", yscale="log", xlabel="E[x^2] (E|x| fixed)", ylabel="|theta_hat - theta*|",
                title=f"T = 2^{int(math.log2(tmax))}: SSP error rises as E[x^2] falls")
    ldp = df[df["estimator"] == "ldp-1d"]
    sns.lineplot(ldp, x="second_moment", y="normalised", hue="T", style="epsilon", marker="o", ax=axes[1],
                 palette="viridis", errorbar=("ci", 95))
    axes[1].set(xscale="log", xlabel="E[x^2] (E|x| fixed)", ylabel="error * E|x| * eps * sqrt(T)",
                title="ldp-1d: roughly constant (lem:1d-LDP)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mean-abs", type=float, default=0.3, help="E|x|, held fixed")
    p.add_argument("--points", type=int, default=5, help="number of E[x^2] values, log-spaced in (E|x|^2, E|x|]")
    p.add_argument("--tlog", type=int, nargs="+", default=[12, 14, 16], help="log2 of the sample sizes T")
    p.add_argument("--epsilons", type=float, nargs="+", default=[1.0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--theta", type=float, default=0.5)
    p.add_argument("--delta", type=float, default=1e-6)
    p.add_argument("--out", type=Path, default=Path("bench-out/ols_1d"))
    a = p.parse_args(argv)
    m = a.mean_abs
    seconds = list(np.geomspace(m, 1.05 * m * m, a.points))
    df = run(m, seconds, a.tlog, a.epsilons, a.seeds, a.theta, a.delta)
    a.out.mkdir(parents=True, exist_ok=True)
    df.to_csv(a.out / "ols_1d.csv", index=False)
    figure(df, a.out / "ols_1d.png")
    table = df.groupby(["estimator", "epsilon", "T", "second_moment"])["error"].mean().unstack("estimator")
    table["ratio ssp/ldp-1d"] = table["ssp-local"] / table["ldp-1d"]
    table["ratio plain/ldp-1d"] = table["ssp-local-plain"] / table["ldp-1d"]
    norm = df[df.estimator == "ldp-1d"].groupby(["epsilon", "T", "second_moment"])["normalised"].mean()
    table["ldp-1d error*E|x|*eps*sqrt(T)"] = norm
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.float_format", "{:.4g}".format):
        print(table)
    tmax, smallest = df["T"].max(), min(seconds)
    for eps in a.epsilons:
        row = table.loc[(eps, tmax, smallest)]
        print(f"T=2^{int(math.log2(tmax))} epsilon={eps:g} smallest E[x^2]={smallest:.4g}: "
              f"SSP/ldp-1d error ratio = {row['ratio ssp/ldp-1d']:.2f}, plain SSP/ldp-1d = "
              f"{row['ratio plain/ldp-1d']:.2f} (target >= 3)")
    print(f"wrote {a.out / 'ols_1d.csv'} and {a.out / 'ols_1d.png'}")
    return df


if __name__ == "__main__":
    main()
