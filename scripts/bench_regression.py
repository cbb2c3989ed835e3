"""Benchmark the private regression oracles: error, L1 error, coverage and width of their estimates.

Grid: oracles (``--model jdp|ldp|all`` selects registered oracles by their privacy models, or ``--oracles``)
x context families (isotropic, spiky, rare-direction, heavy-tailed; d = 10) x T in {2^12, ..., 2^20}
x epsilon in {0.1, 1} with delta = 1/T x seeds (>= 10) x constants (practical and/or theory).
Each cell draws T rows phi ~ p (one arm), theta* = the family's hard direction (unit norm), rewards
y = +-1 with E[y | phi] = <phi, theta*>, fits the oracle once, and measures on fresh phi ~ p:

- ``sigma_err``  ||theta_hat - theta*||_Sigma with the exact Sigma = E[phi phi^T];
- ``l1_err``     E |<phi, theta_hat - theta*>|;
- ``coverage``   share of fresh phi with |<phi, theta_hat - theta*>| <= width(phi) (``coverage_nonzero``:
  the same among phi != 0, which matters on the spiky family where most phi are 0);
- ``mean_width`` E width(phi).

Writes a tidy CSV (one row per cell) and seaborn figures into ``--out``, and prints the oracles' acceptance checks
(coverage >= 95% per cell; theory/practical width ratio at T = 2^16; IW-Regression-DP vs SSP L1 error at
epsilon = 0.1; DP-SGD error at d = 1000 vs d = 10) for whatever part of the grid was run.

Its cells fit an oracle on i.i.d. rows, with no agent, env or round stream, so they are not cells of
:func:`privbandit.bench.sweep` (which plays an agent on an env); ``--jobs`` spreads them over joblib's workers.

Examples
--------
Full grid (slow)::

    python scripts/bench_regression.py --model jdp --constants practical,theory --out results/bench_regression

Reduced::

    python scripts/bench_regression.py --oracles iw-regression-dp,ssp --log2-t 12,16 --seeds 5 --out results/quick
    python scripts/bench_regression.py --oracles dp-sgd --dims 10,1000 --families isotropic --log2-t 14
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import privbandit  # noqa: F401  (registers the oracles)
from privbandit.oracles import make_oracle, oracle_class, oracle_names

FAMILIES = ("isotropic", "spiky", "rare-direction", "heavy-tailed")


def _family_factory():
    """privbandit.envs.make_family, or (while the envs module is being written) a tiny local stand-in."""
    try:
        from privbandit.envs import make_family  # type: ignore[attr-defined]
        return make_family
    except ImportError:
        pass
    try:
        from privbandit.envs.contexts import make_family  # type: ignore[no-redef]
        return make_family
    except ImportError:
        return _local_family


@dataclasses.dataclass(frozen=True)
class _LocalFamily:  # pragma: no cover - fallback only
    name: str
    dim: int

    def sample(self, n: int, rng) -> np.ndarray:
        rng = np.random.default_rng(rng)
        d = self.dim
        u = rng.standard_normal((n, d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        if self.name == "isotropic":
            x = u
        elif self.name == "spiky":
            rho = 100.0 ** (-np.arange(d) / (d - 1))
            rho /= rho.sum()
            x = np.eye(d)[rng.choice(d, size=n, p=rho)]
        elif self.name == "rare-direction":
            u[:, -1] = 0
            u /= np.linalg.norm(u, axis=1, keepdims=True)
            rare = rng.random(n) < 0.01
            u[rare] = np.eye(d)[-1]
            x = u
        else:
            r = np.minimum(1.0, 0.05 * (1 - rng.random(n)) ** -0.5)
            x = u * r[:, None]
        return x[:, None, :]

    def second_moment(self) -> np.ndarray:
        x = self.sample(200_000, 12345)[:, 0]
        return x.T @ x / len(x)

    def theta_direction(self, rng) -> np.ndarray:
        v = np.random.default_rng(rng).standard_normal(self.dim)
        return v / np.linalg.norm(v)


def _local_family(name: str, *, dim: int, n_arms: int = 1, bound: float = 1.0, **_) -> _LocalFamily:
    return _LocalFamily(name, dim)


def select_oracles(model: str, names: str | None) -> list[str]:
    """Oracle names from ``--oracles`` or by privacy model (``ridge`` is never selected by model)."""
    if names:
        chosen = [n.strip() for n in names.split(",") if n.strip()]
        unknown = set(chosen) - set(oracle_names())
        if unknown:
            raise SystemExit(f"unknown oracles {sorted(unknown)}; registered: {oracle_names()}")
        return chosen
    models = {"jdp": ("jdp",), "ldp": ("ldp",), "all": ("jdp", "ldp")}[model]
    return [n for n in oracle_names() if oracle_class(n).privacy_models[0] in models]


def _oracle(name: str, epsilon: float, delta: float, constants: str, public: np.ndarray):
    cls = oracle_class(name)
    fields = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    if "constants" in fields:
        kwargs["constants"] = constants
    atoms = public if isinstance(public, tuple) else None
    for key, wkey in (("features", "weights"), ("public_features", "public_weights")):
        if key in fields:
            if atoms is not None:  # the distribution is known exactly
                kwargs[key] = atoms[0]
                if wkey in fields:
                    kwargs[wkey] = atoms[1]
                else:  # the oracle takes samples only: give it a large sample of p
                    kwargs[key] = atoms[2]
            else:
                kwargs[key] = public
    if cls.privacy_models != ("none",):            # ridge (non-private) takes no budget
        kwargs.update(epsilon=epsilon, delta=delta)
    return make_oracle(name, **kwargs)


def run_cell(name: str, family_name: str, dim: int, log2_t: int, epsilon: float, seed: int, constants: str,
             n_fresh: int) -> dict:
    """Fit one oracle on one dataset and measure it."""
    make_family = _family_factory()
    fam = make_family(family_name, dim=dim, n_arms=1, bound=1.0)
    ss = np.random.SeedSequence([seed, log2_t, dim, FAMILIES.index(family_name) if family_name in FAMILIES else 9])
    r_theta, r_x, r_y, r_fit, r_fresh, r_pub = (np.random.default_rng(s) for s in ss.spawn(6))
    t = 2 ** log2_t
    theta = np.asarray(fam.theta_direction(r_theta), dtype=float)
    theta /= max(1.0, np.linalg.norm(theta))
    x = fam.sample(t, r_x)[:, 0, :]
    mean = np.clip(x @ theta, -1.0, 1.0)
    y = np.where(r_y.random(t) < 0.5 * (1.0 + mean), 1.0, -1.0)
    public = fam.sample(2 ** 14, r_pub)[:, 0, :]
    known = fam.atoms() if hasattr(fam, "atoms") else None
    if known is not None:  # discrete family: the fixed-p oracles get p itself (atoms, probabilities)
        public = (np.asarray(known[0], dtype=float), np.asarray(known[1], dtype=float), public)
    oracle = _oracle(name, epsilon, 1.0 / t, constants, public)
    start = time.perf_counter()
    est = oracle.fit(x, y, rng=r_fit)
    seconds = time.perf_counter() - start
    fresh = fam.sample(n_fresh, r_fresh)[:, 0, :]
    err = fresh @ (est.theta - theta)
    width = est.width(fresh)
    ok = np.abs(err) <= width
    nonzero = np.linalg.norm(fresh, axis=1) > 0
    diff = est.theta - theta
    sigma = np.asarray(fam.second_moment(), dtype=float)
    return dict(oracle=name, model=oracle.privacy.model, constants=constants, family=family_name, dim=dim,
                T=t, log2T=log2_t, epsilon=epsilon, delta=1.0 / t, seed=seed,
                sigma_err=float(math.sqrt(max(diff @ sigma @ diff, 0.0))), l1_err=float(np.mean(np.abs(err))),
                coverage=float(np.mean(ok)),
                coverage_nonzero=float(np.mean(ok[nonzero])) if nonzero.any() else float("nan"),
                mean_width=float(np.mean(width)), seconds=seconds)


UCB_AGENTS = ("linucb", "linucb-jdp", "ldp-ucb")
"""The LinUCB-family agents whose confidence radius ``--agents`` measures (``radius`` = the constants column)."""


def run_agent_cell(name: str, family_name: str, dim: int, log2_t: int, epsilon: float, seed: int, constants: str,
                   n_fresh: int, batch_size: int = 64) -> dict:
    """Play a LinUCB-family agent for T rounds (``PrivLinCB-v0``, K = d) and measure its final confidence set.

    The agent runs with ``radius=constants`` (its own radius drives which rows it collects), then its
    width beta ||phi||_{V^{-1}} is checked on every arm of ``n_fresh`` fresh contexts, the same columns as
    :func:`run_cell` (``sigma_err`` with the empirical second moment of the fresh arms). ``mean_width``
    is in units of ||phi||_{V^{-1}}-scaled reward; ``beta`` is the radius itself.
    """
    import gymnasium as gym

    from privbandit.agents import make_agent
    from privbandit.sim import run

    t = 2 ** log2_t
    kwargs = dict(radius=constants, batch_size=batch_size)
    if name != "linucb":
        kwargs.update(epsilon=epsilon, delta=1.0 / t)
    agent = make_agent(name, **kwargs)
    env = gym.make("PrivLinCB-v0", n_arms=dim, dim=dim, horizon=t, family=family_name, max_episode_steps=t)
    ss = np.random.SeedSequence([seed, log2_t, dim, FAMILIES.index(family_name), UCB_AGENTS.index(name)])
    start = time.perf_counter()
    run(agent, env, t, seed=ss, log="geometric", points_per_octave=1)
    seconds = time.perf_counter() - start
    theta = env.unwrapped.theta
    env.reset(seed=int(ss.generate_state(1)[0]))                             # a fresh stream, same instance
    fresh = env.unwrapped.sample_batch(min(t, max(1, n_fresh // dim))).features  # (m, K, d): every arm counts
    env.close()
    width = (agent._scores(fresh) - fresh @ agent.theta_).ravel()
    x = fresh.reshape(-1, dim)
    err = x @ (agent.theta_ - theta)
    ok = np.abs(err) <= width
    nonzero = np.linalg.norm(x, axis=1) > 0
    diff = agent.theta_ - theta
    sigma = x.T @ x / len(x)
    return dict(oracle=name, model=agent.privacy.model, constants=constants, family=family_name, dim=dim,
                T=t, log2T=log2_t, epsilon=epsilon if name != "linucb" else math.nan, delta=1.0 / t, seed=seed,
                sigma_err=float(math.sqrt(max(diff @ sigma @ diff, 0.0))), l1_err=float(np.mean(np.abs(err))),
                coverage=float(np.mean(ok)),
                coverage_nonzero=float(np.mean(ok[nonzero])) if nonzero.any() else float("nan"),
                mean_width=float(np.mean(width)), beta=float(agent.beta_),
                needed_c=_needed_c(agent, err[nonzero], width[nonzero]), seconds=seconds)


def _needed_c(agent, err: np.ndarray, width: np.ndarray) -> float:
    """The c_width at which the practical radius covers 95% of these phi (its 95% quantile, solved for c).

    The practical radius is beta = width_multiplier (c_width sd + bias) (the agent's ``radius_parts_``),
    so phi is covered iff c_width >= (|err| / (width_multiplier ||phi||_{V^{-1}}) - bias) / sd.
    """
    if agent.radius != "practical" or agent.beta_ <= 0:
        return float("nan")
    sd, bias = agent.radius_parts_
    z = np.abs(err) / np.maximum(width / agent.beta_, 1e-300) / agent.width_multiplier
    return float((np.quantile(z, 0.95) - bias) / sd)


def _ints(s: str) -> list[int]:
    return [int(v) for v in s.split(",") if v.strip()]


def _floats(s: str) -> list[float]:
    return [float(v) for v in s.split(",") if v.strip()]


def summarize(df: pd.DataFrame) -> str:
    """The acceptance checks (see the module docstring) on whatever part of the grid is in ``df``."""
    lines = []
    cells = df.groupby(["oracle", "constants", "family", "dim", "log2T", "epsilon"], dropna=False)
    agg = cells.agg(sigma_err=("sigma_err", "mean"), l1_err=("l1_err", "mean"), coverage=("coverage", "mean"),
                    coverage_nonzero=("coverage_nonzero", "mean"), mean_width=("mean_width", "mean"),
                    seeds=("seed", "count")).reset_index()
    lines.append(agg.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    iw = agg[agg.oracle.str.startswith("iw-") & (agg.constants == "practical")]
    if len(iw):
        bad = iw[iw.coverage < 0.95]
        lines.append(f"\n[coverage] practical IW cells: {len(iw)}, with coverage < 0.95: {len(bad)} "
                     f"(min {iw.coverage.min():.3f}; min among phi != 0: {iw.coverage_nonzero.min():.3f})")
        if len(bad):
            lines.append(bad[["oracle", "family", "log2T", "epsilon", "coverage"]].to_string(index=False))
    ucb = df[df.oracle.isin(UCB_AGENTS)]
    if len(ucb):
        keys = ["oracle", "constants", "dim", "epsilon"]
        per = ucb.groupby(keys + ["family", "log2T"], dropna=False).agg(
            coverage=("coverage", "mean"), needed_c=("needed_c", "max"), beta=("beta", "mean")).reset_index()
        tab = per.groupby(keys, dropna=False).agg(min_coverage=("coverage", "min"), max_needed_c=("needed_c", "max"),
                                                  beta_min=("beta", "min"), beta_max=("beta", "max"))
        lines.append("\n[LinUCB radius: min over families and T of the mean coverage; max over cells of the c_width "
                     "a 95% coverage needs]\n" + tab.to_string(float_format=lambda v: f"{v:.4g}"))
    both = agg[agg.oracle.str.startswith("iw-")].pivot_table(
        index=["oracle", "family", "dim", "log2T", "epsilon"], columns="constants", values="mean_width")
    if {"practical", "theory"} <= set(both.columns):
        ratio = (both["theory"] / both["practical"]).dropna()
        at16 = ratio[ratio.index.get_level_values("log2T") == 16]
        sel = at16 if len(at16) else ratio
        lines.append(f"\n[width ratio theory/practical{' at T=2^16' if len(at16) else ''}] "
                     f"min {sel.min():.2f}, median {sel.median():.2f}, max {sel.max():.2f}")
    comp = agg[(agg.constants == "practical") & (agg.epsilon == 0.1) & agg.oracle.isin(["iw-regression-dp", "ssp"])]
    if comp.oracle.nunique() == 2:
        piv = comp.pivot_table(index=["family", "log2T"], columns="oracle", values="l1_err")
        piv["ratio_iw_over_ssp"] = piv["iw-regression-dp"] / piv["ssp"]
        lines.append("\n[L1 error at epsilon = 0.1: IW-Regression-DP vs SSP]\n"
                     + piv.to_string(float_format=lambda v: f"{v:.4g}"))
    sgd = agg[agg.oracle == "dp-sgd"]
    if sgd.dim.nunique() >= 2:
        piv = sgd.pivot_table(index=["family", "log2T", "epsilon"], columns="dim", values="sigma_err")
        lo, hi = min(piv.columns), max(piv.columns)
        piv[f"ratio_d{hi}_over_d{lo}"] = piv[hi] / piv[lo]
        lines.append("\n[DP-SGD Sigma-norm error vs dimension]\n" + piv.to_string(float_format=lambda v: f"{v:.4g}"))
    return "\n".join(lines)


def plot(df: pd.DataFrame, out: Path) -> None:
    """Error, L1 error and coverage against T, one panel per family and epsilon."""
    import matplotlib

    matplotlib.use("Agg")
    import seaborn as sns

    data = df.assign(label=df.oracle + " (" + df.constants + ")")
    for metric, log in (("sigma_err", True), ("l1_err", True), ("coverage", False), ("mean_width", True)):
        g = sns.relplot(data=data, x="T", y=metric, hue="label", col="family", row="epsilon", kind="line",
                        marker="o", errorbar=("ci", 95), height=2.8, aspect=1.1,
                        facet_kws=dict(sharey=False))
        g.set(xscale="log")
        if log:
            g.set(yscale="log")
        if metric == "coverage":
            for ax in g.axes.flat:
                ax.axhline(0.95, color="k", lw=0.8, ls="--")
        g.savefig(out / f"{metric}.png", dpi=110)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", choices=("jdp", "ldp", "all"), default="jdp")
    p.add_argument("--oracles", default=None, help="comma-separated names (overrides --model)")
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--dims", default="10")
    p.add_argument("--log2-t", default="12,13,14,15,16,17,18,19,20")
    p.add_argument("--epsilons", default="0.1,1")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--constants", default="practical", help="practical, theory or practical,theory")
    p.add_argument("--n-fresh", type=int, default=4000)
    p.add_argument("--agents", default=None,
                   help=f"comma-separated LinUCB-family agents ({', '.join(UCB_AGENTS)}): measure their radius "
                        "(constants = radius) after a run of T rounds with K = d arms, instead of the oracles")
    p.add_argument("--ucb-batch", type=int, default=64, help="policy update period of --agents (as the agents suite)")
    p.add_argument("--jobs", type=int, default=1, help="joblib workers")
    p.add_argument("--out", default="results/bench_regression")
    args = p.parse_args(argv)

    families = [f.strip() for f in args.families.split(",") if f.strip()]
    if args.agents:
        names = [n.strip() for n in args.agents.split(",") if n.strip()]
        unknown = set(names) - set(UCB_AGENTS)
        if unknown:
            raise SystemExit(f"--agents must be among {UCB_AGENTS}, got {sorted(unknown)}")
        cell = functools.partial(run_agent_cell, batch_size=args.ucb_batch)
        grid = [(n, f, d, lt, e, s, c)
                for n in names for f in families for d in _ints(args.dims) for lt in _ints(args.log2_t)
                for e in (_floats(args.epsilons) if n != "linucb" else [math.nan]) for s in range(args.seeds)
                for c in [c.strip() for c in args.constants.split(",")]]
    else:
        names = select_oracles(args.model, args.oracles)
        cell = run_cell
        grid = [(n, f, d, lt, e, s, c)
                for n in names for f in families for d in _ints(args.dims) for lt in _ints(args.log2_t)
                for e in _floats(args.epsilons) for s in range(args.seeds)
                for c in [c.strip() for c in args.constants.split(",")]
                if c == "practical" or "constants" in {fl.name for fl in dataclasses.fields(oracle_class(n))}]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"{len(grid)} cells: oracles={names} families={families}", file=sys.stderr)
    if args.jobs > 1:
        from joblib import Parallel, delayed

        rows = Parallel(n_jobs=args.jobs)(delayed(cell)(*g, args.n_fresh) for g in grid)
    else:
        rows = []
        for i, g in enumerate(grid):
            rows.append(cell(*g, args.n_fresh))
            if (i + 1) % 50 == 0:
                print(f"  {i + 1}/{len(grid)} cells", file=sys.stderr, flush=True)
    df = pd.DataFrame(rows)
    df.to_csv(out / "bench_regression.csv", index=False)
    plot(df, out)
    report = summarize(df)
    (out / "summary.txt").write_text(report + "\n")
    print(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
