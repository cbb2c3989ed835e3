"""Teaching demo: why perturbing OLS fails under local privacy (the one-dimensional study).

Covariates x = +-s (a fair sign, s small) and labels y in {-1, 1} with mean theta* x. Then
E|x| = s but E[x^2] = s^2 << s. Two epsilon-LDP estimators see the same users:

- ``ldp-1d`` (`alg:LDP-simple-linear-regression`): each user privatizes (sign(x) y, |x|); its error is
  ~ 1 / (E|x| epsilon sqrt(T)) (`lem:1d-LDP`);
- ``ssp-local`` (`def:SSP`, local): each user privatizes (x^2, x y), a channel smooth in x; its error is
  ~ 1 / (E[x^2] epsilon sqrt(T)), 1/s times worse. `prop:OLS-fail-local-gen` proves this as a lower bound
  (for the worst theta*) on every LDP mechanism smooth in x, when d = 1 and E x = 0, as here.

The script fits both for T = 2^10 .. 2^tmax over several seeds, writes ``ols_failure.png`` (error
against T, log-log, with the two predicted rates) and prints the table, the error ratio and a conclusion
computed from that ratio (:func:`conclusion`).

Run: ``python scripts/demo_ols_failure.py [--s 0.2] [--epsilon 1] [--seeds 10] [--tmax 20] [--out DIR]``

References
----------
Source paper, `ssec:OLS`, `lem:1d-LDP`, `alg:LDP-simple-linear-regression`, `prop:OLS-fail-local-gen`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from privbandit import plots  # noqa: E402
from privbandit.oracles import make_oracle  # noqa: E402


def sample(n: int, s: float, theta: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """x = +-s with a fair sign; y = +-1 with mean theta * x."""
    x = s * rng.choice([-1.0, 1.0], size=n)
    y = np.where(rng.random(n) < (1 + theta * x) / 2, 1.0, -1.0)
    return x[:, None], y


def study(s: float, theta: float, epsilon: float, seeds: int, tmax: int, delta: float = 1e-6) -> pd.DataFrame:
    """|theta_hat - theta*| of both estimators for T = 2^10 .. 2^tmax and each seed."""
    rows = []
    oracles = {"ldp-1d (sign(x)y, |x|)": make_oracle("ldp-1d", epsilon=epsilon, delta=delta),
               "ssp-local (x^2, xy)": make_oracle("ssp-local", epsilon=epsilon, delta=delta)}
    for k in range(10, tmax + 1):
        n = 2 ** k
        for seed in range(seeds):
            data_rng, fit_rng = np.random.default_rng([seed, k]).spawn(2)
            x, y = sample(n, s, theta, data_rng)
            for label, oracle in oracles.items():
                est = oracle.fit(x, y, rng=fit_rng.spawn(1)[0])
                err = min(abs(float(est.theta[0]) - theta), 2.0)
                rows.append(dict(estimator=label, T=n, seed=seed, error=err))
    return pd.DataFrame(rows)


def conclusion(ratio: float, s: float) -> str:
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--s", type=float, default=0.2, help="covariate magnitude |x| = s (default 0.2)")
    p.add_argument("--theta", type=float, default=0.5, help="theta* (default 0.5)")
    p.add_argument("--epsilon", type=float, default=1.0, help="LDP epsilon (default 1)")
    p.add_argument("--seeds", type=int, default=10, help="seeds per T (default 10)")
    p.add_argument("--tmax", type=int, default=20, help="largest T = 2^tmax (default 20)")
    p.add_argument("--out", type=Path, default=Path("results/demos"), help="output folder")
    args = p.parse_args(argv)
    if not 0 < args.s <= 1 or args.epsilon <= 0 or args.seeds < 1 or args.tmax < 10 or abs(args.theta) > 1:
        p.error("need 0 < s <= 1, |theta| <= 1, epsilon > 0, seeds >= 1, tmax >= 10")

    df = study(args.s, args.theta, args.epsilon, args.seeds, args.tmax)
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    plots.metric_vs_T(df, "error", hue="estimator", ax=ax,
                      title=f"1-D LDP regression, |x| = {args.s:g}, epsilon = {args.epsilon:g}")
    t = np.array(sorted(df["T"].unique()), dtype=float)
    ax.plot(t, 1 / (args.s * args.epsilon * np.sqrt(t)), "k:", label="1/(E|x| eps sqrt T)")
    ax.plot(t, 1 / (args.s ** 2 * args.epsilon * np.sqrt(t)), "k--", label="1/(E x^2 eps sqrt T)")
    ax.set_ylabel("|theta_hat - theta*|")
    ax.legend(fontsize="small")
    fig.tight_layout()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "ols_failure.png"
    fig.savefig(path, dpi=90)

    table = df.groupby(["T", "estimator"])["error"].mean().unstack()
    print(f"Mean |theta_hat - theta*| over {args.seeds} seeds (E|x| = {args.s:g}, E x^2 = {args.s ** 2:g}, "
          f"epsilon = {args.epsilon:g}):")
    print(table.to_string(float_format=lambda v: f"{v:.4f}"))
    last = table.iloc[-1]
    ratio = last.iloc[1] / last.iloc[0] if last.iloc[0] > 0 else float("inf")
    print(f"\nAt T = {table.index[-1]}: SSP's error / the sign-based estimator's = {ratio:.1f}. The rates predict "
          f"E|x| / E x^2 = {1 / args.s:g} (up to constants);\nwhile SSP's noise swamps E x^2 its ridge estimate stays "
          f"near 0, so its error saturates near |theta*| = {abs(args.theta):g} and the ratio\nfollows that cap over the "
          "sign-based error rather than the rates.")
    print(f"What this run shows: {conclusion(ratio, args.s)}")
    print(f"(By the rates, matching the sign-based error takes SSP ~1/s^2 = {1 / args.s ** 2:g} times more users.)")
    print(f"Figure: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
