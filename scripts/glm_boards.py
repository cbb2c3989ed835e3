"""Which agent to use on a GLM bandit: the paper suite's GLM boards, summed up from a results folder.

For every GLM board of a results folder (env labels ``glm-...``: ``PrivGLMCB-v0`` with the logistic link at a
slope ``-sS``), per privacy model at epsilon = 1 (or the board's largest epsilon), one row: uniform play's regret,
the best non-private agent, the best private agent with its regret as a fraction of uniform play's and as a
multiple of the best non-private agent's, and the best private agent that models the link (a GLM agent) beside the
best private linear one (their ratio: below 1 when modelling the link pays). The issue's targets are printed
beside each ratio (joint DP: <= 0.1x uniform and <= 3x the best non-private agent; local DP: <= 0.5x uniform),
met or missed, from the numbers in the row. Means over seeds of the cumulative regret at the horizon.

Usage::

    privbandit bench --suite paper --out DIR            # the stored results are installed; or run them
    python scripts/glm_boards.py DIR                     # markdown to stdout

References
----------
Source paper, `def:GLM`, `appdx:proof-JDP-gen-linear`, `tab:comp`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from privbandit.report.leaderboard import read_results
from privbandit.report.tables import final_regret, format_number, markdown_table

GLM_AGENT_PREFIXES = ("glm-ucb", "gloc", "elim-glm-", "ldp-glm-")
"""Labels of agents that model the link (the rest of a GLM board's learning agents fit a linear model)."""

TARGETS = {"jdp": (0.1, 3.0), "ldp": (0.5, None)}
"""Per privacy model: the best private agent's largest regret as a fraction of uniform play's, and as a multiple
of the best non-private agent's (None: no target)."""


def models_the_link(label: str) -> bool:
    """Whether an agent label is a GLM agent's (:data:`GLM_AGENT_PREFIXES`)."""
    return label.startswith(GLM_AGENT_PREFIXES)


def _verdict(value: float, limit: float | None) -> str:
    if limit is None:
        return format_number(value)
    return f"{format_number(value)} ({'met' if value <= limit else 'missed'}: <= {limit:g})"


def board_rows(final: pd.DataFrame) -> pd.DataFrame:
    """One row per GLM board and private model (see the module docstring) from :func:`final_regret`'s table."""
    rows = []
    glm = final[final["env"].str.startswith("glm-")]
    for (env, horizon), board in glm.groupby(["env", "horizon"], sort=True):
        public = board[board["privacy_model"] == "none"]
        uniform = public.loc[public["agent"] == "uniform", "mean"]
        learners = public[public["agent"] != "uniform"]
        if uniform.empty or learners.empty:
            continue
        u = float(uniform.iloc[0])
        best_public = learners.loc[learners["mean"].idxmin()]
        for model, private in board[board["privacy_model"] != "none"].groupby("privacy_model", sort=True):
            eps = 1.0 if (private["epsilon"] == 1.0).any() else float(private["epsilon"].max())
            private = private[private["epsilon"] == eps]
            best = private.loc[private["mean"].idxmin()]
            is_glm = private["agent"].map(models_the_link)
            glm_best = private[is_glm].loc[private[is_glm]["mean"].idxmin()] if is_glm.any() else None
            lin_best = private[~is_glm].loc[private[~is_glm]["mean"].idxmin()] if (~is_glm).any() else None
            of_uniform, of_public = TARGETS.get(model, (None, None))
            rows.append({
                "board": env if glm["horizon"].nunique() == 1 else f"{env}, T={horizon}",
                "privacy": f"{model}, eps={eps:g}", "uniform": format_number(u),
                "best non-private": f"{best_public['agent']} {format_number(best_public['mean'])}",
                "best private": f"{best['agent']} {format_number(best['mean'])}",
                "/ uniform": _verdict(best["mean"] / u, of_uniform),
                "/ best non-private": _verdict(best["mean"] / best_public["mean"], of_public),
                "best private GLM agent / best private linear": "" if glm_best is None or lin_best is None else
                f"{glm_best['agent']} / {lin_best['agent']} = {format_number(glm_best['mean'] / lin_best['mean'])}"})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", type=Path, help="a results folder of privbandit bench (its results.csv)")
    args = p.parse_args(argv)
    if not (args.results / "results.csv").is_file():
        p.error(f"{args.results} has no results.csv (write one with privbandit bench --suite paper --out DIR)")
    rows = board_rows(final_regret(read_results(args.results)))
    if rows.empty:
        print(f"glm_boards.py: no GLM board (env glm-...) with uniform play and a learning agent in {args.results}",
              file=sys.stderr)
        return 1
    print(markdown_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
