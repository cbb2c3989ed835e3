"""The oracle contract as a public checker: :func:`check_oracle` runs small named checks on any oracle.

Each check is a public function (:data:`ORACLE_CHECKS`) that fits the oracle on :func:`synthetic_rows` and raises
:class:`ContractError`, naming itself and what failed, at the first breach. Passing is evidence, not proof: the
checks see one small dataset and a few seeds. The statistical quality of an oracle (its widths cover the truth)
is the benchmark's business, not the contract's.

References
----------
Source paper, `alg:batch-cb-meta` (one oracle per epoch, the pair (f_hat_j, b_j)), `def:JDP`, `def:LDP`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import check_int
from ..privacy.replay import ReleaseTape, ReplayMismatch, sensitivity_ratio
from .base import Estimate, Oracle

__all__ = [
    "ContractError", "ORACLE_CHECKS", "check_bad_input_errors", "check_deterministic_for_a_seed",
    "check_estimate_holds_only_released_values", "check_fit_shapes", "check_ledger_within_budget",
    "check_oracle", "check_releases_within_sensitivity", "check_result_is_final", "check_streaming_equals_one_shot",
]

#: Relative slack of a ledger's worst epsilon against the spec (floating-point composition).
BUDGET_RTOL = 1e-9

#: The ragged chunk sizes of :func:`check_streaming_equals_one_shot` (the rest of the rows follow in one add).
CHUNKS = (1, 1, 5, 17, 2, 30)


class ContractError(AssertionError):
    """A contract check failed: the object checked breaks the interface it claims.

    An ``AssertionError`` (as Gymnasium's ``check_env`` raises, and as pytest reports a failed test), not a
    ``ValueError``: the caller's arguments were fine, the oracle or agent under check is at fault. It is
    raised explicitly, so ``python -O`` does not remove it.

    The oracle contract (:func:`check_oracle`) and the agent contract (:func:`privbandit.agents.check_agent`)
    raise it, so it lives here, in the lower of the two rooms (agents import oracles, never the reverse), and
    ``privbandit.agents`` hands it on beside ``check_agent``.

    Parameters
    ----------
    check : str
        The name of the check that failed (e.g. ``"check_streaming_equals_one_shot"``).
    message : str
        What failed.
    """

    def __init__(self, check: str, message: str) -> None:
        super().__init__(f"{check}: {message}")
        self.check = check


def synthetic_rows(dim: int, n: int, rng: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """A contract dataset: features (n, d) with norms in [0, 1), many short; rewards (n,) of +-1.

    The rewards follow a linear model with theta = (1, ..., 1) / sqrt(d): P(y = 1) = (1 + <phi, theta>) / 2.
    """
    gen = np.random.default_rng(rng)
    x = gen.standard_normal((n, dim))
    norms = np.maximum(np.linalg.norm(x, axis=1), 1e-300)
    x *= (gen.random(n) ** 2 / norms)[:, None]
    theta = np.ones(dim) / np.sqrt(dim)
    y = np.where(gen.random(n) < 0.5 * (1 + x @ theta), 1.0, -1.0)
    return x, y


def _fit(oracle: Oracle, x: np.ndarray, y: np.ndarray, seed: Any, chunks: tuple[int, ...] = ()) -> tuple:
    """Start a fit for len(x) rows, feed ``chunks`` rows at a time then the rest, return (fit, estimate)."""
    fit = oracle.start(x.shape[0], dim=x.shape[1], rng=seed)
    pos = 0
    for c in chunks:
        fit.add(x[pos:pos + c], y[pos:pos + c])
        pos += c
    if pos < x.shape[0]:
        fit.add(x[pos:], y[pos:])
    return fit, fit.result()


def _same_estimate(a: Estimate, b: Estimate, *, rtol: float = 0.0, atol: float = 0.0) -> bool:
    return (np.allclose(a.theta, b.theta, rtol=rtol, atol=atol)
            and np.allclose(a.width_matrix, b.width_matrix, rtol=rtol, atol=atol)
            and bool(np.isclose(a.width_scale, b.width_scale, rtol=rtol, atol=atol)))


def _same_value(a: Any, b: Any) -> bool:
    """Exact equality of nested diagnostics (dicts, lists, arrays, floats; NaN equals NaN)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(_same_value(u, v) for u, v in zip(a, b))
    if isinstance(a, (np.ndarray, float, np.floating)):
        return np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_nan=True)
    return bool(a == b)


def check_fit_shapes(oracle: Oracle, *, dim: int = 3, n_rows: int = 96, rng: int = 0) -> None:
    """``start``/``add``/``result`` give an Estimate of dimension ``dim`` whose predictions have the right shapes.

    For fresh features (7, d) the mean, width and both bounds have shape (7,), for one row (d,) shape ();
    theta and the width are finite, the width >= 0 and lower <= upper.
    """
    name = "check_fit_shapes"
    x, y = synthetic_rows(dim, n_rows, rng)
    try:
        _, est = _fit(oracle, x, y, rng)
    except ValueError as exc:
        raise ContractError(name, f"fitting {n_rows} valid rows of dimension {dim} raised {exc!r} (pass the "
                                  "dim= the oracle supports)") from exc
    if not isinstance(est, Estimate):
        raise ContractError(name, f"result() must return an Estimate, got {type(est).__name__}")
    if est.theta.shape != (dim,) or est.width_matrix.shape != (dim, dim):
        raise ContractError(name, f"theta {est.theta.shape} and width_matrix {est.width_matrix.shape} must be "
                                  f"({dim},) and ({dim}, {dim})")
    fresh, _ = synthetic_rows(dim, 7, [rng, 1])
    lo, hi = est.bounds(fresh)
    shapes = {"mean": est.mean(fresh).shape, "width": est.width(fresh).shape, "lower": lo.shape, "upper": hi.shape}
    wrong = {k: s for k, s in shapes.items() if s != (7,)}
    one = {"mean": est.mean(fresh[0]).shape, "width": est.width(fresh[0]).shape}
    wrong.update({f"{k} of one row": s for k, s in one.items() if s != ()})
    if wrong:
        raise ContractError(name, f"predictions on features (7, {dim}) must have shape (7,), on one row (), "
                                  f"got {wrong}")
    width = est.width(fresh)
    if not (np.all(np.isfinite(est.theta)) and np.all(np.isfinite(width))):
        raise ContractError(name, f"theta {est.theta} and the widths {width} must be finite")
    if np.any(width < 0) or np.any(lo > hi):
        raise ContractError(name, f"widths must be >= 0 and lower <= upper, got widths {width}")


def check_result_is_final(oracle: Oracle, *, dim: int = 3, n_rows: int = 96, rng: int = 0) -> None:
    """``result()`` returns the same Estimate when called again, and a finished fit refuses rows (RuntimeError).
    """
    name = "check_result_is_final"
    x, y = synthetic_rows(dim, n_rows, rng)
    fit = oracle.start(n_rows + 1, dim=dim, rng=rng)
    fit.add(x, y)
    est = fit.result()
    if fit.result() is not est:
        raise ContractError(name, "a second result() must return the same Estimate object (no second release)")
    try:
        fit.add(x[:1], y[:1])
    except RuntimeError:
        return
    raise ContractError(name, "add() after result() must raise RuntimeError (start a new fit per epoch)")


def check_deterministic_for_a_seed(oracle: Oracle, *, dim: int = 3, n_rows: int = 96, rng: int = 0) -> None:
    """Two fits with the same ``rng`` seed give the same Estimate; for a private oracle another seed another one.
    """
    name = "check_deterministic_for_a_seed"
    x, y = synthetic_rows(dim, n_rows, rng)
    seed = np.random.SeedSequence(rng)
    _, a = _fit(oracle, x, y, seed)
    _, b = _fit(oracle, x, y, seed)
    if not _same_estimate(a, b):
        raise ContractError(name, "two fits of the same rows with the same rng seed gave different Estimates: "
                                  "draw all randomness from the rng given to start()")
    if oracle.privacy.is_private:
        _, c = _fit(oracle, x, y, seed.spawn(1)[0])
        if _same_estimate(a, c):
            raise ContractError(name, f"a {oracle.privacy.model} oracle gave the same Estimate for two rng seeds: "
                                      "is its noise drawn from the rng given to start()?")


def check_streaming_equals_one_shot(oracle: Oracle, *, dim: int = 3, n_rows: int = 96, rng: int = 0) -> None:
    """Rows fed in ragged chunks (:data:`CHUNKS`, then the rest) give the Estimate of one ``add`` (rtol 1e-7).
    """
    x, y = synthetic_rows(dim, n_rows, rng)
    _, one = _fit(oracle, x, y, rng)
    _, many = _fit(oracle, x, y, rng, chunks=CHUNKS)
    if not _same_estimate(one, many, rtol=1e-7, atol=1e-9):
        raise ContractError("check_streaming_equals_one_shot",
                            f"rows added in chunks {CHUNKS} + rest gave theta {many.theta}, one add gave {one.theta} "
                            "(widths may differ too): a fit must not depend on how its rows are split")


def check_ledger_within_budget(oracle: Oracle, *, dim: int = 3, n_rows: int = 96, rng: int = 0) -> None:
    """The fit's ledger charges every row, touches no record beyond the fit and stays within the oracle's spec.

    A non-private oracle records nothing; a private one records at least one release, every row 0 .. n-1
    has a positive composed epsilon, and the worst record's epsilon at the spec's delta is at most the
    spec's epsilon (relative slack :data:`BUDGET_RTOL`). A local-DP oracle records only local releases.
    """
    name = "check_ledger_within_budget"
    x, y = synthetic_rows(dim, n_rows, rng)
    fit, _ = _fit(oracle, x, y, rng)
    spec, ledger = oracle.privacy, fit.ledger
    if ledger_within_spec(name, "oracle", "records", spec, ledger, n_rows):
        free = [i for i in range(n_rows) if ledger.record_epsilon(i, spec.delta) <= 0]
        if free:
            raise ContractError(name, f"rows {free[:5]} were used but no release charged them")


def ledger_within_spec(name: str, owner: str, unit: str, spec: Any, ledger: Any, n: int) -> bool:
    """The ledger part of the contract an oracle and an agent share; False for a non-private ``spec``.

    A non-private owner records no release; a private one records at least one, each touching ``unit``
    (records or rounds) in ``[0, n)``, only local releases under local DP, and its worst user's epsilon at
    the spec's delta in ``(0, epsilon]`` (relative slack :data:`BUDGET_RTOL`).

    Raises
    ------
    ContractError
        Naming the check ``name`` and what was wrong.
    """
    if not spec.is_private:
        if ledger.releases:
            raise ContractError(name, f"a non-private {owner} recorded {len(ledger.releases)} release(s)")
        return False
    if not ledger.releases:
        raise ContractError(name, f"a {spec.model} {owner} recorded no release: its privacy cannot be verified")
    outside = [r for r in ledger.releases if not 0 <= r.start < r.stop <= n]
    if outside:
        raise ContractError(name, f"releases must touch {unit} in [0, {n}), got {outside[0]}")
    if spec.model == "ldp" and any(r.kind != "local" for r in ledger.releases):
        raise ContractError(name, f"a local-DP {owner} recorded a central release: the server saw raw rows")
    spent = ledger.guarantee(spec.delta)
    if not 0 < spent <= spec.epsilon * (1 + BUDGET_RTOL):
        raise ContractError(name, f"the worst user spent epsilon={spent:.6g} at delta={spec.delta:g}; it must be in "
                                  f"(0, {spec.epsilon:g}] (the spec)")
    return True


def neighbour_pair(x: np.ndarray, y: np.ndarray, row: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The dataset (or stream) D and its neighbour D' that differ from ``(x, y)`` only at ``row``: (x1, y1, x2, y2).

    The row has feature e_1 and reward +1 in D, -e_d / 2 and -1 in D' (every arm's, for a stream (T, K, d),
    (T, K)): the change flips the reward and moves the feature across the ball, changing its direction, its
    norm and the sign of each coordinate's product with the reward (also in one dimension)."""
    d = x.shape[-1]
    x1, y1, x2, y2 = x.copy(), y.copy(), x.copy(), y.copy()
    x1[row], y1[row] = np.eye(d)[0], 1.0
    x2[row], y2[row] = -0.5 * np.eye(d)[-1], -1.0
    return x1, y1, x2, y2


def replayed_pair(play_d: Callable[[], Any], play_prime: Callable[[], Any], row: int, check: str,
                  unit: str) -> tuple:
    """``play_d()`` recording every release, then ``play_prime()`` (its neighbour) replaying them:
    (row, tape of D, result on D, tape of D', result on D'). A ContractError naming ``check`` if the neighbour
    made other releases (number or shapes)."""
    with ReleaseTape() as tape:
        a = play_d()
    try:
        with ReleaseTape(replay=tape) as again:
            b = play_prime()
    except ReplayMismatch as exc:
        raise ContractError(check, f"changing {unit} {row} changed the releases ({exc}): what is released, and "
                                   "when, must not depend on the data") from exc
    if len(again) != len(tape):
        raise ContractError(check, f"changing {unit} {row} changed the number of releases ({len(tape)} vs "
                                   f"{len(again)})")
    return row, tape, a, again, b


def replayed_neighbours(play: Callable[[np.ndarray, np.ndarray], Any], x: np.ndarray, y: np.ndarray,
                        rows: list[int], check: str, owner: str, unit: str) -> list[tuple]:
    """For each ``row`` (a row or a user): ``play(x, y)`` on the dataset (or stream) D changed at that row
    (:func:`neighbour_pair`), recording every release, then on its neighbour D' replaying them (:func:`replayed_pair`);
    (row, tape of D, result on D, tape of D', result on D') for each row. A ContractError naming ``check`` if nothing
    was released or the neighbour made other releases. Each pair is played whole, from the first row."""
    pairs = []
    for row in rows:
        x1, y1, x2, y2 = neighbour_pair(x, y, row)
        pair = replayed_pair(lambda: play(x1, y1), lambda: play(x2, y2), row, check, unit)  # noqa: B023 (called here)
        if not len(pair[1]):
            raise ContractError(check, f"the {owner} released nothing through privbandit's mechanisms: a private "
                                       f"{owner} must release through them (privbandit.privacy) to be checked")
        pairs.append(pair)
    return pairs


def releases_within_sensitivity(check: str, unit: str, pairs: list[tuple], *, local: bool) -> None:
    """Every release's exact inputs in the pairs of :func:`replayed_neighbours` differ by at most its mechanism's
    declared sensitivity (:func:`~privbandit.privacy.replay.sensitivity_ratio` <= 1; per row if ``local``)."""
    for row, tape, _, again, _ in pairs:
        for k, (mech, a, b) in enumerate(zip(tape.mechanisms, tape.inputs, again.inputs)):
            ratio = sensitivity_ratio(mech, a, b, local=local)
            if ratio > 1 + BUDGET_RTOL:
                raise ContractError(check, f"changing {unit} {row} moved release {k}'s input by {ratio:.4g} times "
                                           f"the declared sensitivity of its {type(mech).__name__}: the noise is "
                                           "calibrated to a sensitivity the statistic does not have")


def _replayed_neighbours(oracle: Oracle, dim: int, n_rows: int, rng: int, check: str) -> list[tuple]:
    """:func:`replayed_neighbours` of two fits, for the first row of the first and of the last stage."""
    x, y = synthetic_rows(dim, n_rows, rng)
    last_stage = int(oracle.start(n_rows, dim=dim).stage_starts[-2])
    return replayed_neighbours(lambda xs, ys: _fit(oracle, xs, ys, rng)[1], x, y,
                               sorted({0, min(last_stage, n_rows - 1)}), check, "oracle", "row")


def check_releases_within_sensitivity(oracle: Oracle, *, dim: int = 3, n_rows: int = 96, rng: int = 0) -> None:
    """Every release of a private fit moves by at most its mechanism's declared sensitivity when one row changes.

    Fit D, recording every release's exact input, and its neighbour D' (one row moved across the ball, its
    reward flipped; the first row of the first and of the last stage) handed D's releases, as adaptive
    composition conditions on them. For each release the inputs of the two fits may differ by at most the
    declared sensitivity (:func:`~privbandit.privacy.replay.sensitivity_ratio` <= 1; per row for a local
    oracle). A breach means the noise is too small for the data: the ledger, which trusts the declared
    sensitivity, cannot see it. Nothing to check for a non-private oracle.
    """
    name = "check_releases_within_sensitivity"
    if oracle.privacy.is_private:
        releases_within_sensitivity(name, "row", _replayed_neighbours(oracle, dim, n_rows, rng, name),
                                    local=oracle.privacy.model == "ldp")


def check_estimate_holds_only_released_values(oracle: Oracle, *, dim: int = 3, n_rows: int = 96,
                                              rng: int = 0) -> None:
    """A private Estimate is a function of the releases and public parameters only (replayed neighbours).

    The fits of :func:`check_releases_within_sensitivity`: given D's releases, the neighbour D' must make the
    same number of releases of the same shapes and give the same Estimate (theta, width and ``info``).
    Nothing to check for a non-private oracle.
    """
    name = "check_estimate_holds_only_released_values"
    if not oracle.privacy.is_private:
        return
    for row, _, a, _, b in _replayed_neighbours(oracle, dim, n_rows, rng, name):
        if not _same_estimate(a, b):
            raise ContractError(name, f"given the same releases, changing row {row} changed theta or the width: "
                                      "the Estimate reads data that was not released")
        differ = sorted(k for k in set(a.info) | set(b.info) if not _same_value(a.info.get(k), b.info.get(k)))
        if differ:
            raise ContractError(name, f"given the same releases, changing row {row} changed info {differ}: a "
                                      "private Estimate may carry only released values and public parameters")


def check_bad_input_errors(oracle: Oracle, *, dim: int = 3, n_rows: int = 96, rng: int = 0) -> None:
    """``add`` refuses NaN and inf, wrong shapes and rows beyond ``n_rounds``; ``start(0)`` is refused (ValueError).
    """
    x, y = synthetic_rows(dim, 10, rng)
    nan_x = x.copy()
    nan_x[2, 0] = np.nan
    inf_y = y.copy()
    inf_y[0] = np.inf
    fit = oracle.start(10, dim=dim, rng=rng)
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("features with a NaN", lambda: fit.add(nan_x, y)),
        (f"features of dimension {dim + 1}", lambda: fit.add(np.zeros((3, dim + 1)), np.zeros(3))),
        ("3 feature rows with 2 rewards", lambda: fit.add(x[:3], y[:3][:2])),
        ("a reward of inf", lambda: fit.add(x, inf_y)),
        ("11 rows in a fit started for 10", lambda: (fit.add(x[:6], y[:6]), fit.add(x, y))),
        ("start(0, ...)", lambda: oracle.start(0, dim=dim)),
    ]
    for what, call in cases:
        try:
            call()
        except ValueError:
            continue
        raise ContractError("check_bad_input_errors", f"{what} must raise ValueError, and did not")


ORACLE_CHECKS: tuple[Callable[..., None], ...] = (
    check_fit_shapes, check_result_is_final, check_deterministic_for_a_seed, check_streaming_equals_one_shot,
    check_ledger_within_budget, check_releases_within_sensitivity, check_estimate_holds_only_released_values,
    check_bad_input_errors,
)
"""The checks :func:`check_oracle` runs, in order; each takes ``(oracle, *, dim, n_rows, rng)``."""


def check_oracle(oracle: Oracle, *, dim: int = 3, n_rows: int = 96, rng: int = 0) -> None:
    """Check that ``oracle`` keeps the oracle contract: run every check of :data:`ORACLE_CHECKS`.

    Run it on your own oracle as you run Gymnasium's ``check_env`` on your own env; the test suite runs it
    on every registered oracle. It returns None when every check passes and raises at the first breach.

    Parameters
    ----------
    oracle : Oracle
        The oracle configuration (a private one with its budget).
    dim : int
        Feature dimension d >= 1 of the synthetic data (1 for a one-dimensional oracle; the dimension of
        its public sample for an oracle that has one).
    n_rows : int
        Rows of the synthetic dataset, >= 10 (enough for every stage of a multi-stage fit).
    rng : int
        Seed (>= 0) of the data and of the fits.

    Raises
    ------
    ContractError
        From the first check that fails, naming it (``err.check``) and what failed.
    TypeError
        If ``oracle`` is not a privbandit :class:`~privbandit.oracles.Oracle`.

    References
    ----------
    Source paper, `alg:batch-cb-meta`, `def:JDP`, `def:LDP`.

    Examples
    --------
    >>> from privbandit.oracles import ContractError, check_oracle, make_oracle
    >>> check_oracle(make_oracle("iw-regression-dp", epsilon=1.0, delta=1e-5))
    >>> check_oracle(make_oracle("ldp-1d", epsilon=1.0), dim=1)

    A broken oracle fails, naming the check:

    >>> import dataclasses
    >>> from privbandit.oracles import Ridge
    >>> from privbandit.oracles.ridge import RidgeFit
    >>> class LastChunkFit(RidgeFit):
    ...     def _add_rows(self, stage, start, x, y):    # forgets every earlier chunk of rows
    ...         self.gram, self.xty = x.T @ x, x.T @ y
    >>> @dataclasses.dataclass(frozen=True)
    ... class LastChunk(Ridge):
    ...     fit_class = LastChunkFit
    >>> try:
    ...     check_oracle(LastChunk())
    ... except ContractError as err:
    ...     print(err.check)
    check_streaming_equals_one_shot
    """
    if not isinstance(oracle, Oracle):
        raise TypeError(f"oracle must be a privbandit Oracle, got {type(oracle).__name__}")
    dim = check_int("dim", dim, low=1)
    n_rows = check_int("n_rows", n_rows, low=10)
    rng = check_int("rng", rng, low=0)
    for check in ORACLE_CHECKS:
        check(oracle, dim=dim, n_rows=n_rows, rng=rng)
