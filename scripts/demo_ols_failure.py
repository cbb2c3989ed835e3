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

from privbandit.report import figures as plots  # noqa: E402

from demo_studies import ols_conclusion as conclusion  # noqa: E402
from demo_studies import ols_study as study  # noqa: E402


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
          f"E|x| / E x^2 = {1 / args.s:g} (up to constants);\nwhile SSP's noise swamps E x^2 its ridge estimate "
          f"stays near 0, so its error saturates near |theta*| = {abs(args.theta):g} and the ratio\nfollows that "
          "cap over the sign-based error rather than the rates.")
    print(f"What this run shows: {conclusion(ratio, args.s)}")
    print(f"(By the rates, matching the sign-based error takes SSP ~1/s^2 = {1 / args.s ** 2:g} times more users.)")
    print(f"Figure: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
