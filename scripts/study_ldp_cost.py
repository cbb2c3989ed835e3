"""Where ``elim-ldp-pooled``'s regret comes from: a measured decomposition under local DP (issue 47, item 1).

Thin over the public API: :func:`privbandit.agents.make_agent`, :func:`privbandit.sim.run_many` and
:func:`~privbandit.sim.run` on ``gym.make("PrivLinCB-v0", family=..., dim=5, n_arms=5, horizon=T)``, the agents'
released estimates (``agent.estimates``, each with its :class:`~privbandit.oracles.iw_jdp.IWRelease`) and the
env's theta*. Nothing here changes how an agent runs; every diagnostic reads released values and checks them
against the env's truth on fresh contexts drawn with their own generator.

Tables (each printed as markdown; every row also goes to ``--out``/TABLE.csv):

- ``ladder``: final regret, mean +- standard error over seeds, of a ladder from non-private to private
  (LinUCB practical; elim-ldp-pooled at epsilon 1e6, 10, 3, 1; the play rules greedy and spanner and the first
  epoch 256 / 4096 at epsilon 1; uniform), and each step's ratio;
- ``epochs``: per epoch of elim-ldp-pooled (epsilon 1): its share of the run's regret, its regret per round
  over uniform's, and the randomized statistics' noise against their signal (section "noise" of the page);
- ``coverage``: the last three releases' intervals against theta* (coverage, q95 of |error| / width, median
  width, median error, median gap between the best and second-best arm);
- ``play``: on each of the same releases, the per-round regret of greedy, UCB (upper bound) and uniform play on
  fresh contexts, no elimination;
- ``clipping``: the feature norms against the clipping radius B and a public radius r < B: share of rows
  clipped, the bias of the clipped second moment, the randomizer's noise at r;
- ``rates``: tab:comp's LDP regret rates at d = 5, T = 2^20, epsilon 1 (constants unknown: set to 1), and the
  distribution-specific estimation lower bound (lem:LDP-lower-bound-any (a), c = 1) against the releases' error.

Usage::

    OPENBLAS_NUM_THREADS=1 nice -n 10 python scripts/study_ldp_cost.py --log2-horizons 14,16,18 --seeds 4
    python scripts/study_ldp_cost.py --from results/ldp_cost          # print the tables of a finished run

References
----------
Source paper, `tab:comp`, `thm:regret-upper-LDP`, `appdx:regret-upper-LDP`, `lem:LDP-lower-bound-any`,
`alg:LDP-linear-regression`; research note "jdp-cost" (the joint-DP study this one follows).
"""

from __future__ import annotations

import argparse
import math
import pathlib
import re
import sys

import gymnasium as gym
import numpy as np
import pandas as pd

import privbandit  # noqa: F401  (registers the envs)
from privbandit.agents import make_agent
from privbandit.privacy import analytic_noise_multiplier, l2_ball_channel_magnitude
from privbandit.privacy.randomizers import padded
from privbandit.sim import run, run_many

FAMILIES = ("heavy-tailed", "rare-direction")
DIM = ARMS = 5
DELTA = 1e-5
FRESH = 4096          # fresh rounds per diagnostic (all K arms each)
LADDER = (             # (row label, agent name, kwargs); epsilon None = non-private
    ("linucb (practical radius, non-private)", "linucb", dict(radius="practical", batch_size=64)),
    ("elim-ldp-pooled, eps 1e6", "elim-ldp-pooled", dict(epsilon=1e6)),
    ("elim-ldp-pooled, eps 10", "elim-ldp-pooled", dict(epsilon=10.0)),
    ("elim-ldp-pooled, eps 3", "elim-ldp-pooled", dict(epsilon=3.0)),
    ("elim-ldp-pooled, eps 1", "elim-ldp-pooled", dict(epsilon=1.0)),
    ("play greedy (elim-ldp-greedy-pooled), eps 1", "elim-ldp-greedy-pooled", dict(epsilon=1.0)),
    ("play spanner, eps 1", "elim-ldp-pooled", dict(epsilon=1.0, play="spanner")),
    ("first epoch 256, eps 1", "elim-ldp-pooled", dict(epsilon=1.0, first_epoch=256)),
    ("first epoch 4096, eps 1", "elim-ldp-pooled", dict(epsilon=1.0, first_epoch=4096)),
    ("uniform", "uniform", {}),
)
STEPS = (  # (label, numerator row, denominator row)
    ("eps 1e6 / linucb: batched elimination, IW-LDP pipeline, no noise", 1, 0),
    ("eps 10 / eps 1e6", 2, 1),
    ("eps 3 / eps 10", 3, 2),
    ("eps 1 / eps 3", 4, 3),
    ("greedy / ucb (eps 1)", 5, 4),
    ("spanner / ucb (eps 1)", 6, 4),
    ("first epoch 256 / 1024 (eps 1)", 7, 4),
    ("first epoch 4096 / 1024 (eps 1)", 8, 4),
    ("eps 1 / uniform", 4, 9),
    ("total: eps 1 / linucb", 4, 0),
)


def make_env(family: str, horizon: int):
    return gym.make("PrivLinCB-v0", family=family, dim=DIM, n_arms=ARMS, horizon=horizon)


def build(name: str, kwargs: dict):
    kw = dict(kwargs)
    if name not in ("linucb", "uniform"):
        kw.setdefault("delta", DELTA)
    return make_agent(name, **kw)


def fresh(env, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Features (n, K, d) of fresh rounds and their true means (n, K) (the env's own generator is untouched)."""
    e = env.unwrapped
    x = e.uniform_policy_features(FRESH, rng=10_000 + seed).reshape(FRESH, e.n_arms, e.dim)
    return x, x @ e.theta


def mean_se(v) -> str:
    v = np.asarray(v, float)
    se = v.std(ddof=1) / math.sqrt(v.size) if v.size > 1 else float("nan")
    return f"{v.mean():,.0f} ± {se:,.0f}" if abs(v.mean()) >= 100 else f"{v.mean():.3g} ± {se:.2g}"


def ladder_cells(families, horizons, seeds) -> pd.DataFrame:
    rows = []
    for family in families:
        for horizon in horizons:
            for seed in seeds:
                agents = [build(n, k) for _, n, k in LADDER]
                env = make_env(family, horizon)
                tables = run_many(agents, env, horizon, seed=seed, log="geometric")
                for (label, _, _), table in zip(LADDER, tables):
                    rows.append(dict(family=family, horizon=horizon, seed=seed, agent=label,
                                     regret=float(table.cum_regret.iloc[-1])))
                env.close()
                print(f"ladder {family} T={horizon} seed={seed}", file=sys.stderr, flush=True)
    return pd.DataFrame(rows)


def release_signal(u: np.ndarray, x: np.ndarray, theta: np.ndarray) -> tuple[float, float]:
    """||E psi|| and ||E Psi||_F of the IW statistics under U on features x (m, d) with E[y | phi] = <phi, theta*>."""
    ux = x @ u
    norms = np.linalg.norm(ux, axis=1)
    keep = norms > 0
    dirs = ux[keep] / norms[keep, None]
    big = np.einsum("mi,mj->ij", dirs, x[keep]) / x.shape[0]
    return float(np.linalg.norm(big @ theta)), float(np.linalg.norm(big))


def diagnostics(families, horizon, seeds):
    """Per-epoch, coverage and play tables of elim-ldp-pooled (epsilon 1), one run per family and seed."""
    epochs, cover, play = [], [], []
    for family in families:
        for seed in seeds:
            env = make_env(family, horizon)
            agent = build("elim-ldp-pooled", dict(epsilon=1.0))
            table = run(agent, env, horizon, seed=seed, log="all")
            e = env.unwrapped
            theta = e.theta
            x, mu = fresh(env, seed)
            flat = x.reshape(-1, e.dim)
            best = mu.max(axis=1)
            srt = np.sort(mu, axis=1)
            gap2 = srt[:, -1] - srt[:, -2]
            uniform_round = float((best - mu.mean(axis=1)).mean())
            total = float(table.regret.sum())
            per_epoch = table.groupby("epoch").regret.agg(["sum", "size"])
            cum_users = 0
            for j, est in enumerate(agent.estimates):
                rel = est.release
                n_rounds = int(per_epoch["size"].get(j, 0))
                cum_users += rel.n
                s_psi, s_big = release_signal(rel.weighting, flat, theta)
                pred_err = float(np.sqrt(np.mean((flat @ (est.theta - theta)) ** 2)))
                epochs.append(dict(
                    family=family, seed=seed, epoch=j, rounds=n_rounds, reg_users=rel.n,
                    share=float(per_epoch["sum"].get(j, 0.0)) / total,
                    regret_per_round_over_uniform=(float(per_epoch["sum"].get(j, 0.0)) / max(n_rounds, 1)
                                                   / uniform_round),
                    noise_psi=rel.noise_sd_psi * math.sqrt(e.dim), signal_psi=s_psi,
                    noise_Psi=rel.noise_sd_Psi * e.dim, signal_Psi=s_big,
                    Psi_err=(float(np.linalg.norm(rel.psi_mat - _mean_big(rel.weighting, flat))) if rel.n
                             else float("nan")),
                    pooled_users=cum_users, theta_err=float(np.linalg.norm(est.theta - theta)),
                    pred_rmse=pred_err, uniform_round=uniform_round))
                m = est.mean(x)
                w = est.width(x)
                err = np.abs(m - mu)
                greedy = np.take_along_axis(mu, m.argmax(axis=1)[:, None], 1)[:, 0]
                ucb = np.take_along_axis(mu, (m + w).argmax(axis=1)[:, None], 1)[:, 0]
                play.append(dict(family=family, seed=seed, epoch=j, greedy=float((best - greedy).mean()),
                                 ucb=float((best - ucb).mean()), uniform=uniform_round))
                if j >= len(agent.estimates) - 3:
                    opt = mu.argmax(axis=1)
                    w_opt = np.take_along_axis(w, opt[:, None], 1)[:, 0]
                    cover.append(dict(
                        family=family, seed=seed, epoch=j, coverage=float((err <= w).mean()),
                        coverage_opt=float(np.take_along_axis(err <= w, opt[:, None], 1).mean()),
                        q95=float(np.quantile(err / w, 0.95)), median_width=float(np.median(w)),
                        median_err=float(np.median(err)), median_gap=float(np.median(gap2)),
                        width_over_gap=float(np.median(w_opt[gap2 > 0] / gap2[gap2 > 0]))))
            env.close()
            print(f"diagnostics {family} seed={seed}", file=sys.stderr, flush=True)
    return pd.DataFrame(epochs), pd.DataFrame(cover), pd.DataFrame(play)


def _mean_big(u: np.ndarray, x: np.ndarray) -> np.ndarray:
    ux = x @ u
    norms = np.linalg.norm(ux, axis=1)
    keep = norms > 0
    return np.einsum("mi,mj->ij", ux[keep] / norms[keep, None], x[keep]) / x.shape[0]


def clipping_table(families, seed: int = 0) -> pd.DataFrame:
    """Feature norms against the radius: share clipped, second-moment bias, noise of the regression channel."""
    rows = []
    for family in families:
        env = make_env(family, 2 ** 14)
        env.reset(seed=seed)
        x = env.unwrapped.uniform_policy_features(FRESH * 4, rng=seed)
        norms = np.linalg.norm(x, axis=1)
        sigma = x.T @ x / x.shape[0]
        bound = env.unwrapped.bound
        for r in (bound, 0.5, 0.2, 0.1, 0.05):
            xc = x * np.minimum(1.0, r / np.maximum(norms, 1e-300))[:, None]
            sc = xc.T @ xc / x.shape[0]
            rows.append(dict(
                family=family, radius=r, median_norm=float(np.median(norms)), q99_norm=float(np.quantile(norms, 0.99)),
                clipped=float((norms > r).mean()),
                moment_bias=float(np.linalg.norm(sc - sigma, 2) / np.linalg.norm(sigma, 2)),
                mean_norm_bias=float(1 - np.minimum(norms, r).mean() / norms.mean()),
                # IW-Regression-LDP's one Gaussian on (psi, Psi / sqrt(r)): sd of Psi's entries
                # 2 z sqrt(r (1 + r)), of psi's 2 z sqrt(1 + r), relative to radius B
                noise_Psi_rel=math.sqrt(r * (1 + r)) / math.sqrt(bound * (1 + bound)),
                noise_psi_rel=math.sqrt(1 + r) / math.sqrt(1 + bound)))
        env.close()
    return pd.DataFrame(rows)


def rates_table(families, horizon: int = 2 ** 20, epsilon: float = 1.0) -> pd.DataFrame:
    d = DIM
    rows = [dict(rate="lower bound, Chen et al. 2024: sqrt(d^2 T) / alpha",
                 value=math.sqrt(d ** 2 * horizon) / epsilon),
            dict(rate="Chen et al. 2024: sqrt(d^3 T) / alpha", value=math.sqrt(d ** 3 * horizon) / epsilon),
            dict(rate="thm:regret-upper-LDP: sqrt(d^5 T) / alpha", value=math.sqrt(d ** 5 * horizon) / epsilon),
            dict(rate="Zheng et al. 2020: (d T)^(3/4) / alpha", value=(d * horizon) ** 0.75 / epsilon)]
    for family in families:
        env = make_env(family, 2 ** 14)
        env.reset(seed=0)
        x = env.unwrapped.uniform_policy_features(FRESH, rng=0)
        best = (x.reshape(FRESH, ARMS, DIM) @ env.unwrapped.theta)
        rows.append(dict(rate=f"uniform play, {family}: T E[max - mean] (seed 0)",
                         value=horizon * float((best.max(axis=1) - best.mean(axis=1)).mean())))
        env.close()
    return pd.DataFrame(rows)


def lower_bound_error(families, seeds, epochs: pd.DataFrame, epsilon: float = 1.0) -> pd.DataFrame:
    """lem:LDP-lower-bound-any (a) with A = Sigma, c = 1: RMSE >= sqrt(||Sigma^1/2 U*||_op^2 / (d eps^2 n))."""
    rows = []
    for family in families:
        for seed in seeds:
            env = make_env(family, 2 ** 14)
            env.reset(seed=seed)
            e = env.unwrapped
            sig_half = np.linalg.cholesky(e.feature_second_moment() + 1e-15 * np.eye(DIM))
            sub = epochs[(epochs.family == family) & (epochs.seed == seed)]
            for _, r in sub.iterrows():
                n = max(int(r.pooled_users), 1)
                lam = e.bound / (epsilon * math.sqrt(DIM * n))
                u = np.asarray(e.u_star(lam).matrix)
                lb = math.sqrt(np.linalg.norm(sig_half.T @ u, 2) ** 2 / (DIM * epsilon ** 2 * n))
                rows.append(dict(family=family, seed=seed, epoch=int(r.epoch), pooled_users=n, pred_rmse=r.pred_rmse,
                                 lower_bound_rmse=lb))
            env.close()
    return pd.DataFrame(rows)


def channels_table(epsilon: float = 1.0, delta: float = DELTA, dim: int = DIM, bound: float = 1.0) -> pd.DataFrame:
    """One user's privacy variance of the d-vector psi (||psi|| = |y| = 1 under Rademacher rewards), per channel.

    Today: one Gaussian on (psi, Psi / sqrt(B)) at L2 sensitivity 2 sqrt(1 + B) (IW-Regression-LDP); psi alone
    through a Gaussian at sensitivity 2; psi alone through the pure epsilon-LDP L2-ball channel (unbiased,
    output norm M, so variance <= M^2). Computed with the library's calibrations, no run.
    """
    z = analytic_noise_multiplier(epsilon, delta)
    joint = (2 * z * padded(math.sqrt(1 + bound))) ** 2 * dim
    alone = (2 * z * padded(1.0)) ** 2 * dim
    ball = l2_ball_channel_magnitude(epsilon, dim, 1.0) ** 2
    return pd.DataFrame([
        dict(channel="today: Gaussian on (psi, Psi/sqrt(B)), sensitivity 2 sqrt(1+B)", variance=joint, ratio=1.0),
        dict(channel="psi alone, Gaussian, sensitivity 2", variance=alone, ratio=alone / joint),
        dict(channel="psi alone, pure-epsilon L2-ball channel (Duchi et al.)", variance=ball, ratio=ball / joint),
        dict(channel="sampling variance of psi itself (y = ±1)", variance=1.0, ratio=1.0 / joint)])


def md(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(str(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(out)


TABLES = ("ladder", "epochs", "coverage", "play", "clipping", "rates", "lower_bound")
INTEGER_COLUMNS = ("seed", "horizon", "epoch", "rounds", "reg_users", "pooled_users")


def save(tables: dict[str, pd.DataFrame], out: pathlib.Path) -> None:
    """One CSV per table, and all of them in one long CSV (``ldp_cost.csv``, column ``table``)."""
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
    pd.concat([df.assign(table=name) for name, df in tables.items()], ignore_index=True).to_csv(
        out / "ldp_cost.csv", index=False)


def load(path: pathlib.Path) -> dict[str, pd.DataFrame]:
    """The tables of a results folder, or of one combined CSV written by :func:`save`."""
    if path.is_dir():
        return {name: pd.read_csv(path / f"{name}.csv") for name in TABLES}
    if not path.is_file():
        raise SystemExit(f"--from {path}: no such folder or CSV")
    whole = pd.read_csv(path)
    tables = {}
    for name in TABLES:
        df = whole[whole.table == name].drop(columns="table").dropna(axis=1, how="all").reset_index(drop=True)
        tables[name] = df.astype({c: int for c in INTEGER_COLUMNS if c in df.columns})
    return tables


def ladder_regrets(sub: pd.DataFrame, row: int, horizon: int) -> np.ndarray:
    """Final regrets, by seed, of the ladder's row ``row`` (an index into LADDER) at ``horizon`` (one family)."""
    sel = sub[(sub.horizon == horizon) & (sub.agent == LADDER[row][0])]
    return sel.sort_values("seed").regret.to_numpy()


def step_ratio(sub: pd.DataFrame, i: int, j: int, horizon: int) -> tuple[float, float, float]:
    """Ladder row i over row j at ``horizon``: the ratio of means, and the min and max of the per-seed ratios."""
    a, b = ladder_regrets(sub, i, horizon), ladder_regrets(sub, j, horizon)
    per = a / b
    return float(a.mean() / b.mean()), float(per.min()), float(per.max())


def loglog_slope(sub: pd.DataFrame) -> float:
    """The log-log slope of elim-ldp-pooled's (epsilon 1) mean final regret against T (one family)."""
    ours = sub[sub.agent == LADDER[4][0]].groupby("horizon").regret.mean()
    return float(np.polyfit(np.log(ours.index.to_numpy(float)), np.log(ours.to_numpy()), 1)[0])


def summarise(tables: dict[str, pd.DataFrame]) -> str:
    """Every table of the page, as markdown (sections start with "### ")."""
    lines: list[str] = []

    def print(*parts: str) -> None:  # noqa: A001 - collect instead of printing
        lines.append(" ".join(parts))

    lad = tables["ladder"]
    labels = [label for label, _, _ in LADDER]
    for family in lad.family.unique():
        sub = lad[lad.family == family]
        horizons = sorted(sub.horizon.unique())
        seeds = sub.seed.nunique()
        print(f"\n### Ladder, {family}, d = K = 5, delta 1e-5, {seeds} seeds: final regret, mean ± s.e.\n")
        tab = pd.DataFrame({"agent": labels, **{f"T = 2^{int(math.log2(h))}": [
            mean_se(sub[(sub.horizon == h) & (sub.agent == a)].regret) for a in labels] for h in horizons}})
        print(md(tab))
        print(f"\n### Steps, {family}: ratio of means (min-max of per-seed ratios, paired by seed)\n")
        steps = []
        for label, i, j in STEPS:
            row = {"step": label}
            for h in horizons:
                mean, lo, hi = step_ratio(sub, i, j, h)
                row[f"T = 2^{int(math.log2(h))}"] = f"{mean:.2f} ({lo:.2f}-{hi:.2f})"
            steps.append(row)
        print(md(pd.DataFrame(steps)))
        if len(horizons) > 1:
            print(f"\nlog-log slope of elim-ldp-pooled (eps 1) over T = {', '.join(str(h) for h in horizons)}: "
                  f"{loglog_slope(sub):.2f}")
    ep = tables["epochs"]
    for family in ep.family.unique():
        sub = ep[ep.family == family]
        g = sub.groupby("epoch")
        tab = pd.DataFrame({
            "epoch": g.epoch.first(), "rounds": g.rounds.mean().round().astype(int),
            "regression users": g.reg_users.mean().round().astype(int),
            "share of regret": g.share.apply(lambda v: f"{v.mean():.3f} ± {v.std(ddof=1) / math.sqrt(len(v)):.3f}"),
            "regret/round over uniform's": g.regret_per_round_over_uniform.apply(lambda v: f"{v.mean():.2f}"),
            "noise/signal psi": (sub.noise_psi / sub.signal_psi).groupby(sub.epoch).mean().map("{:.1f}".format),
            "pooled noise/signal psi": (sub.noise_psi * np.sqrt(sub.reg_users / sub.pooled_users) / sub.signal_psi
                                        ).groupby(sub.epoch).mean().map("{:.2f}".format),
            "noise/signal Psi": (sub.noise_Psi / sub.signal_Psi).groupby(sub.epoch).mean().map("{:.1f}".format),
            "Psi error / signal (Frobenius)": (sub.Psi_err / sub.signal_Psi).groupby(sub.epoch).mean().map(
                "{:.1f}".format),
            "pooled theta error (L2)": g.theta_err.mean().map("{:.2f}".format),
            "pooled prediction RMSE / uniform's regret per round": (sub.pred_rmse / sub.uniform_round).groupby(
                sub.epoch).mean().map("{:.2f}".format)})
        horizon = int(sub.rounds.groupby(sub.seed).sum().iloc[0])
        print(f"\n### Per epoch, {family}, elim-ldp-pooled eps 1, T = {horizon}, "
              f"{sub.seed.nunique()} seeds (means)\n")
        print(md(tab.reset_index(drop=True)))
        print(f"\nSignal (means over epochs and seeds): ||E psi|| = {sub.signal_psi.mean():.4f}, "
              f"||E Psi||_F = {sub.signal_Psi.mean():.4f}; uniform's regret per round {sub.uniform_round.mean():.4f}; "
              f"one user's privacy sd of psi (all d coordinates) {(sub.noise_psi * np.sqrt(sub.reg_users)).mean():.1f}")
    cov = tables["coverage"]
    print("\n### Width coverage, last three releases (all seeds pooled; means)\n")
    g = cov.groupby("family")
    print(md(pd.DataFrame({
        "family": list(g.groups), "coverage (all arms)": g.coverage.mean().map("{:.3f}".format).to_list(),
        "min coverage": g.coverage.min().map("{:.3f}".format).to_list(),
        "coverage (optimal arm)": g.coverage_opt.mean().map("{:.3f}".format).to_list(),
        "q95 of error/width": g.q95.mean().map("{:.2f}".format).to_list(),
        "median width": g.median_width.mean().map("{:.4f}".format).to_list(),
        "median error": g.median_err.mean().map("{:.4f}".format).to_list(),
        "median gap (best - 2nd)": g.median_gap.mean().map("{:.4f}".format).to_list(),
        "median width(opt) / gap": g.width_over_gap.mean().map("{:.1f}".format).to_list()})))
    pl = tables["play"]
    print("\n### Play rules on the same releases: regret per round over uniform's (fresh contexts, no elimination)\n")
    last = pl.groupby(["family", "seed"]).epoch.transform("max")
    rows = []
    for family in pl.family.unique():
        for which, sel in (("all releases", pl.family == family), ("last release", (pl.family == family)
                                                                   & (pl.epoch == last))):
            s = pl[sel]
            rows.append(dict(family=family, releases=which, greedy=f"{(s.greedy / s.uniform).mean():.2f}",
                             ucb=f"{(s.ucb / s.uniform).mean():.2f}", uniform="1.00"))
    print(md(pd.DataFrame(rows)))
    clip = tables["clipping"]
    print("\n### Feature norms against the clipping radius (uniform-policy features, 16384 rounds x 5 arms)\n")
    print(md(clip.assign(**{c: clip[c].map("{:.3g}".format) for c in clip.columns if c not in ("family",)})))
    chan = channels_table()
    print("\n### One user's privacy variance of psi (total over d = 5 coordinates), epsilon 1, delta 1e-5\n")
    print(md(chan.assign(variance=chan.variance.map("{:.1f}".format), ratio=chan.ratio.map("{:.3f}".format))))
    rates = tables["rates"]
    print("\n### Rates at d = 5, T = 2^20, alpha = epsilon = 1 (constants unknown, set to 1)\n")
    print(md(rates.assign(value=rates.value.map("{:,.0f}".format))))
    lb = tables["lower_bound"]
    print("\n### Releases' prediction RMSE against lem:LDP-lower-bound-any (a) (A = Sigma, c = 1), means over seeds\n")
    g = lb.groupby(["family", "epoch"])
    tab = g.agg(pooled_users=("pooled_users", "mean"), pred_rmse=("pred_rmse", "mean"),
                lower_bound_rmse=("lower_bound_rmse", "mean")).reset_index()
    tab["ratio"] = tab.pred_rmse / tab.lower_bound_rmse
    print(md(tab.assign(pooled_users=tab.pooled_users.round().astype(int),
                        pred_rmse=tab.pred_rmse.map("{:.4f}".format),
                        lower_bound_rmse=tab.lower_bound_rmse.map("{:.5f}".format),
                        ratio=tab.ratio.map("{:.0f}".format))))
    return "\n".join(lines) + "\n"


TARGET = 0.3    # the regret, over uniform's, that issue 47 asks of a local-DP agent on heavy-tailed


def _pct(v: float) -> str:
    return f"{100 * v:.1f}%" if v < 0.1 else f"{100 * v:.0f}%"


def readings(tables: dict[str, pd.DataFrame]) -> dict[str, str]:
    """The page's reading of each table, as markdown bullets, every number computed from ``tables``.

    Keys name the files :func:`write_readings` writes (``ldp_cost_read_KEY.md``); the page includes each beside
    the table it reads. Needs both families (heavy-tailed first, then rare-direction) and at least two horizons.
    """
    lad, ep, cov, pl = tables["ladder"], tables["epochs"], tables["coverage"], tables["play"]
    clip, rates, lb = tables["clipping"], tables["rates"], tables["lower_bound"]
    heavy, rare = FAMILIES
    sub = {f: lad[lad.family == f] for f in FAMILIES}
    horizons = sorted(lad.horizon.unique())
    t_lo, t_hi = int(horizons[0]), int(horizons[-1])
    p_lo, p_hi = f"2^{int(math.log2(t_lo))}", f"2^{int(math.log2(t_hi))}"

    def step(f, i, j, h=t_hi):
        return step_ratio(sub[f], i, j, h)

    def mean(f, row, h=t_hi):
        return float(ladder_regrets(sub[f], row, h).mean())

    out = {}
    # --- the ladder
    privacy = {f: [step(f, i, i - 1)[0] for i in (2, 3, 4)] for f in FAMILIES}
    total = {f: step(f, 4, 1)[0] for f in FAMILIES}      # the product of the three privacy steps
    grows = total[heavy] > step(heavy, 4, 1, t_lo)[0] and total[rare] > step(rare, 4, 1, t_lo)[0]
    larger = all(total[f] > step(f, 1, 0)[0] for f in FAMILIES)
    rules = {f: {"UCB": mean(f, 4), "greedy": mean(f, 5), "spanner": mean(f, 6)} for f in FAMILIES}
    best = {f: min(rules[f], key=rules[f].get) for f in FAMILIES}
    same = all(np.allclose(ladder_regrets(sub[heavy], 6, h), ladder_regrets(sub[heavy], 9, h)) for h in horizons)
    spanner_heavy = ", ".join(mean_se(ladder_regrets(sub[heavy], 6, h)) for h in horizons)
    first = [step(heavy, i, 4, h)[0] for i in (7, 8) for h in horizons]
    lo_hi = {i: step(heavy, i, 4) for i in (7, 8)}
    overlap = all(lo <= 1 <= hi for _, lo, hi in lo_hi.values())
    r256, r4096 = step(rare, 7, 4), step(rare, 8, 4)
    helps_early = step(heavy, 8, 4, t_lo)[0]
    lines = [
        f"- **The pipeline without privacy noise** (epsilon 1e6, the first step) costs {step(heavy, 1, 0)[0]:.1f}x "
        f"LinUCB on heavy-tailed and {step(rare, 1, 0)[0]:.1f}x on rare-direction at {p_hi} (the ladder's LinUCB "
        "uses the practical radius; the stored boards' LinUCB reference uses the theory radius). This is batched "
        "elimination, 20% of each epoch spent on U, and the normalised IW statistics, all with negligible noise. "
        f"On rare-direction its regret goes from {mean(rare, 1, t_lo):,.0f} at {p_lo} to {mean(rare, 1):,.0f} at "
        f"{p_hi} ({mean(rare, 1) / mean(rare, 1, t_lo):.2f}x while T grows {t_hi // t_lo}x).",
        f"- **Privacy, epsilon 1e6 to 1, is {'the larger' if larger else 'not the larger'} factor"
        f"{', and it grows with T' if grows else ''}.** On heavy-tailed it is "
        f"{' x '.join(f'{v:.2f}' for v in privacy[heavy])} = {total[heavy]:.1f}x at {p_hi} "
        f"({step(heavy, 4, 1, t_lo)[0]:.1f}x at {p_lo}). On rare-direction it is "
        f"{' x '.join(f'{v:.2f}' for v in privacy[rare])} = {total[rare]:.0f}x. At epsilon 1 the agent is "
        f"{step(heavy, 4, 9)[0]:.2f}x uniform on heavy-tailed at {p_hi} and its log-log slope is "
        f"{loglog_slope(sub[heavy]):.2f}. On rare-direction it is {step(rare, 4, 9)[0]:.2f}x uniform, slope "
        f"{loglog_slope(sub[rare]):.2f}.",
        f"- **Play rule.** At {p_hi} the best of the three is {best[heavy]} on heavy-tailed and {best[rare]} on "
        f"rare-direction. Greedy is {step(heavy, 5, 4)[0]:.2f}x (heavy) and {step(rare, 5, 4)[0]:.2f}x (rare) UCB's "
        f"regret, spanner {step(heavy, 6, 4)[0]:.2f}x and {step(rare, 6, 4)[0]:.2f}x."
        + (f" On heavy-tailed, spanner play is *exactly* uniform at every horizon ({spanner_heavy}), seed by seed. "
           "With K = d = 5 the spanner of the surviving arms is all of them, so no arm was ever eliminated on "
           "heavy-tailed." if same else ""),
        f"- **First epoch.** Changing it to 256 or 4096 rounds moves regret by {min(first):.2f}-{max(first):.2f}x "
        f"on heavy-tailed (per seed at {p_hi}: 256 {lo_hi[7][1]:.2f}-{lo_hi[7][2]:.2f}, 4096 "
        f"{lo_hi[8][1]:.2f}-{lo_hi[8][2]:.2f}{', both ranges overlap 1' if overlap else ''}; 4096 at {p_lo} is "
        f"{helps_early:.2f}x). On rare-direction, 256 is {r256[0]:.2f}x on the mean at {p_hi} (per seed "
        f"{r256[1]:.2f}-{r256[2]:.2f}) and 4096 is {r4096[0]:.2f}x (per seed {r4096[1]:.2f}-{r4096[2]:.2f})."]
    out["ladder"] = "\n".join(lines)

    # --- per epoch
    def epochs_of(f):
        e = ep[ep.family == f]
        g = e.groupby("epoch")
        return pd.DataFrame({
            "share": g.share.mean(), "rounds": g.rounds.mean(), "per_round": g.regret_per_round_over_uniform.mean(),
            "pooled": (e.noise_psi * np.sqrt(e.reg_users / e.pooled_users) / e.signal_psi).groupby(e.epoch).mean(),
            "gram": (e.noise_Psi / e.signal_Psi).groupby(e.epoch).mean(),
            "psi": (e.noise_psi / e.signal_psi).groupby(e.epoch).mean(),
            "theta_err": g.theta_err.mean(),
            "pred": (e.pred_rmse / e.uniform_round).groupby(e.epoch).mean()}), e
    eh, eh_raw = epochs_of(heavy)
    er, er_raw = epochs_of(rare)
    full_h = int(eh.rounds.idxmax())                      # the last full epoch (the one after it is cut by T)
    diag_t = int(eh_raw.rounds.groupby(eh_raw.seed).sum().iloc[0])
    p_diag = f"2^{int(math.log2(diag_t))}"
    signal = {f: float(ep[ep.family == f].signal_psi.mean()) for f in FAMILIES}
    user_sd = float((eh_raw.noise_psi * np.sqrt(eh_raw.reg_users)).mean())
    median_norm = float(clip[clip.family == heavy].median_norm.iloc[0])
    w_gap = cov.groupby("family").width_over_gap.mean()
    last_two = eh.theta_err.iloc[-2:]
    below = er.index[er.pooled < 1]
    learned = int(below[0]) if len(below) else None
    lines = [
        f"- **The first epoch {'is not' if eh.share.iloc[0] < 0.1 and er.share.iloc[0] < 0.1 else 'is'} where the "
        f"regret is.** It takes {_pct(eh.share.iloc[0])} (heavy) and {_pct(er.share.iloc[0])} (rare) of the regret "
        f"at {p_diag}, at {eh.per_round.iloc[0]:.2f}x and {er.per_round.iloc[0]:.2f}x uniform's rate. The last two "
        f"full epochs carry {_pct(eh.share.loc[full_h - 1:full_h].sum())} (heavy) and "
        f"{_pct(er.share.loc[full_h - 1:full_h].sum())} (rare).",
        f"- **Heavy-tailed: the released statistics are noise.** One user's report carries privacy noise of norm "
        f"{user_sd:.1f} (all d coordinates of psi), against a signal ||E psi|| = {signal[heavy]:.4f}, "
        f"{signal[rare] / signal[heavy]:.1f}x smaller than rare-direction's {signal[rare]:.4f}. Heavy-tailed "
        f"features have median norm {median_norm:.2f} (section 3) and the rewards are Rademacher, so "
        f"E psi ~ E[||phi||] |theta*| / d is small. After {p_diag} rounds the pooled psi is still at "
        f"{eh.pooled.loc[full_h]:.2f}x noise over signal. In the last full epoch the Gram statistic's noise over "
        f"signal is {eh.gram.loc[full_h]:.1f}, psi's {eh.psi.loc[full_h]:.1f}. The pooled theta's distance from "
        f"theta* is {last_two.min():.2f}-{last_two.max():.2f} in the last two releases. Its prediction error per arm "
        f"is {eh.pred.loc[full_h]:.2f}x uniform's regret per round, and the widths are {w_gap[heavy]:.1f}x the gaps "
        f"(section 4), so nothing is eliminated. Pooling 4x more users (T four times longer) halves the ratio, to "
        f"about {eh.pooled.loc[full_h] / 2:.2f}, {'still above' if eh.pooled.loc[full_h] / 2 > 1 else 'below'} 1. "
        f"This is why the slope is {loglog_slope(sub[heavy]):.2f}."]
    if learned is not None:
        later = er.per_round.loc[learned + 1:full_h]
        lines.append(
            f"- **Rare-direction learns once the pooled ratio falls below 1.** That happens with release {learned} "
            f"({er.pooled.loc[learned]:.2f}), after {int(er.rounds.loc[:learned].sum()):,} rounds; the epochs "
            f"played on it and on later releases run at {later.max():.2f}x down to {later.min():.2f}x uniform's "
            "regret per round.")
    out["epochs"] = "\n".join(lines)

    # --- clipping
    ch = clip[clip.family == heavy].set_index("radius")
    cr = clip[clip.family == rare].set_index("radius")
    bound = float(ch.index.max())
    rare_clip = float(cr.clipped[cr.index < bound].min())
    r = 0.2
    lines = [
        f"- At today's radius B = {bound:g}, "
        f"{'no row is clipped' if ch.clipped.loc[bound] == 0 else _pct(ch.clipped.loc[bound]) + ' of rows clipped'}"
        ". Heavy-tailed "
        f"norms are {ch.median_norm.loc[bound]:.2f} at the median and {ch.q99_norm.loc[bound]:.2f} at the 99% "
        f"quantile, so the channel's radius is {bound / ch.median_norm.loc[bound]:.0f}x the typical norm.",
        f"- A public radius r = {r:g} clips {_pct(ch.clipped.loc[r])} of the rows and biases E||phi|| by "
        f"{_pct(ch.mean_norm_bias.loc[r])} (the second moment by {_pct(ch.moment_bias.loc[r])}, because the tail "
        f"carries it). It cuts the Gram statistic's noise to {ch.noise_Psi_rel.loc[r]:.2f}x but psi's only to "
        f"{ch.noise_psi_rel.loc[r]:.2f}x: psi's norm is |y| = 1 under Rademacher rewards, whatever phi's norm. "
        "psi is the statistic that carries theta*, so a smaller feature radius buys little where the agent is "
        "weakest.",
        f"- Rare-direction features have median norm {cr.median_norm.loc[bound]:g}: every r < B tried clips "
        f"{'all' if rare_clip == 1 else 'at least ' + _pct(rare_clip)}"
        " of its rows and biases its moments. A public radius "
        "must be chosen per family before the run, so it is not one universal setting."]
    out["clipping"] = "\n".join(lines)

    # --- coverage
    c = cov.groupby("family")
    cm, cmin, copt, q95 = c.coverage.mean(), c.coverage.min(), c.coverage_opt.mean(), c.q95.mean()
    lines = [
        f"- **Heavy-tailed: the intervals {'undercover' if cm[heavy] < 0.95 else 'cover'}.** They cover "
        f"{cm[heavy]:.2f} of the arms ({copt[heavy]:.2f} of the optimal arms), and widths would have to grow "
        f"{q95[heavy]:.2f}x to cover 95%. This is a weakness of the plug-in bias term when the pooled theta is "
        "itself noise: the regulariser's bias is then of the order of theta*, and the plug-in estimate of it uses "
        "the noisy theta. The agent's docstring says its tuned defaults may cover less than 95%.",
        f"- **Rare-direction: {cm[rare]:.2f} mean coverage** ({cmin[rare]:.2f} at the lowest release), with q95 "
        f"{q95[rare]:.2f}.",
        f"- The median width at the optimal arm is {w_gap[heavy]:.1f}x (heavy) and {w_gap[rare]:.1f}x (rare) the "
        "gap to the second-best arm, so elimination is slow. On heavy-tailed it never bites (section 1). Narrower "
        "widths would not help heavy-tailed while its estimate is noise, and they would cost coverage on "
        "rare-direction."]
    out["coverage"] = "\n".join(lines)

    # --- play on the releases
    last = pl.groupby(["family", "seed"]).epoch.transform("max")

    def rule(f, name, only_last=False):
        s = pl[(pl.family == f) & ((pl.epoch == last) if only_last else True)]
        return float((s[name] / s.uniform).mean())
    lines = [
        f"- On heavy-tailed, averaged over all releases, greedy and UCB are at {rule(heavy, 'greedy'):.2f} and "
        f"{rule(heavy, 'ucb'):.2f} of uniform's regret: the estimate holds next to no usable information. Only "
        f"the last release has some: greedy {rule(heavy, 'greedy', True):.2f}, UCB {rule(heavy, 'ucb', True):.2f}"
        ", because the widths are as large as the differences between arms.",
        f"- On rare-direction, greedy and UCB are close on the same releases ({rule(rare, 'greedy'):.2f} / "
        f"{rule(rare, 'ucb'):.2f}, last {rule(rare, 'greedy', True):.2f} / {rule(rare, 'ucb', True):.2f}).",
        f"- Played online, greedy-pooled adds (d/t)^(1/3) exploration and is {step(heavy, 5, 4)[0]:.2f}x (heavy) "
        f"and {step(rare, 5, 4)[0]:.2f}x (rare) UCB (section 1). The play rule is not where the regret is; the "
        "releases are."]
    out["play"] = "\n".join(lines)

    # --- rates
    v = rates.value.to_numpy()
    lower, chen, ours_rate = v[0], v[1], v[2]
    uniform_h = float(rates.value[rates.rate.str.contains(f"uniform play, {heavy}")].iloc[0])
    lbh = lb[lb.family == heavy].groupby("epoch")[["pooled_users", "pred_rmse", "lower_bound_rmse"]].mean()
    lbr = lb[lb.family == rare].groupby("epoch")[["pooled_users", "pred_rmse", "lower_bound_rmse"]].mean()
    lbh, lbr = lbh.loc[:full_h], lbr.loc[:full_h]       # the release cut by the horizon adds few users
    ratio_h, ratio_r = lbh.pred_rmse / lbh.lower_bound_rmse, lbr.pred_rmse / lbr.lower_bound_rmse
    gap_h = float(cov[cov.family == heavy].median_gap.mean())
    lines = [
        f"- **Heavy-tailed.** The paper's own bound sqrt(d^5 T)/alpha = {ours_rate:,.0f} is "
        f"{ours_rate / uniform_h:.2f}x uniform's regret ({uniform_h:,.0f}): with constant 1, it does not promise "
        f"beating uniform at this T. Chen et al.'s rate ({chen:,.0f}) and the lower bound ({lower:,.0f}) are "
        f"{uniform_h / chen:.0f}-{uniform_h / lower:.0f}x below uniform. So {TARGET}x uniform is not ruled out: it "
        f"needs an algorithm at Chen et al.'s rate with a constant of at most about {TARGET * uniform_h / chen:.1f}.",
        f"- **The estimator is far from the distribution-specific bound, and the gap grows.** The lower-bound RMSE "
        f"falls like 1/sqrt(n): {lbh.lower_bound_rmse.iloc[-1]:.4f} at n = {lbh.pooled_users.iloc[-1]:,.0f} on "
        f"heavy-tailed, {gap_h / lbh.lower_bound_rmse.iloc[-1]:.0f}x below the median gap of {gap_h:.3f}. The "
        f"agent's measured RMSE falls from {lbh.pred_rmse.iloc[0]:.3f} to only {lbh.pred_rmse.iloc[-1]:.3f}, "
        f"{ratio_h.iloc[0]:.0f}x the bound after the first epoch and {ratio_h.iloc[-1]:.0f}x at {p_diag}. A bound "
        f"10x larger than at c = 1 would still leave the agent {ratio_h.iloc[-1] / 10:.0f}x above it. What keeps "
        "heavy-tailed at uniform's level is the randomizer's noise against a small signal, not the information the "
        "lower bound leaves.",
        f"- **Rare-direction.** Its estimator is {ratio_r.min():.0f}-{ratio_r.max():.0f}x the distribution-specific "
        "bound. The stored paper suite's regrets at T = 2^20 (10 seeds), to set beside these rates, are on the "
        "{doc}`results page </results>` (boards heavy-tailed-d5k5 and rare-direction-d5k5)."]
    out["rates"] = "\n".join(lines)

    # --- levers
    chan = channels_table()
    ball = float(chan.ratio.iloc[2])
    pooled_ball = eh.pooled.loc[full_h] * math.sqrt(ball)
    rare_last = er.pooled.loc[full_h:].agg(["min", "max"])
    shares = (min(eh.share.iloc[0], er.share.iloc[0]), max(eh.share.iloc[0], er.share.iloc[0]))
    greedy = sorted((step(heavy, 5, 4)[0], step(rare, 5, 4)[0]))
    spanner = sorted((step(heavy, 6, 4)[0], step(rare, 6, 4)[0]))
    gaps = sorted(w_gap)
    out["lever1"] = (
        "1. **A better per-user channel for psi, the d-vector that carries theta\\*.** Measured: heavy-tailed's "
        f"pooled psi is {eh.pooled.loc[full_h]:.2f}x noise over signal at {p_diag}; its signal per user is "
        f"{signal[heavy]:.4f} against a privacy sd of {user_sd:.1f}, and sampling variance is "
        f"{_pct(chan.ratio.iloc[3])} of the privacy variance (the table after this item). Sent alone through the "
        "pure epsilon-LDP L2-ball channel (already in the library, `L2BallChannel`), psi's per-user variance is "
        f"{ball:.3f}x today's. That is worth {1 / ball:.0f}x more users, a pooled ratio of about {pooled_ball:.2f} "
        f"at {p_diag} and {pooled_ball / 2:.2f} with 4x the users (T four times longer). Rare-direction learns "
        f"today at that level ({rare_last['min']:.2f}-{rare_last['max']:.2f} at {p_diag}, "
        f"{step(rare, 4, 9)[0]:.2f}x uniform). PrivUnit (Bhowmick et al. 2018) and its Gaussian variants (Asi, "
        "Feldman and Talwar 2022) are reported to beat the L2-ball channel on unit vectors, and psi is a unit "
        "vector times y = ±1; they have to be measured with the same accountant. The estimate assumes the Gram "
        "comes from users other than psi's (lever 2). This is the only lever measured here that moves the "
        "binding ratio by more than 2x.")
    out["levers"] = "\n".join([
        f"2. **Fewer privatized numbers per user: do not send the d x d Psi.** Measured: Psi's noise over signal "
        f"({eh.gram.loc[full_h]:.1f} in the last full epoch on heavy-tailed, psi's "
        f"{eh.psi.loc[full_h]:.1f}) is as large as psi's, so the pooled Gram is as noisy as the response. "
        f"Sending psi alone through the same Gaussian cuts psi's variance to {chan.ratio.iloc[1]:.3f}x and removes "
        "the Gram's noise. The Gram must then come from elsewhere: the fixed-p construction of "
        "`alg:LDP-linear-regression-fixed-p` (theta = U psi_hat with U from the spectral users or from public "
        f"data), or the spectral users' H. Estimate: {1 / chan.ratio.iloc[1]:.0f}x effective users on psi, plus "
        "the Gram error, on its own. Combined with lever 1 it is the same change: a d-vector channel.",
        f"3. **The pipeline's own cost, without noise** (epsilon 1e6: {step(heavy, 1, 0)[0]:.1f}x and "
        f"{step(rare, 1, 0)[0]:.1f}x LinUCB). This is batching, elimination that does not bite (widths "
        f"{gaps[0]:.1f}-{gaps[1]:.1f}x the gaps), and 20% of users on U. Once the noise is down, this is the next "
        "factor. It is shared with joint DP, where the jdp-cost study measured what warm starts and pooling pay.",
        f"4. **Width calibration on heavy-tailed** (coverage {cm[heavy]:.2f}, q95 {q95[heavy]:.2f}). It only "
        "matters once the estimate carries signal (section 5). Recalibrate the plug-in bias for a noise-dominated "
        "theta, and measure coverage with every new agent.",
        f"5. **A public clipping radius.** It cuts the Gram statistic's noise ({ch.noise_Psi_rel.loc[r]:.2f}x at "
        f"r = {r:g}, {_pct(ch.clipped.loc[r])} of rows clipped, {_pct(ch.mean_norm_bias.loc[r])} bias of "
        f"E||phi||) but psi's only to {ch.noise_psi_rel.loc[r]:.2f}x, because |y| = 1. It is worth trying only for "
        "whatever Gram statistic remains after lever 2, and only per family (it clips every rare-direction row).",
        f"6. **Not levers at these T:** the first epoch ({_pct(shares[0])}-{_pct(shares[1])} of regret; 256 or "
        f"4096 rounds move it {min(first):.2f}-{max(first):.2f}x on heavy-tailed) and the play rule (greedy "
        f"{greedy[0]:.2f}-{greedy[1]:.2f}x UCB, spanner {spanner[0]:.2f}-{spanner[1]:.2f}x). Pooling and warm "
        "starts are already in `elim-ldp-pooled` and not separated here. GLM working rows were not measured "
        "(linear families only)."])
    return {k: v + "\n" for k, v in out.items()}


def write_readings(tables: dict[str, pd.DataFrame], folder: pathlib.Path) -> dict[str, str]:
    """Each reading of :func:`readings` into ``folder``/ldp_cost_read_KEY.md (the page includes them by name)."""
    folder.mkdir(parents=True, exist_ok=True)
    texts = readings(tables)
    for key, text in texts.items():
        (folder / f"ldp_cost_read_{key}.md").write_text(text, encoding="utf-8")
    return texts


def write_sections(text: str, folder: pathlib.Path) -> None:
    """Each "### " section of ``text`` into ``folder``/ldp_cost_NN.md (the docs page includes them by number)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, section in enumerate(re.split(r"\n(?=### )", text.strip())):
        (folder / f"ldp_cost_{i:02d}.md").write_text(section.strip() + "\n", encoding="utf-8")


def emit(tables: dict[str, pd.DataFrame], markdown: str | None) -> None:
    """Print the tables and then the page's readings of them; with ``markdown``, write both as the page's includes."""
    text = summarise(tables)
    texts = readings(tables)
    sys.stdout.write(text + "".join(f"\n### Reading: {key}\n\n{body}" for key, body in texts.items()))
    if markdown:
        write_sections(text, pathlib.Path(markdown))
        write_readings(tables, pathlib.Path(markdown))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log2-horizons", default="14,16,18", help="ladder horizons, log2 (default 14,16,18)")
    p.add_argument("--diag-log2-horizon", type=int, default=None, help="diagnostics horizon (default the largest)")
    p.add_argument("--seeds", type=int, default=4, help="seeds 0 .. n-1 (default 4)")
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--out", default="results/ldp_cost", help="folder of the CSVs (default results/ldp_cost)")
    p.add_argument("--from", dest="from_", default=None,
                   help="only print the tables of a finished folder or of its combined ldp_cost.csv")
    p.add_argument("--markdown", default=None,
                   help="also write each table section to DIR/ldp_cost_NN.md (the docs build's input)")
    args = p.parse_args(argv)
    if args.from_:
        emit(load(pathlib.Path(args.from_)), args.markdown)
        return 0
    try:
        horizons = [2 ** int(v) for v in args.log2_horizons.split(",")]
    except ValueError:
        p.error(f"--log2-horizons must be integers separated by commas, got {args.log2_horizons!r}")
    if args.seeds < 2:
        p.error(f"--seeds must be at least 2 (standard errors), got {args.seeds}")
    families = tuple(args.families.split(","))
    seeds = list(range(args.seeds))
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tables = dict(clipping=clipping_table(families), rates=rates_table(families))
    diag_t = 2 ** args.diag_log2_horizon if args.diag_log2_horizon else max(horizons)
    tables["epochs"], tables["coverage"], tables["play"] = diagnostics(families, diag_t, seeds)
    tables["lower_bound"] = lower_bound_error(families, seeds, tables["epochs"])
    tables["ladder"] = ladder_cells(families, horizons, seeds)
    save(tables, out)
    emit(tables, args.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
