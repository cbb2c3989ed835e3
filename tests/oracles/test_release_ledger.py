"""Every noise draw appears in the ledger, one to one, and every central release goes through one function.

A fit (or linucb-jdp's tree) is fed rows in small chunks while a :class:`~privbandit.privacy.replay.ReleaseTape`
logs every mechanism's draws, wherever they are made. After each ``add`` (and after ``result()``) the draws made
in that step must match what the ledger gained in that step:

- central draws, one to one and in order, with the new central releases: the same mechanism entry (family and
  noise multiplier sigma / sensitivity), each covering records already fed (an oracle's: one of its stages);
- local draws (inside a call of a :class:`~privbandit.privacy.LocalRandomizer` the fit built, seen through the
  oracle's public ``mechanism`` seam), row for row, with the records the new local releases cover.

The one exception is iw-glm-dp's output release, charged before its H check decides whether it is drawn
(``EARLY_CHARGES``). The structural guard at the end keeps the release sites from drifting back to two calls.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import build_oracle, oracle_dim, public_sample

import privbandit  # registers everything; its folder is scanned below
from privbandit.agents import BanditSpec, make_agent
from privbandit.oracles import oracle_class, oracle_names
from privbandit.privacy import LocalRandomizer, PrivacyLedger
from privbandit.privacy.replay import ReleaseTape

PRIVATE = tuple(n for n in oracle_names() if oracle_class(n).privacy_models != ("none",))
# Releases recorded before they are drawn, on purpose (see the comment at the site): (oracle, label suffix).
EARLY_CHARGES = {("iw-glm-dp", "output w")}
N_ROUNDS, CHUNK = 300, 7
PACKAGE = Path(privbandit.__file__).parent


class Draws:
    """Every mechanism draw while open, as (entry, rows, local) (:attr:`log`): a :class:`ReleaseTape` records the
    draws, and a draw made inside a call of a local randomizer handed to :meth:`hook` (an oracle's ``mechanism``
    seam) is local, ``rows`` its batch size (0 for a central draw)."""

    def __init__(self) -> None:
        self.tape = ReleaseTape()
        self.local: set[int] = set()        # the tape's indices of the draws made inside a local randomizer

    def __enter__(self) -> Draws:
        self.tape.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.tape.__exit__(*exc)

    def hook(self, randomizer):
        if not isinstance(randomizer, LocalRandomizer):
            return randomizer
        draws = self

        class Marked:
            def __call__(self, features, rewards, rng=None):
                first = len(draws.tape)
                out = randomizer(features, rewards, rng)
                draws.local.update(range(first, len(draws.tape)))
                return out

            def ledger_entry(self):
                return randomizer.ledger_entry()

        return Marked()

    @property
    def log(self) -> list[tuple]:
        return [(mech.ledger_entry(), np.shape(values)[0] if k in self.local else 0, k in self.local)
                for k, (mech, values) in enumerate(zip(self.tape.mechanisms, self.tape.inputs))]


def _local_rows(ledger: PrivacyLedger) -> Counter:
    """Records covered by local releases, per mechanism entry (merging adjacent releases keeps the sum)."""
    rows: Counter = Counter()
    for r in ledger.releases:
        if r.kind == "local":
            rows[r.entry] += r.stop - r.start
    return rows


def _check_step(draws: list[tuple], ledger: PrivacyLedger, n_central_before: int, local_before: Counter,
                fed: int, name: str, allowed_ranges: set | None = None) -> int:
    """Assert one step's draws match what the ledger gained in it; return the ledger's central count."""
    central = [r for r in ledger.releases if r.kind == "central"]
    new = central[n_central_before:]
    drawn = [entry for entry, _, local in draws if not local]
    k = 0
    for rel in new:
        assert rel.start < rel.stop <= fed, f"{name}: {rel} covers records not fed yet ({fed} fed)"
        if allowed_ranges is not None:
            assert (rel.start, rel.stop) in allowed_ranges, f"{name}: {rel} is not one stage's rows"
        if k < len(drawn) and drawn[k] == rel.entry:
            k += 1
        else:
            assert any(name == o and rel.label.endswith(s) for o, s in EARLY_CHARGES), (
                f"{name}: the ledger records {rel} with no matching draw")
    assert k == len(drawn), f"{name}: {len(drawn) - k} central draw(s) {drawn[k:]} missing from the ledger"
    local_drawn: Counter = Counter()
    for entry, rows, local in draws:
        if local:
            local_drawn[entry] += rows
    gained = _local_rows(ledger)
    gained.subtract(local_before)
    assert +gained == local_drawn, f"{name}: local rows drawn {dict(local_drawn)}, recorded {dict(+gained)}"
    return len(central)


def _rows(dim: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, dim))
    x *= (rng.random(n) / np.linalg.norm(x, axis=1))[:, None]
    return x, np.clip(x @ np.ones(dim) / np.sqrt(dim) + 0.1 * rng.standard_normal(n), -1.0, 1.0)


@pytest.mark.parametrize("name", PRIVATE)
def test_every_draw_of_a_private_oracle_is_in_its_ledger_one_to_one(name: str) -> None:
    dim = oracle_dim(name, 3)
    draws = Draws()
    fit = build_oracle(name, public_sample(dim), mechanism=draws.hook).start(N_ROUNDS, dim=dim, rng=3)
    stages = {fit.stage_range(s) for s in range(len(fit.stage_sizes))}
    x, y = _rows(dim, N_ROUNDS)
    n_central, local, n_draws = 0, Counter(), 0
    with draws:
        for lo in [*range(0, N_ROUNDS, CHUNK), None]:
            if lo is None:
                fit.result()
            else:
                fit.add(x[lo:lo + CHUNK], y[lo:lo + CHUNK])
            fed = N_ROUNDS if lo is None else min(lo + CHUNK, N_ROUNDS)
            n_central = _check_step(draws.log[n_draws:], fit.ledger, n_central, local, fed, name, stages)
            local, n_draws = _local_rows(fit.ledger), len(draws.log)
    assert draws.log, f"{name} drew no noise at all"
    assert fit.ledger.n_records == N_ROUNDS


def test_every_tree_node_linucb_jdp_draws_is_in_its_ledger_one_to_one() -> None:
    horizon, dim = 200, 2
    agent = make_agent("linucb-jdp", epsilon=1.0, delta=1e-5)
    agent.reset(BanditSpec(n_arms=2, dim=dim, horizon=horizon), rng=4)
    x, y = _rows(dim, horizon)
    n_central, n_draws = 0, 0
    with Draws() as draws:
        for t in range(horizon):
            agent.update(x[t], y[t])
            n_central = _check_step(draws.log[n_draws:], agent.ledger, n_central, Counter(), t + 1, "linucb-jdp")
            n_draws = len(draws.log)
    assert n_central >= horizon // 2          # every odd round releases a new level-0 node, at least
    for r in agent.ledger.releases:             # tree nodes: 2^lev aligned records
        size = r.stop - r.start
        assert size & (size - 1) == 0 and r.start % size == 0


def _calls(module: Path, method: str) -> list[tuple[str, ast.Call]]:
    """(enclosing function, call) for every ``<...>.<method>(...)`` call in ``module``."""
    out = []
    for fn in ast.walk(ast.parse(module.read_text())):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += [(fn.name, c) for c in ast.walk(fn) if isinstance(c, ast.Call)
                    and isinstance(c.func, ast.Attribute) and c.func.attr == method]
    return out


def _local(call: ast.Call) -> bool:
    return any(k.arg == "kind" and isinstance(k.value, ast.Constant) and k.value.value == "local"
               for k in call.keywords)


def test_no_oracle_or_agent_records_a_central_release_outside_the_one_function() -> None:
    # ledger.record(...) only for local releases, plus iw-glm-dp's output charged before its H check; mechanism
    # .release(...) only through release_recorded (EpochFit._release), plus that output's draw.
    allowed = {("glm_jdp.py", "_close_regression_stage")}   # IWGLMDPFit's regression stage
    stray = []
    for module in sorted([*(PACKAGE / "oracles").glob("*.py"), *(PACKAGE / "agents").glob("*.py")]):
        for fn, call in _calls(module, "record"):
            if not _local(call) and (module.name, fn) not in allowed:
                stray.append(f"{module.name}:{call.lineno} {fn} records a central release by hand")
        for fn, call in _calls(module, "release"):
            if (module.name, fn) not in allowed:
                stray.append(f"{module.name}:{call.lineno} {fn} draws a mechanism outside release_recorded")
    assert not stray, "\n".join(stray)
