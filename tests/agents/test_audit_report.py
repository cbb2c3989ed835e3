"""privbandit audit: the futility stop of the final runs, the progress bars and a report a reader can follow."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from privbandit import cli
from privbandit.agents.audit import FUTILITY_BETA, LOOK_EVERY, futile

SMALL = ["--agent", "elim-jdp-ucb", "--epsilon", "1", "--agent-kwargs", '{"first_epoch": 1}', "--horizon", "8",
         "--draws", "300", "--pilot-draws", "16", "--jobs", "1"]
"""An audit of seconds with a release inside its stream, in this process."""

EPS, DELTA, ALPHA, N = 1.0, 1e-5, 0.05, 6000


def _stops(p: float, q: float, beta: float, sequences: int, seed: int) -> tuple[int, int, int]:
    """Of ``sequences`` simulated final runs (Bernoulli sets with probabilities p under P and q under Q, N runs,
    looks every LOOK_EVERY): how many the futility stop ended, how many of those the full N runs refute with
    right Clopper-Pearson bounds (lower bound on P below p, upper bound on Q above q), and how many such
    refutations the full runs make."""
    from privbandit.privacy.audit import clopper_pearson

    rng = np.random.default_rng(seed)
    looks = np.arange(LOOK_EVERY, N, LOOK_EVERY)
    hits_p, hits_q = rng.random((sequences, N)) < p, rng.random((sequences, N)) < q
    at_p, at_q = np.cumsum(hits_p, axis=1)[:, looks - 1], np.cumsum(hits_q, axis=1)[:, looks - 1]
    stop = np.stack([futile(at_p[:, i], at_q[:, i], int(m), N, EPS, DELTA, ALPHA, beta / len(looks))
                     for i, m in enumerate(looks)], axis=1).any(axis=1)
    x_p, x_q = hits_p.sum(axis=1), hits_q.sum(axis=1)
    lo_p, _ = clopper_pearson(x_p, N, ALPHA / 2)
    _, up_q = clopper_pearson(x_q, N, ALPHA / 2)
    earned = (lo_p - math.e * up_q > DELTA) & (lo_p <= p) & (up_q >= q)
    return int(stop.sum()), int((stop & earned).sum()), int(earned.sum())


def test_the_futility_stop_never_ends_a_leak_the_full_runs_see():
    """A set leaking delta(1) ~ 0.035 (p = 0.09, q = 0.02: the quarter-noise twin's size of leak) is never
    stopped; one at the edge of what 6000 runs refute (p = 0.07, q = 0.02) may be stopped where P's frequency is
    too low to refute, but no refutation the full runs earn (right Clopper-Pearson bounds) is lost. A stop on
    the looks' point estimates (each look's bounds at 1/2: beta = 23 over the 23 looks) loses many: the test can
    fail."""
    assert _stops(0.09, 0.02, FUTILITY_BETA, 400, 1)[:2] == (0, 0)
    stopped, lost, earned = _stops(0.07, 0.02, FUTILITY_BETA, 400, 2)
    assert lost == 0 and earned > 50, (stopped, lost, earned)
    looks = math.ceil(N / LOOK_EVERY) - 1
    assert _stops(0.07, 0.02, 0.999 * looks, 400, 2)[1] > 10 and _stops(0.09, 0.02, 0.999 * looks, 400, 1)[1] > 10


def test_the_futility_stop_ends_the_runs_of_a_set_without_leak_early():
    """A deterministic honest agent (every run in the set on both streams), a common set with the same law on
    both (p = q = 0.3): the stop fires at the first look; a set rare under P (one in 2000) too rare for 6000 runs
    to refute stops before the end."""
    beta = FUTILITY_BETA / (math.ceil(N / LOOK_EVERY) - 1)
    assert futile(LOOK_EVERY, LOOK_EVERY, LOOK_EVERY, N, EPS, DELTA, ALPHA, beta)
    assert futile(75, 75, LOOK_EVERY, N, EPS, DELTA, ALPHA, beta)
    assert not futile(25, 5, LOOK_EVERY, N, EPS, DELTA, ALPHA, beta)  # p = 0.1, q = 0.02: a leak, go on
    assert any(futile(m // 2000, m // 2000, m, N, EPS, DELTA, ALPHA, beta) for m in range(LOOK_EVERY, N, LOOK_EVERY))
    # the same rare set with no runs of Q in it keeps running: 6000 runs could still refute it
    assert not futile(1, 0, 1000, N, EPS, DELTA, ALPHA, beta)


@pytest.mark.slow
def test_a_stopped_audit_says_how_many_runs_it_made_and_a_refuted_one_runs_them_all():
    """The honest agent's final runs stop at a look (its set's delta is confidently below the claim); its
    twin with 1/1000 of the noise (planted through its oracle's ``mechanism`` seam) runs all 600 and is refuted."""
    from conftest import twin_factory

    from privbandit.agents import register_agent
    from privbandit.agents.audit import audit_agent

    small = dict(agent_kwargs={"first_epoch": 1}, max_horizon=8, watch=4, pilot_draws=16, n_draws=600)
    honest = audit_agent("elim-jdp-ucb", 1.0, **small)
    assert not honest.refuted and honest.runs_made < 600 and honest.runs_made % LOOK_EVERY == 0
    assert f"{honest.runs_made} of 600 runs per stream: stopped" in honest.lines()[2]
    register_agent("elim-jdp-ucb-twin", twin_factory("elim-jdp-ucb", 1000.0), private=True)
    planted = audit_agent("elim-jdp-ucb-twin", 1.0, **small)
    assert planted.refuted and planted.runs_made == 600 and "600 runs per stream, T" in planted.lines()[2]


@pytest.mark.slow
def test_the_report_has_one_verdict_its_meaning_and_no_contradicting_line(capsys):
    """One verdict line followed by what it means; no pilot line that says more runs would refute a claim the
    verdict does not refute; a delta bound never below 0; the largest refutable epsilon said in words."""
    assert cli.main(["audit", *SMALL, "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    verdicts = [i for i, line in enumerate(lines) if line.startswith("verdict:")]
    assert len(verdicts) == 1 and lines[verdicts[0]] == "verdict: not refuted (a lower bound, never a proof of privacy)"
    assert lines[verdicts[0] + 1].startswith("meaning: no evidence that the agent leaks more than epsilon=1")
    text = "\n".join(lines)
    assert "would refute" not in text and not re.search(r"delta lower bound[^:]*: -", text)
    assert "delta lower bound at the claimed epsilon: 0 (no evidence of any delta at epsilon=1)" in text
    assert re.search(r"detectable: with 300 runs per stream no epsilon above 4\.39 can be refuted \(even an agent "
                     r"that publishes every user's data", text)


@pytest.mark.slow
@pytest.mark.parametrize("flag", [[], ["--no-progress"]])
def test_the_progress_bars_go_to_stderr_unless_no_progress(flag, capsys):
    assert cli.main(["audit", *SMALL, *flag]) == 0
    captured = capsys.readouterr()
    stages = ("audit: contract stage", "audit: offset pilots", "audit: selection pilots", "audit: final runs")
    if flag:
        assert captured.err == ""
    else:
        assert all(stage in captured.err for stage in stages), captured.err
    assert not any(stage in captured.out for stage in stages) and "verdict: not refuted" in captured.out


@pytest.mark.slow
def test_quick_states_its_power(capsys):
    """--quick runs 1500 final runs per stream unless --draws is given, and the report says what they can
    refute."""
    args = [a for a in SMALL if a not in ("--draws", "300")]
    assert cli.main(["audit", *args, "--quick", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "detectable: with 1500 runs per stream no epsilon above 6" in out


@pytest.mark.slow
def test_worker_processes_give_the_same_report(capsys):
    """--jobs 2 plays the runs on two loky workers (each run draws from its own seed): the same report, line for
    line, as in this process."""
    reports = []
    for jobs in ("1", "2"):
        assert cli.main(["audit", *SMALL[:-2], "--jobs", jobs, "--no-progress"]) == 0
        reports.append(capsys.readouterr().out)
    assert reports[0] == reports[1] and "verdict: not refuted" in reports[0]
