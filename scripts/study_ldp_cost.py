"""Where ``elim-ldp-pooled``'s regret comes from: a measured decomposition under local DP (issue 47, item 1).

Thin over the public API: :func:`privbandit.agents.make_agent`, :func:`privbandit.sim.run_many` and
:func:`~privbandit.sim.run` on ``gym.make("PrivLinCB-v0", family=..., dim=5, n_arms=5, horizon=T)``, the agents'
released estimates (``agent.estimates``, each with its :class:`~privbandit.oracles.iw_ldp.LDPRelease`) and the
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
                s_psi, s_big = release_signal(rel.u, flat, theta)
                pred_err = float(np.sqrt(np.mean((flat @ (est.theta - theta)) ** 2)))
                epochs.append(dict(
                    family=family, seed=seed, epoch=j, rounds=n_rounds, reg_users=rel.n,
                    share=float(per_epoch["sum"].get(j, 0.0)) / total,
                    regret_per_round_over_uniform=(float(per_epoch["sum"].get(j, 0.0)) / max(n_rounds, 1)
                                                   / uniform_round),
                    noise_psi=rel.noise_sd_psi * math.sqrt(e.dim), signal_psi=s_psi,
                    noise_Psi=rel.noise_sd_Psi * e.dim, signal_Psi=s_big,
                    Psi_err=float(np.linalg.norm(rel.psi_mat - _mean_big(rel.u, flat))) if rel.n else float("nan"),
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
                a = sub[(sub.horizon == h) & (sub.agent == labels[i])].sort_values("seed").regret.to_numpy()
                b = sub[(sub.horizon == h) & (sub.agent == labels[j])].sort_values("seed").regret.to_numpy()
                per = a / b
                row[f"T = 2^{int(math.log2(h))}"] = f"{a.mean() / b.mean():.2f} ({per.min():.2f}-{per.max():.2f})"
            steps.append(row)
        print(md(pd.DataFrame(steps)))
        ours = sub[sub.agent == labels[4]].groupby("horizon").regret.mean()
        if len(ours) > 1:
            slope = np.polyfit(np.log(ours.index.to_numpy(float)), np.log(ours.to_numpy()), 1)[0]
            print(f"\nlog-log slope of elim-ldp-pooled (eps 1) over T = {', '.join(str(h) for h in ours.index)}: "
                  f"{slope:.2f}")
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


def write_sections(text: str, folder: pathlib.Path) -> None:
    """Each "### " section of ``text`` into ``folder``/ldp_cost_NN.md (the docs page includes them by number)."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, section in enumerate(re.split(r"\n(?=### )", text.strip())):
        (folder / f"ldp_cost_{i:02d}.md").write_text(section.strip() + "\n", encoding="utf-8")


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
        text = summarise(load(pathlib.Path(args.from_)))
        sys.stdout.write(text)
        if args.markdown:
            write_sections(text, pathlib.Path(args.markdown))
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
    text = summarise(tables)
    sys.stdout.write(text)
    if args.markdown:
        write_sections(text, pathlib.Path(args.markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
