"""Benchmark your own agent: a challenger run beside a suite's baselines.

:func:`challenge` adds one agent (a registered name, an entry point or an import path
``"pkg.module:factory"``) to every block of a suite that its privacy model fits, runs the sweep
(resumable like every sweep) and compares it with each baseline
(:func:`~privbandit.report.compare.paired_comparison`); its report ranks it on the
:func:`~privbandit.report.leaderboard.leaderboard`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

import pandas as pd

from ..report.compare import paired_comparison
from ..report.leaderboard import leaderboard
from .grid import AgentEntry
from .labels import agent_name, kwargs_label, resolve_label
from .suites import Suite, agent_available, get_suite
from .sweep import SweepResult, sweep

__all__ = ["PRIVATE_MODELS", "Challenge", "agent_model", "challenge", "challenger_entry", "challenger_suite"]

PRIVATE_MODELS: tuple[str, ...] = ("jdp", "ldp")
"""Privacy models a challenger can declare (``--private``)."""


def agent_model(entry: AgentEntry) -> str:
    """The privacy model of an agent entry: ``"none"``, ``"jdp"`` or ``"ldp"``, read from the entry and its
    registration (:meth:`AgentEntry.privacy_model`; the agent is not built).

    Raises
    ------
    ValueError
        If the registration names no model and the entry claims none (``privacy=``, ``--private``).
    """
    model = entry.privacy_model()
    if model == "any":
        raise ValueError(f"agent {entry.name!r} does not declare its privacy model: register it with privacy='jdp' "
                         "or 'ldp' (or a privacy_model attribute on its factory), or claim it (private=, --private)")
    return model


def challenger_entry(agent: str | AgentEntry, *, private: str | None = None, label: str | None = None,
                     reference: str | None = None, kwargs: dict | None = None) -> AgentEntry:
    """The challenger's :class:`AgentEntry`, its privacy model checked against ``private``.

    Parameters
    ----------
    agent : str or AgentEntry
        A registered name, an entry point name or an import path ``"pkg.module:factory"``.
    private : {"jdp", "ldp"}, optional
        The privacy model the agent claims; it must match the model its registration records. Needed when
        the registration names no model (``privacy="any"``: a factory that declares neither ``privacy`` nor a
        ``privacy_model`` attribute).
    label : str, optional
        The ``agent`` column of the results (default: the agent's own name, :func:`~privbandit.bench.labels.agent_name`,
        with its kwargs, :func:`~privbandit.bench.labels.kwargs_label`).
    reference : str, optional
        The baseline the report measures the challenger against first (its ratio and verdict).
    kwargs : dict, optional
        Keyword arguments of the agent (a label such as ``linucb-practical`` adds its own, see
        :func:`~privbandit.bench.labels.resolve_label`).

    Raises
    ------
    ValueError
        For an unknown agent, a ``private`` outside {"jdp", "ldp"}, one the registration contradicts, or none
        for a registration that names no model.
    """
    if private is not None and private not in PRIVATE_MODELS:
        raise ValueError(f"private must be one of {PRIVATE_MODELS} or None, got {private!r}")
    if isinstance(agent, AgentEntry):
        entry = agent
    else:
        if not isinstance(agent, str) or not agent:
            raise ValueError(f"agent must be an agent name or an import path 'pkg.module:factory', got {agent!r}")
        name, kw = resolve_label(agent, kwargs)
        default = agent if name != agent and not kwargs else kwargs_label(agent_name(name, kw), kw)
        entry = AgentEntry(name, kw, label=label or default, private=True if private else None, reference=reference)
    model = entry.privacy_model()
    if private is not None and model not in ("any", private):
        raise ValueError(f"the agent claims {private!r} privacy but its registration says {model!r}")
    if private is not None and model == "any":
        entry = replace(entry, privacy=private)   # the claim names the model its registration does not
    agent_model(entry)
    return entry


def challenger_suite(suite: Suite | str, challenger: AgentEntry, *, seeds=None, horizon: int | None = None,
                     delta: float | None = None) -> Suite:
    """The suite's available grids, the challenger added to every grid its privacy model fits.

    A private challenger joins the grids with a baseline of its privacy model; a non-private one joins
    every grid. ``seeds`` and ``horizon`` override the grids' (for tiny runs), ``delta`` their privacy delta.

    Raises
    ------
    ValueError
        If no grid fits, or the challenger's label is a baseline's.
    """
    suite = get_suite(suite) if isinstance(suite, str) else suite
    model = agent_model(challenger)
    grids = []
    for g in suite.available_grids():
        if challenger.label in {a.label for a in g.agents}:
            raise ValueError(f"the challenger's label {challenger.label!r} is a baseline's: choose another label")
        if model != "none" and model not in {agent_model(a) for a in g.agents}:
            continue
        grids.append(replace(g, agents=g.agents + (challenger,), seeds=g.seeds if seeds is None else seeds,
                             horizon=horizon or g.horizon, delta=delta or g.delta))
    if not grids:
        raise ValueError(f"no block of suite {suite.name!r} has a baseline of the challenger's privacy model {model!r}")
    return replace(suite, grids=tuple(grids))


@dataclass
class Challenge:
    """What :func:`challenge` did: the sweep, the suite it ran, and the comparison tables."""

    suite: Suite
    challenger: str
    reference: str | None
    result: SweepResult

    @property
    def table(self) -> pd.DataFrame:
        """The results table."""
        return self.result.table

    def comparison(self) -> pd.DataFrame:
        """:func:`paired_comparison` of the challenger."""
        return paired_comparison(self.table, self.challenger, reference=self.reference)

    def leaderboard(self) -> pd.DataFrame:
        """:func:`leaderboard` of the run."""
        return leaderboard(self.table)


def challenge(suite: Suite | str, agent: str | AgentEntry, out: str | os.PathLike, *, private: str | None = None,
              reference: str | None = None, label: str | None = None, kwargs: dict | None = None, seeds=None,
              horizon: int | None = None, jobs: int = 1, backend: str = "loky", address: str | None = None,
              progress: bool = False) -> Challenge:
    """Run an agent beside a suite's baselines (every block its privacy model fits) into ``out``.

    Resumable: finished cells in ``out`` are kept, so a rerun only runs what is missing.

    Parameters
    ----------
    suite : Suite or {"quick", "paper"}
    agent, private, reference, label, kwargs
        The challenger, as in :func:`challenger_entry`; ``reference`` must be a baseline of the blocks it joins
        (listed first in the comparison).
    out : path
        The results folder.
    seeds, horizon : optional
        Override the suite's seeds (a count or the seeds) and horizons.
    jobs, backend, address, progress
        As in :func:`~privbandit.bench.sweep.sweep`.

    Returns
    -------
    Challenge

    Raises
    ------
    ValueError
        For an unknown agent, a claim its spec contradicts, no fitting block, or an unknown reference.
    """
    entry = challenger_entry(agent, private=private, label=label, reference=reference, kwargs=kwargs)
    if not agent_available(entry):
        raise ValueError(f"agent {entry.name!r} is not available in this install")
    try:  # its kwargs, checked now (its privacy model is the registration's: agent_model)
        entry.build(1.0, 1e-5) if entry.is_private() else entry.build()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"agent {entry.name!r} cannot be built (make_agent({entry.name!r}) fails: {exc})") from None
    ran = challenger_suite(suite, entry, seeds=seeds, horizon=horizon)
    if reference is not None:
        labels = sorted({a.label for g in ran.grids for a in g.agents} - {entry.label})
        if reference not in labels:
            raise ValueError(f"reference must be a baseline of the blocks the challenger joins, one of {labels}; "
                             f"got {reference!r}")
    result = sweep(ran.cells(), out, jobs=jobs, backend=backend, address=address, progress=progress)
    return Challenge(ran, entry.label, reference, result)
