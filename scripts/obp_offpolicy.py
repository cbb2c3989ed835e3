"""Open Bandit Pipeline's own IPW, DM and DR on a privbandit log, against the true policy values.

A private agent (``squarecb-jdp-iw``, epsilon = 1) plays ``PrivLinCB-v0`` and its bandit feedback is logged
(``collect_feedback(..., contexts=True)``). OBP's ``OffPolicyEvaluation`` then estimates the value of three
target policies (uniform, the optimal arm, the worst arm) with IPW, DM and DR:

- DM and DR with privbandit's reward model (``BanditFeedback.estimated_rewards``: cross-fitted ridge on the
  chosen arms' features);
- DM with OBP's own ``RegressionModel`` (a ridge on OBP's layout ``[context, action_context[a]]``), for
  contrast: it cannot express a reward linear in the chosen arm's features.

OBP is not a privbandit dependency (its install pulls torch; OBP 0.5.7 declares Python < 3.11, so on 3.11 it
goes in with ``pip install --no-deps --ignore-requires-python obp==0.5.7`` and then its imports' packages).
The script logs the run with the privbandit Python running it, saves the arrays to a temporary ``.npz`` and
runs its OBP half (``--evaluate``, which imports only numpy, scikit-learn and obp) with ``--obp-python``::

    python scripts/obp_offpolicy.py --obp-python /path/to/obp-venv/bin/python

It writes the measured numbers, the setup, OBP's version and the command to ``--out`` (default
``docs/data/obp_offpolicy.json``, committed: OBP cannot run where the docs are built), and the docs build renders
that file as the guide's table (``scripts/make_docs_interop.py``). Bad arguments exit with code 2 and one line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

OUT = Path("docs/data/obp_offpolicy.json")
TARGETS = ("uniform", "optimal", "worst")


def collect(out: Path, horizon: int, seed: int) -> dict:
    """Log the private agent's run and save what OBP needs to ``out``; returns the setup and true values."""
    import gymnasium as gym

    from privbandit.agents import make_agent
    from privbandit.sim import collect_feedback

    kwargs = dict(n_arms=5, dim=5, family="isotropic")
    env = gym.make("PrivLinCB-v0", horizon=horizon, **kwargs)
    agent = make_agent("squarecb-jdp-iw", epsilon=1.0, delta=1e-5)
    fb = collect_feedback(agent, env, seed=seed, contexts=True)
    n, k, m = fb.n_rounds, fb.n_actions, fb.expected_reward
    targets = {"uniform": np.full((n, k), 1 / k), "optimal": np.eye(k)[m.argmax(axis=1)],
               "worst": np.eye(k)[m.argmin(axis=1)]}
    feedback = fb.to_obp()
    np.savez(out, **{key: feedback[key] for key in ("context", "action_context", "action", "reward", "pscore")},
             q_hat=fb.estimated_rewards(n_folds=5, ridge=1.0, rng=seed),
             **{f"pi_{name}": p[:, :, None] for name, p in targets.items()},
             truth=np.array([fb.policy_value(targets[name]) for name in TARGETS]))
    return {"env": "PrivLinCB-v0", "env_kwargs": {**kwargs, "horizon": horizon},
            "agent": "squarecb-jdp-iw", "agent_kwargs": {"epsilon": 1.0, "delta": 1e-5}, "seed": seed,
            "min_pscore": float(fb.pscore.min()),
            "truth": {name: float(fb.policy_value(targets[name])) for name in TARGETS}}


# --- the OBP half (the guide shows this function) ---
def evaluate(path: Path) -> dict:
    """Run OBP on the saved log (in OBP's Python); returns OBP's version and estimates per target policy."""
    import obp
    from obp.ope import DirectMethod, DoublyRobust, InverseProbabilityWeighting, OffPolicyEvaluation, RegressionModel
    from sklearn.linear_model import Ridge

    data = np.load(path)
    feedback = {key: data[key] for key in ("context", "action_context", "action", "reward", "pscore")}
    feedback["position"] = None
    n_actions = data["action_context"].shape[0]
    ope = OffPolicyEvaluation(bandit_feedback=feedback,
                              ope_estimators=[InverseProbabilityWeighting(), DirectMethod(), DoublyRobust()])
    theirs = RegressionModel(n_actions=n_actions, action_context=feedback["action_context"], base_model=Ridge(),
                             fitting_method="normal").fit_predict(
        context=feedback["context"], action=feedback["action"], reward=feedback["reward"], n_folds=5,
        random_state=0)
    estimates = {}
    for name in TARGETS:
        pi_e = data[f"pi_{name}"]
        ours = ope.estimate_policy_values(action_dist=pi_e, estimated_rewards_by_reg_model=data["q_hat"])
        dm_theirs = DirectMethod().estimate_policy_value(action_dist=pi_e, estimated_rewards_by_reg_model=theirs)
        estimates[name] = {"ipw": float(ours["ipw"]), "dm": float(ours["dm"]), "dr": float(ours["dr"]),
                           "dm_obp_ridge": float(dm_theirs)}
    return {"obp_version": obp.__version__, "obp_python": sys.version.split()[0], "estimates": estimates}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--obp-python", type=Path, help="a Python with obp installed (runs the OBP half)")
    p.add_argument("--horizon", type=int, default=2 ** 14, help="rounds logged (default 2^14)")
    p.add_argument("--seed", type=int, default=0, help="the run's seed (default 0)")
    p.add_argument("--out", type=Path, default=OUT, help=f"the JSON file written (default {OUT})")
    p.add_argument("--evaluate", type=Path, help=argparse.SUPPRESS)  # the OBP half, on a saved log
    args = p.parse_args(argv)
    if args.evaluate is not None:
        print(json.dumps(evaluate(args.evaluate)))
        return 0
    if args.obp_python is None or not args.obp_python.exists():
        p.error("--obp-python must be the path of a Python that has obp installed")
    if args.horizon < 10:
        p.error("--horizon must be at least 10")
    if not args.out.parent.is_dir():
        p.error(f"--out: the folder {args.out.parent} does not exist")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.npz"
        setup = collect(log, args.horizon, args.seed)
        done = subprocess.run([str(args.obp_python), __file__, "--evaluate", str(log)], capture_output=True,
                              text=True, check=False)
    if done.returncode != 0:
        print(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "the OBP half failed",
              file=sys.stderr)
        return 1
    import privbandit

    obp_half = json.loads(done.stdout)
    command = (f"python scripts/obp_offpolicy.py --obp-python OBP_PYTHON --horizon {args.horizon} "
               f"--seed {args.seed} --out {args.out.as_posix()}")
    record = {"command": command,
              "obp_python": f"a Python {obp_half['obp_python']} with obp {obp_half['obp_version']} installed",
              "obp_version": obp_half["obp_version"],
              "logged_with": f"privbandit {privbandit.__version__}, numpy {np.__version__}",
              **setup, "estimates": obp_half["estimates"]}
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
