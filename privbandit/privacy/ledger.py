"""The per-record privacy ledger: which records each release touched, and the composed budget.

A release touches a contiguous range of records [start, stop) through one mechanism, either centrally
(one statistic computed from all the records, ``kind="central"``) or locally (each record privatized
on its own through the same channel, ``kind="local"``). For every record the ledger composes the
releases that touched it:

- Gaussian releases exactly, as one Gaussian with multiplier z = (sum z_i^-2)^(-1/2);
- with Laplace releases, through dp-accounting's events (``GaussianDpEvent``, ``LaplaceDpEvent``) and its
  privacy-loss-distribution accountant (``PLDAccountant``), whose answer is a valid upper bound
  (pessimistic discretisation) and never worse than basic composition of the pure parts;
- pure-epsilon releases (no dp-accounting event) by adding their epsilons (basic composition).

The pure mathematics (calibration, composition) lives in :mod:`.calibration`; the ledger only records
and sums.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

import numpy as np

from .._validation import check_int
from .calibration import compose_gaussian_multipliers, gaussian_epsilon
from .mechanisms import MechanismEntry
from .spec import PrivacySpec, check_delta


class CentralMechanism(Protocol):
    """What :func:`release_recorded` needs of a mechanism: a noisy release and its ledger entry."""

    def release(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...

    def ledger_entry(self) -> MechanismEntry: ...


class PrivacyBudgetExceeded(RuntimeError):
    """Raised when the ledger shows a record spent more than its privacy spec allows."""


@dataclass(frozen=True)
class Release:
    """One mechanism applied to the records [start, stop).

    Attributes
    ----------
    start, stop : int
        The half-open range of record indices touched.
    entry : MechanismEntry
        The mechanism family and its noise parameter.
    kind : {"central", "local"}
        One joint release over the records, or each record privatized by itself.
    label : str
        What was released (for reports), e.g. ``"W stage 2"``.
    """

    start: int
    stop: int
    entry: MechanismEntry
    kind: str = "central"
    label: str = ""

    @property
    def key(self) -> tuple:
        """What must be equal for two adjacent releases to be merged into one range."""
        return (self.entry, self.kind, self.label)


@lru_cache(maxsize=4096)
def _compose_epsilon(entries: tuple[tuple[MechanismEntry, int], ...], delta: float) -> float:
    """Composed epsilon at ``delta`` of a multiset of mechanism entries (entry, count).

    The Gaussians are one Gaussian (:func:`~.calibration.compose_gaussian_multipliers`); with Laplace
    entries the events go to dp-accounting's ``PLDAccountant`` (its default discretisation, 1e-4, is
    pessimistic: the answer is a valid upper bound); the pure entries add their epsilons (basic
    composition: dp-accounting has no event for a pure epsilon). Without Gaussians the answer is at
    most the sum of the pure epsilons.
    """
    for e, _ in entries:
        if e.family not in ("gaussian", "laplace", "pure"):
            raise ValueError(f"unknown mechanism family {e.family!r}")
    gauss = [e.parameter for e, c in entries if e.family == "gaussian" for _ in range(c)]
    laplace = [(e.parameter, c) for e, c in entries if e.family == "laplace"]
    pure = sum(e.parameter * c for e, c in entries if e.family == "pure")
    if not laplace:
        return (gaussian_epsilon(compose_gaussian_multipliers(gauss), delta) if gauss else 0.0) + pure
    import dp_accounting

    events = [dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(b), c) for b, c in laplace]
    if gauss:
        events.append(dp_accounting.GaussianDpEvent(compose_gaussian_multipliers(gauss)))
    accountant = dp_accounting.pld.PLDAccountant()
    accountant.compose(dp_accounting.ComposedDpEvent(events))
    composed = float(accountant.get_epsilon(delta)) + pure
    return composed if gauss else min(composed, sum(c / b for b, c in laplace) + pure)


@dataclass
class PrivacyLedger:
    """Records every release and proves each record's composed (epsilon, delta).

    References
    ----------
    Source paper, `def:JDP`, `def:LDP`; composition of Gaussian channels (`def:Guassian-channel`).

    Examples
    --------
    >>> from privbandit.privacy import GaussianMechanism, PrivacyLedger, PrivacySpec
    >>> ledger = PrivacyLedger()
    >>> mech = GaussianMechanism.calibrated(1.0, 1e-5, sensitivity=2.0)
    >>> ledger.record(0, 100, mech.ledger_entry(), label="psi")
    >>> round(ledger.guarantee(1e-5), 6)
    1.0
    >>> round(ledger.check(PrivacySpec("jdp", 1.0, 1e-5)), 6)
    1.0

    A second release on the records 50..149: those in both compose (exactly, for Gaussians).

    >>> ledger.record(50, 150, mech.ledger_entry(), label="Psi")
    >>> ledger.n_records, round(ledger.record_epsilon(0, 1e-5), 6), round(ledger.record_epsilon(75, 1e-5), 2)
    (150, 1.0, 1.47)
    >>> ledger.check(PrivacySpec("jdp", 1.0, 1e-5))
    Traceback (most recent call last):
    ...
    privbandit...PrivacyBudgetExceeded: a record spent epsilon=1.465... at delta=1e-05, above the spec's epsilon=1
    """

    releases: list[Release] = field(default_factory=list)

    def record(self, start: int, stop: int, entry: MechanismEntry, *, kind: str = "central",
               label: str = "") -> None:
        """Record that ``entry`` touched the records [start, stop); adjacent identical releases merge."""
        if not (type(start) is int and type(stop) is int and 0 <= start <= stop):   # (such ints pass as they are)
            start = check_int("start", start, low=0)
            stop = check_int("stop", stop, low=start)
        if kind not in ("central", "local"):
            raise ValueError(f"kind must be 'central' or 'local', got {kind!r}")
        if stop == start:
            return
        if self.releases:
            last = self.releases[-1]        # the common case (a local fit's next row): extend the last range
            if (last.stop == start and (last.entry is entry or last.entry == entry) and last.kind == kind
                    and last.label == label):
                self.releases[-1] = Release(last.start, stop, last.entry, kind, label)
                return
        self.releases.append(Release(start, stop, entry, kind, label))

    def extend(self, other: PrivacyLedger, offset: int = 0) -> None:
        """Append another ledger's releases with record indices shifted by ``offset``."""
        for r in other.releases:
            self.record(r.start + offset, r.stop + offset, r.entry, kind=r.kind, label=r.label)

    def segments(self) -> list[tuple[int, int, tuple[tuple[MechanismEntry, int], ...]]]:
        """Maximal record ranges touched by the same multiset of mechanisms: (start, stop, entries).

        One sweep over the releases' start and stop points (O(n log n) in the number of releases n): between
        two consecutive points the releases that touch the records are those started at or before the first
        and not yet stopped. Ranges no release touches are left out.
        """
        if not self.releases:
            return []
        starts: dict[int, list[MechanismEntry]] = {}
        stops: dict[int, list[MechanismEntry]] = {}
        for r in self.releases:
            if r.stop > r.start:
                starts.setdefault(r.start, []).append(r.entry)
                stops.setdefault(r.stop, []).append(r.entry)
        points = sorted({r.start for r in self.releases} | {r.stop for r in self.releases})
        active: Counter = Counter()
        out = []
        for a, b in zip(points[:-1], points[1:]):
            active.update(starts.get(a, ()))
            active.subtract(stops.get(a, ()))
            active = +active                        # drop the entries whose releases all stopped
            if not active:
                continue
            key = tuple(sorted(active.items(), key=lambda kv: (kv[0].family, kv[0].parameter, kv[0].name)))
            out.append((a, b, key))
        return out

    def record_epsilon(self, record: int, delta: float) -> float:
        """Composed epsilon at ``delta`` of one record (0 if no release touched it)."""
        delta = check_delta(delta)
        key = next((key for a, b, key in self.segments() if a <= record < b), None)
        return 0.0 if key is None else _compose_epsilon(key, delta)

    def guarantee(self, delta: float) -> float:
        """The composed epsilon at ``delta`` of the worst record (0.0 for an empty ledger)."""
        delta = check_delta(delta)
        keys = {key for _, _, key in self.segments()}
        return max((_compose_epsilon(k, delta) for k in keys), default=0.0)

    def check(self, spec: PrivacySpec, *, rtol: float = 1e-9) -> float:
        """Raise :class:`PrivacyBudgetExceeded` unless every record is (spec.epsilon, spec.delta)-private.

        Returns
        -------
        float
            The worst record's epsilon at ``spec.delta``.
        """
        if not spec.is_private:
            return 0.0 if not self.releases else self.guarantee(1e-12)
        eps = self.guarantee(spec.delta)
        if eps > spec.epsilon * (1 + rtol):
            raise PrivacyBudgetExceeded(
                f"a record spent epsilon={eps:.6g} at delta={spec.delta:g}, above the spec's epsilon={spec.epsilon:g}")
        return eps

    @property
    def n_records(self) -> int:
        """One past the largest record index touched."""
        return max((r.stop for r in self.releases), default=0)

    def summary(self) -> list[dict]:
        """The releases as plain dicts (for tables and reports)."""
        return [dict(start=r.start, stop=r.stop, mechanism=r.entry.name, family=r.entry.family,
                     parameter=r.entry.parameter, kind=r.kind, label=r.label) for r in self.releases]


def release_recorded(ledger: PrivacyLedger, mechanism: CentralMechanism, values: np.ndarray,
                     rng: np.random.Generator, start: int, stop: int, label: str) -> np.ndarray:
    """Release ``values`` through ``mechanism`` and record it in ``ledger`` as touching the records [start, stop).

    The one step of every central release: the noise is drawn (``mechanism.release(values, rng)``) and the
    release is recorded (``kind="central"``) together, so no release can miss the ledger. Sites that must
    charge a budget before drawing record it themselves and say why.

    Parameters
    ----------
    ledger : PrivacyLedger
        The ledger of the records the statistic was computed from.
    mechanism : CentralMechanism
        The calibrated mechanism (its sensitivity bounds the statistic's change when one record changes).
    values : ndarray
        The exact statistic.
    rng : numpy.random.Generator
        The noise's randomness.
    start, stop : int
        The half-open range of records the statistic was computed from.
    label : str
        What was released (for reports).

    Returns
    -------
    ndarray
        The noisy statistic.

    References
    ----------
    Source paper, `def:JDP`, `def:Guassian-channel`.
    """
    noisy = mechanism.release(values, rng)
    ledger.record(start, stop, mechanism.ledger_entry(), kind="central", label=label)
    return noisy
