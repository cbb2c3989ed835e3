"""The benchmark workflow: what ``privbandit bench`` (and ``run --out``, ``plot``) does after parsing, as Python calls.

:func:`run_bench` (``bench``), :func:`run_agent` (``run``), :func:`replot` (``plot``) and :func:`store_suite`
(``store-reference``) print what the command prints and return what it did; the command, notebooks and scripts
call the same functions.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gymnasium as gym
import pandas as pd

from ..agents import agent_is_private, agent_names
from ..envs.registration import ENV_IDS
from ..report import write_board
from ..report.compare import challenger_figure, comparison_lines, comparison_markdown
from ..report.figures import save_standard_figures
from ..report.files import atomic_write, read_cell
from ..report.leaderboard import leaderboard
from ..report.tables import PLAN_KEYS, final_regret, headline_table, incomplete_groups, markdown_table, write_report
from .cells import CellFileError, cell_path, folder_lock, load_cell
from .challenger import challenger_entry, challenger_suite
from .grid import AgentEntry, Cell, EnvEntry, Grid
from .labels import agent_name, kwargs_label, resolve_label
from .stored import install_stored, match_stored, pack_results, refresh_stream_summaries
from .suites import SUITES, Suite, get_suite
from .sweep import PLANNED_COLUMNS, CellFilesRejected, SweepResult, estimate, sweep

__all__ = ["EXIT_INCOMPLETE", "REPORT_META", "BenchError", "BenchResult", "completion", "headline", "output_folder",
           "read_meta", "references_of", "replot", "run_agent", "run_bench", "run_cells", "store_suite",
           "with_earlier", "write_outputs"]

EXIT_INCOMPLETE = 3
"""Exit code of ``bench``, ``run`` and ``plot`` when some group of the report has fewer seeds than planned."""

REPORT_META = "report.json"
"""The file beside ``report.md`` that keeps its title, notes, references and slope window for ``plot``."""


class BenchError(ValueError):
    """A bad argument of the workflow, found before any cell runs (one line; the command exits with code 2)."""


@dataclass(frozen=True)
class BenchResult:
    """What :func:`run_bench` (or :func:`run_agent`, :func:`replot`) did: the exit code the command exits with (0, or
    :data:`EXIT_INCOMPLETE` when ``incomplete`` groups of the report have fewer seeds than planned: a rerun finishes
    them), the results folder, ``report.md``, the sweep (its table, the cells run and found finished, the plan), the
    challenger's label, and with ``estimate_only`` the estimate's line (then nothing ran and the paths are None)."""

    exit_code: int
    incomplete: int = 0
    out: Path | None = None
    report: Path | None = None
    sweep: SweepResult | None = None
    challenger: str | None = None
    estimate: str | None = None

    @property
    def complete(self) -> bool:
        """Every group of the report has its planned seeds."""
        return self.incomplete == 0

    @property
    def paths(self) -> tuple[Path, ...]:
        """The files written: ``results.csv``, ``report.md``, ``report.json``, ``board.html`` and the figures."""
        if self.out is None:
            return ()
        written = [self.out / "results.csv", self.report, self.out / REPORT_META, self.out / "board.html"]
        return tuple(p for p in written if p is not None and p.exists()) + tuple(sorted(
            (self.out / "figures").glob("*.png")))


def output_folder(path: str | os.PathLike, what: str) -> Path:
    """``path`` as a folder the workflow can write (created if missing), else a :class:`BenchError` naming
    ``what`` (the argument)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise BenchError(f"{what} must be a folder, got the file {path}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BenchError(f"{what} {path}: cannot create the folder ({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise BenchError(f"{what} {path} is not writable (results, figures and report.md go there)")
    return path


def write_outputs(table: pd.DataFrame, out: Path, *, title: str, references: Mapping[str, str], notes: list[str],
                  slope_window=(None, None), challenger: str | None = None, reference: str | None = None,
                  planned: pd.DataFrame | None = None) -> Path:
    """The figures, ``report.md``, ``report.json`` and ``board.html`` of a results table in ``out``; returns
    ``report.md``. With ``challenger``, the report adds its paired comparison and a leaderboard."""
    import matplotlib

    matplotlib.use("Agg")
    figures = list(save_standard_figures(table, out / "figures")) if len(table) else []  # none: every cell lost
    sections = []
    if challenger is not None and challenger in set(table["agent"]):
        sections.append(comparison_markdown(table, challenger, reference))
        figures.append(challenger_figure(leaderboard(table), challenger, out / "figures" / "challenger.png"))
    report = write_report(table, out, title=title, references=references, figures=figures, notes=notes,
                          slope_window=slope_window, sections=sections, planned=planned)
    meta = dict(title=title, notes=list(notes), references=dict(references), slope_window=list(slope_window),
                challenger=challenger, reference=reference,
                planned=[] if planned is None else planned.to_dict(orient="records"))
    atomic_write(out / REPORT_META, json.dumps(meta, indent=1) + "\n")
    if len(table):  # the results board beside report.md (privbandit.report), from the files just written
        write_board([out], out / "board.html", title=title)
    return report


def run_cells(cells: Sequence[Cell], out: str | os.PathLike, *, jobs: int, progress: bool = True,
              prog: str = "privbandit", **kwargs: Any) -> SweepResult:
    """``sweep(cells, out, ...)`` on ``jobs`` workers, saying on stderr (each line headed ``prog``) which cell
    files failed the check (moved aside, run again) and which cells a dead worker lost."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CellFilesRejected)  # said below, one line per file
        res = sweep(cells, out, jobs=jobs, progress=progress, **kwargs)
    for name, why in res.rejected:
        print(f"{prog}: warning: cell file {name} failed the check ({why}): moved to "
              f"{Path(out) / 'cells' / 'rejected'} and run again", file=sys.stderr)
    if res.lost:
        print(f"{prog}: warning: a worker died; {len(res.lost)} cells not finished (a rerun runs them): "
              + ", ".join(res.lost), file=sys.stderr)
    return res


def completion(table: pd.DataFrame, planned: pd.DataFrame | None) -> int:
    """Print the last line about completeness (how many groups of the report have fewer seeds than planned, a
    planned group with none too); the exit code (0 or :data:`EXIT_INCOMPLETE`)."""
    return _done(table, planned).exit_code


def _incomplete(table: pd.DataFrame, planned: pd.DataFrame | None) -> int:
    """The groups of the report with fewer seeds than planned (a planned group with none too)."""
    final = final_regret(table, planned=planned) if len(table) else None
    n = 0 if final is None else incomplete_groups(final)
    if planned is not None and len(planned):
        def key(r):
            return str(r["env"]), str(r["agent"]), float(r["epsilon"]), int(r["horizon"])

        found = set() if final is None else {key(r) for _, r in final[list(PLAN_KEYS)].iterrows()}
        n += sum(1 for _, r in planned.iterrows() if int(r["n_planned"]) > 0 and key(r) not in found)
    return n


def read_meta(folder: Path) -> dict:
    """The title, notes, references and slope window of the folder's last report (``report.json``); empty if
    there is none."""
    try:
        meta = json.loads((folder / REPORT_META).read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def with_earlier(out: Path, others: Sequence[str], notes: list[str], references: dict) -> tuple[list[str], dict]:
    """Notes and references of a report on a folder that also holds ``others``, cells of earlier commands:
    say so, and keep those commands' lines and references."""
    if not others:
        return notes, references
    meta = read_meta(out)
    earlier = [n if n.startswith("earlier ") else f"earlier {n}" for n in meta.get("notes", ())
               if isinstance(n, str) and n.startswith(("command:", "earlier command:"))]
    notes = notes + [f"the folder also holds {len(others)} cells of earlier commands: results.csv and this report "
                     "include them"] + [n for n in dict.fromkeys(earlier) if n != f"earlier {notes[0]}"]
    old = meta.get("references", {})
    return notes, {**(old if isinstance(old, dict) else {}), **references}


def headline(table: pd.DataFrame, planned: pd.DataFrame | None = None) -> str:
    """The headline table of a results table (markdown)."""
    return markdown_table(headline_table(final_regret(table, planned=planned)))


def references_of(table: pd.DataFrame) -> dict[str, str]:
    """Private agent -> non-private counterpart, as the suites declare them, for the agents of ``table``."""
    labels = set(table["agent"])
    return {k: v for suite in SUITES.values() for k, v in suite.references().items() if k in labels and v in labels}


def run_bench(suite: str = "quick", out: str | os.PathLike | None = None, *, jobs: int = -1, backend: str = "loky",
              address: str | None = None, agent: str | None = None, private: str | None = None,
              reference: str | None = None, agent_kwargs: Mapping[str, Any] | None = None, label: str | None = None,
              baselines: str = "auto", seeds: int | None = None, horizon: int | None = None,
              delta: float | None = None, agents: Sequence[str] | None = None, envs: Sequence[str] | None = None,
              epsilons: Sequence[float] | None = None, env_kwargs: Mapping[str, Any] | None = None,
              estimate_only: bool = False, progress: bool = True, command: str | None = None,
              prog: str = "privbandit bench",
              started: Callable[[Path, Sequence[Cell]], None] | None = None) -> BenchResult:
    """Run what ``privbandit bench`` runs: a suite, or a challenger beside its baselines, into a results folder.

    The suite's cells come from its stored results where they stand in for a run here, cell by cell
    (``baselines``); the others run (resumable: a rerun skips finished cells). Then ``out`` gets ``results.csv``
    (every cell of the folder, also those of earlier commands), ``figures/*.png``, ``report.md``, ``report.json``
    and ``board.html``. What the command prints is printed (notes on stderr headed ``prog``, the headline table or
    the challenger's comparison, the cell counts, the report's path, the completeness line).

    Parameters
    ----------
    suite : {"quick", "paper"}
        The suite (:data:`~privbandit.bench.suites.SUITES`).
    out : path, optional
        The results folder (default ``results/SUITE``).
    jobs, backend, address
        Workers and joblib backend, as in :func:`~privbandit.bench.sweep.sweep`.
    agent : str, optional
        A challenger: an agent name, entry point, import path ``"pkg.module:factory"`` or report label, run beside
        the baselines of every block its privacy model fits (:func:`~privbandit.bench.challenger.challenger_entry`).
    private, reference, agent_kwargs, label
        The challenger's claimed privacy model, the baseline it is compared with first, its keyword arguments and
        its label (only with ``agent``).
    baselines : {"auto", "stored", "rerun"}
        The stored cells where they match this install ("auto", "stored"), or every cell run again ("rerun").
    seeds, horizon, delta
        Override the suite's seeds, horizons and privacy delta.
    agents, envs, epsilons, env_kwargs
        Only these agents and envs of the suite, these epsilons, extra keyword arguments of every env (a suite run
        only, not with ``agent``).
    estimate_only : bool
        Only estimate the wall time on ``jobs`` workers (nothing runs).
    progress, command, prog : optional
        A progress bar on stderr; the command line the report records (default: this call); the head of the lines
        said on stderr.
    started : callable, optional
        Called with the results folder and the cells before any runs (what a Ctrl-C handler needs to say how
        many cells are saved).

    Returns
    -------
    BenchResult
        The exit status (``exit_code``, ``complete``), the sweep and the paths written.

    Raises
    ------
    BenchError
        For a bad argument or combination of arguments (one line, naming the command's option), before any cell
        runs.
    FolderLocked
        If another command is writing ``out``.
    """
    full = get_suite(suite)
    chosen = dict(seeds=seeds, horizon=horizon, delta=delta, agents=agents, envs=envs, epsilons=epsilons,
                  env_kwargs=env_kwargs)
    the_suite, challenger = _planned_suite(full, agent, private, reference, label, agent_kwargs, chosen)
    cells = the_suite.cells()
    if not cells:
        raise BenchError(f"suite {suite!r} has no agent available in this install")
    if estimate_only:
        line = estimate(cells, jobs).line()
        print(line)
        return BenchResult(0, estimate=line)
    out = output_folder(out or Path("results") / suite, "--out")
    with folder_lock(out):
        if started is not None:
            started(out, cells)
        return _bench_folder(full, the_suite, cells, out, challenger, agent=agent, reference=reference,
                             baselines=baselines, chosen=chosen, jobs=jobs, backend=backend, address=address,
                             progress=progress, prog=prog,
                             command=command or f"privbandit.bench.run_bench({suite!r}, {str(out)!r})")


def _planned_suite(full: Suite, agent: str | None, private, reference, label, agent_kwargs,
                   chosen: dict) -> tuple[Suite, str | None]:
    """The suite :func:`run_bench` runs (its cells as ``chosen``, or a challenger beside all of them) and the
    challenger's label."""
    if agent is None:
        if any(v is not None for v in (private, reference, agent_kwargs, label)):
            raise BenchError("--private, --reference, --agent-kwargs and --label describe a challenger: give it "
                             "with --agent")
        return replace(full, grids=_overridden(full, full.available_grids(), **chosen)), None
    if any(chosen[k] is not None for k in ("agents", "envs", "epsilons", "env_kwargs")):
        raise BenchError("--agents, --envs, --epsilons and --env-kwargs choose the suite's cells: a challenger "
                         "(--agent) runs beside the whole suite")
    try:  # the challenger added to every block its privacy model fits
        entry = challenger_entry(agent, private=private, reference=reference, label=label,
                                 kwargs=dict(agent_kwargs or {}))
        ran = challenger_suite(full, entry, seeds=chosen["seeds"], horizon=chosen["horizon"], delta=chosen["delta"])
    except (ValueError, TypeError) as exc:
        raise BenchError(f"--agent {agent}: {str(exc).splitlines()[0]}") from None
    if reference is not None:
        labels = sorted({a.label for g in ran.grids for a in g.agents} - {entry.label})
        if reference not in labels:
            raise BenchError(f"--reference must be a baseline of the blocks the challenger joins, one of {labels}; "
                             f"got {reference!r}")
    return ran, entry.label


def _bench_folder(full: Suite, the_suite: Suite, cells: Sequence[Cell], out: Path, challenger: str | None, *,
                  agent: str | None, reference: str | None, baselines: str, chosen: dict, jobs: int, backend: str,
                  address: str | None, progress: bool, prog: str, command: str) -> BenchResult:
    """:func:`run_bench` in its locked results folder: the stored cells, the sweep, the outputs, the lines said."""
    start = time.perf_counter()
    left_out = replace(full, grids=_overridden(full, full.grids, **chosen)).left_out()
    if left_out:  # said before the progress bar
        print(f"{prog}: {left_out}", file=sys.stderr)
    stored = _stored_baselines(the_suite.name, cells, out, challenger, baselines, chosen["seeds"], chosen["horizon"],
                               chosen["delta"], prog)
    res = run_cells(cells, out, jobs=jobs, progress=progress, prog=prog, backend=backend, address=address)
    wall = time.perf_counter() - start
    notes = [f"command: `{command}`", *the_suite.header_notes(full),
             f"{len(cells)} cells ({len(res.ran)} run now, {len(res.skipped)} found finished); "
             f"sweep wall time {wall:.1f} s with --jobs {jobs} --backend {backend}"]
    if left_out:
        notes.append(left_out)
    if challenger is not None:
        notes.append(f"challenger `{challenger}` ({agent}) beside the baselines of every block its privacy "
                     "model fits" + (f"; reference `{reference}`" if reference else ""))
    if stored is not None:
        notes.append(stored)
    notes, references = with_earlier(out, res.others, notes, the_suite.references())
    title = f"privbandit benchmark: {the_suite.name}" + (f", challenger {challenger}" if challenger else "")
    report = write_outputs(res.table, out, title=title, references=references, notes=notes,
                           slope_window=the_suite.slope_window, challenger=challenger, reference=reference,
                           planned=res.planned)
    total = time.perf_counter() - start
    if challenger is not None and challenger in set(res.table["agent"]):
        print(comparison_lines(res.table, challenger, reference))
    else:
        print(headline(res.table, res.planned))
    print(f"\n{len(cells)} cells ({len(res.ran)} run, {len(res.skipped)} already finished); wall time {total:.1f} s")
    if res.others:
        print(f"{out} also holds {len(res.others)} cells of earlier commands: results.csv and the report include them")
    print(f"report: {report}")
    return _done(res.table, res.planned, out=out, report=report, sweep=res, challenger=challenger)


def _overridden(full: Suite, grids, seeds, horizon, delta, agents, envs, epsilons, env_kwargs) -> tuple:
    """The grids with ``seeds``, ``horizon``, ``delta`` and ``epsilons`` where given, and only the agents of
    ``agents`` and the envs of ``envs`` (grids left empty are dropped)."""
    whole = full.grids
    for what, chosen, known in (("--agents", agents, {a.label for g in whole for a in g.agents}),
                                ("--envs", envs, {e.label for g in whole for e in g.envs})):
        unknown = sorted(set(chosen or ()) - known)
        if unknown:
            raise BenchError(f"{what}: {', '.join(unknown)} not in suite {full.name!r}; choose from {sorted(known)}")
    out = []
    extra = dict(env_kwargs or {})
    for g in grids:
        kept_agents = tuple(a for a in g.agents if agents is None or a.label in agents)
        kept_envs = tuple(_with_kwargs(e, extra) for e in g.envs if envs is None or e.label in envs)
        if kept_agents and kept_envs:
            out.append(replace(g, agents=kept_agents, envs=kept_envs, seeds=seeds or g.seeds,
                               horizon=horizon or g.horizon, delta=delta or g.delta, epsilons=epsilons or g.epsilons))
    return tuple(out)


def _with_kwargs(entry: EnvEntry, extra: dict) -> EnvEntry:
    """The env entry with ``extra`` keyword arguments (``env_kwargs``) and a label saying them, checked by making
    the env (a :class:`BenchError` naming the env if it refuses them)."""
    if not extra:
        return entry
    suffix = ",".join(f"{k}={v}" for k, v in sorted(extra.items()))
    new = EnvEntry(f"{entry.label}[{suffix}]", entry.env_id, {**dict(entry.kwargs), **extra})
    try:
        new.make(1).close()
    except (TypeError, ValueError) as exc:
        raise BenchError(f"--env-kwargs: env {entry.label} ({entry.env_id}) refuses them: {exc}") from None
    return new


def _stored_baselines(suite: str, cells: Sequence[Cell], out: Path, challenger: str | None, baselines: str,
                      seeds, horizon, delta, prog: str) -> str | None:
    """Put the suite's stored cells into ``out/cells`` where they can stand in for a run here, cell by cell
    (:func:`privbandit.bench.stored.match_stored`, every round of every stream checked): the cells of a suite
    run, the baselines of a challenger run, only those ``out`` does not hold yet. Returns the report's line on where
    they came from (None when ``out`` already held them all), which is also printed: on stderr when some did not
    match (those run), else on stdout."""
    what, whose = ("cells", "cells") if challenger is None else ("baseline cells", "baselines")
    todo = [c for c in cells if c.agent.label != challenger and not cell_path(out / "cells", c).exists()]
    if baselines == "rerun":
        held = sum(1 for c in cells if c.agent.label != challenger) - len(todo)
        line = f"{what} run again (--baselines rerun)" + (
            f"; the {held} that {out} already holds are kept (a new --out runs every one)" if held else "")
        print(f"{prog}: {line}")
        return line
    if not todo:
        return None
    if any(v is not None for v in (seeds, horizon, delta)):
        line = (f"stored {whose} not used (--seeds, --horizon and --delta change the {what}: the stored ones are the "
                f"suite's own): the {whose} run" + (" again" if challenger is not None else ""))
        # a suite run shrunk as asked: a note on stdout; a challenger's baselines that run again: stderr
        print(f"{prog}: {line}", file=sys.stdout if challenger is None else sys.stderr)
        return line
    match = match_stored(get_suite(suite), todo)
    problems, usable, unstored, inexact = list(match.problems), match.usable, match.unstored, match.inexact
    if not usable:
        line = f"stored {whose} not used (" + "; ".join(problems or ["the stored results hold none of them"]) + \
               f"): the {whose} run" + (" again" if challenger is not None else "")
        print(f"{prog}: {line}", file=sys.stderr)
        return line
    if unstored:
        names = sorted({c.agent.label for c in todo if c.key in set(unstored)})
        problems.append(f"{len(unstored)} {what} are not in the stored results and run (agents: "
                        f"{', '.join(names)})")
    names = install_stored(get_suite(suite), out, set(usable))
    line = (f"{len(names)} {what} from the stored reference results of suite `{suite}` (results version, cell "
            "identities and every round of their round streams checked against this install"
            + ("; --baselines rerun runs them)" if challenger is None else
               "); the challenger is paired with them by seed"))
    if inexact:
        line += (f"; {len(inexact)} of their round streams equal the stored ones up to rounding, not bit for bit "
                 "(another CPU or BLAS computed them)")
    if problems:
        print(f"{prog}: stored {whose} used for {len(names)} of {len(todo)} cells; the others "
              "run again: " + "; ".join(problems), file=sys.stderr)
        line += "; the others run again: " + "; ".join(problems)
    else:
        print(f"{prog}: {line}")
    return line


def run_agent(env: str, agent: str, horizon: int, *, epsilon: float | None = None, delta: float = 1e-5,
              seeds: int = 1, agent_kwargs: Mapping[str, Any] | None = None, label: str | None = None,
              family: str | None = None, dim: int | None = None, arms: int | None = None,
              out: str | os.PathLike | None = None, jobs: int = 1, progress: bool = True, command: str | None = None,
              prog: str = "privbandit run",
              started: Callable[[Path | None, Sequence[Cell]], None] | None = None) -> BenchResult:
    """Run what ``privbandit run`` runs: ``agent`` (a name, a report label or ``"pkg.module:factory"``, with
    ``agent_kwargs`` and, when private, ``epsilon`` and ``delta``) on the registered ``env`` (with ``family``,
    ``dim`` and ``arms``) for ``seeds`` seeds of ``horizon`` rounds, into ``out`` when given (cells, ``results.csv``,
    figures, ``report.md``, ``board.html``), printing the headline table; ``label`` names it in the tables. ``jobs``,
    ``progress``, ``command``, ``prog`` and ``started`` are :func:`run_bench`'s (``started`` gets None for the folder
    when none is kept). Returns a :class:`BenchResult`; raises :class:`BenchError` for an unknown env or agent,
    arguments they refuse, or a budget that does not fit the agent.
    """
    grid, agent_label, env_label = _agent_grid(env, agent, horizon, epsilon, delta, seeds, agent_kwargs, label,
                                               dict(family=family, dim=dim, n_arms=arms))
    cells = grid.cells()
    if out is None:
        if started is not None:
            started(None, cells)
        with tempfile.TemporaryDirectory(prefix="privbandit-run-") as tmp:
            res = run_cells(cells, tmp, jobs=jobs, progress=progress, prog=prog)
        print(headline(res.table, res.planned))
        return _done(res.table, res.planned, sweep=res)
    given, out = out, output_folder(out, "--out")
    command = command or f"privbandit.bench.run_agent({env!r}, {agent!r}, {horizon})"
    with folder_lock(out):
        start = time.perf_counter()
        if started is not None:
            started(out, cells)
        res = run_cells(cells, out, jobs=jobs, progress=progress, prog=prog)
        notes = [f"command: `{command}`",
                 f"{len(cells)} cells ({len(res.ran)} run now, {len(res.skipped)} found finished); "
                 f"sweep wall time {time.perf_counter() - start:.1f} s with --jobs {jobs}"]
        notes, references = with_earlier(out, res.others, notes, {})
        title = f"privbandit run: {agent_label} on {env_label}" if not res.others else f"privbandit results: {out}"
        report = write_outputs(res.table, out, title=title, references=references or references_of(res.table),
                               notes=notes, planned=res.planned)
    print(headline(res.table, res.planned))
    if res.others:
        print(f"{given} also holds {len(res.others)} cells of earlier commands: results.csv and the report "
              "include them")
    print(f"results: {Path(given) / 'results.csv'}")
    return _done(res.table, res.planned, out=out, report=report, sweep=res)



def _agent_grid(env: str, agent: str, horizon: int, epsilon: float | None, delta: float, seeds: int,
                agent_kwargs: Mapping[str, Any] | None, label: str | None, env_options: dict) -> tuple[Any, str, str]:
    """The grid of :func:`run_agent` (one agent, one env), its agent's and env's labels; the agent, its keyword
    arguments, its budget and the env checked now (a :class:`BenchError` saying which is wrong)."""
    if env not in ENV_IDS:
        raise BenchError(f"--env must be one of {sorted(ENV_IDS)}, got {env!r}")
    name, kwargs = resolve_label(agent, dict(agent_kwargs or {}))
    try:
        agent_is_private(name)  # a registered name, an entry point or an import path
    except ValueError:
        raise BenchError(f"--agent must be one of {list(agent_names())}, a label of a report (e.g. linucb-practical) "
                         f"or an import path pkg.module:factory, got {agent!r}") from None
    try:
        private = agent_is_private(name, kwargs)  # the registration's (an oracle in the kwargs decides)
        if private is None:  # a factory that does not say: private when given a budget
            private = epsilon is not None
        AgentEntry(name, kwargs).build(1.0 if private else None, delta if private else None)  # the kwargs, checked now
        agent_label = label or (agent if name != agent and agent_kwargs is None
                                else kwargs_label(agent_name(name, kwargs), kwargs))
    except (TypeError, ValueError) as exc:
        said = None if agent_kwargs is None else json.dumps(dict(agent_kwargs))
        raise BenchError(f"--agent {agent} with --agent-kwargs {said}: {str(exc).splitlines()[0]}") from None
    if not private and epsilon is not None:
        raise BenchError(f"--epsilon applies to private agents only; {agent!r} is non-private")
    if private and epsilon is None:
        raise BenchError(f"{agent!r} is private: choose a budget with --epsilon, e.g. --epsilon 1")
    env_kwargs = {k: v for k, v in env_options.items() if v is not None}
    env_label = "-".join([env] + [f"{k}={v}" for k, v in env_kwargs.items()])
    env_entry = EnvEntry(env_label, env, env_kwargs)
    try:  # check the env kwargs now, with the library's message
        env_entry.make(horizon).close()
    except (TypeError, ValueError, gym.error.Error) as exc:
        raise BenchError(f"cannot make {env} with {env_kwargs}: {exc}") from None
    grid = Grid((AgentEntry(name, kwargs, label=agent_label, private=private),), (env_entry,),
                epsilons=(epsilon if private else 1.0,), seeds=seeds, horizon=horizon, delta=delta)
    return grid, agent_label, env_label


def replot(folder: str | os.PathLike, *, command: str | None = None) -> BenchResult:
    """Redraw what ``privbandit plot DIR`` redraws: the figures, ``report.md`` and ``board.html`` of a results
    folder, with the title, notes, counterparts and slope window of its last report (``report.json``); a
    :class:`BenchError` if it has no readable results table or cell files that fail the check."""
    from ..report.tables import RUN_KEYS

    folder = Path(folder)
    path = folder / "results.csv"
    if not path.is_file():
        raise BenchError(f"{folder} has no results.csv (make one with privbandit bench or run --out)")
    try:
        table = read_cell(path)
    except ValueError as exc:  # pandas' parser errors and undecodable bytes
        raise BenchError(f"{path} is not a privbandit results table ({str(exc).splitlines()[0]})") from None
    missing = [c for c in RUN_KEYS + ("t", "cum_regret", "epsilon_spent") if c not in table.columns]
    if missing or table.empty:
        why = f"it lacks the columns {missing}" if missing else "it has no rows"
        raise BenchError(f"{path} is not a privbandit results table (from bench or run --out): {why}")
    output_folder(folder, "DIR")
    with folder_lock(folder):
        bad = []
        for p in sorted((folder / "cells").glob("*.csv")):
            try:
                load_cell(p)
            except CellFileError as exc:
                bad.append((p.name, str(exc)))
        if bad:
            raise BenchError(f"{len(bad)} cell files in {folder / 'cells'} fail the check, so results.csv cannot be "
                             f"trusted ({bad[0][0]}: {bad[0][1]}{', ...' if len(bad) > 1 else ''}): rerun the "
                             "command that made the folder (bench or run --out) to move them aside and run them again")
        meta = read_meta(folder)  # keep the report's provenance (command, suite, wall time) and settings
        redrawn = f"redrawn by `{command or f'privbandit.bench.replot({str(folder)!r})'}`"
        notes = [n for n in meta.get("notes", ()) if isinstance(n, str) and not n.startswith("redrawn by")] + [redrawn]
        references = meta.get("references") if isinstance(meta.get("references"), dict) else references_of(table)
        window = meta.get("slope_window")
        window = tuple(window) if isinstance(window, list) and len(window) == 2 else (None, None)
        challenger = meta.get("challenger") if isinstance(meta.get("challenger"), str) else None
        reference = meta.get("reference") if isinstance(meta.get("reference"), str) else None
        try:
            planned = pd.DataFrame(meta.get("planned") or [], columns=list(PLANNED_COLUMNS)).astype(
                dict(env=str, agent=str, epsilon=float, horizon=int, n_planned=int))
        except (TypeError, ValueError):
            planned = None
        report = write_outputs(table, folder, title=str(meta.get("title", f"privbandit results: {folder}")),
                               references=references, notes=notes, slope_window=window, challenger=challenger,
                               reference=reference, planned=planned)
        print(f"figures: {folder / 'figures'}\nreport: {report}")
        return _done(table, planned, out=folder, report=report, challenger=challenger)


def _done(table: pd.DataFrame, planned: pd.DataFrame | None, **kwargs: Any) -> BenchResult:
    """The :class:`BenchResult` of a finished table, its completeness line printed (:func:`completion`)."""
    n = _incomplete(table, planned)
    if n:
        print(f"{n} groups incomplete: rerun to finish")
    return BenchResult(EXIT_INCOMPLETE if n else 0, n, **kwargs)


def store_suite(suite: str, out: str | os.PathLike | None = None, *, jobs: int = -1,
                dest: str | os.PathLike | None = None, streams_only: bool = False, progress: bool = True,
                prog: str = "privbandit store-reference",
                started: Callable[[Path, Sequence[Cell]], None] | None = None) -> tuple[Path, ...]:
    """Run what ``privbandit store-reference`` runs: the suite's cells into ``out`` (resumable), then its baseline
    cells packed with their manifest (:func:`~privbandit.bench.stored.pack_results`) into ``dest`` (default: the
    package data); with ``streams_only``, only the manifest's round-stream summaries are made again
    (:func:`~privbandit.bench.stored.refresh_stream_summaries`). Returns the archive and the manifest (the manifest
    alone with ``streams_only``); raises :class:`BenchError` for ``out`` missing (or given with ``streams_only``),
    or a cell missing or failing the check (run again to finish).
    """
    the_suite = get_suite(suite)
    cells = the_suite.cells()  # its baselines: a suite holds no challenger
    dest = None if dest is None else output_folder(dest, "--dest")
    if streams_only:
        if out is not None:
            raise BenchError("--streams-only runs no cell: give no --out")
        start = time.perf_counter()
        try:
            manifest = refresh_stream_summaries(the_suite, dest)
        except ValueError as exc:
            raise BenchError(str(exc)) from None
        print(f"{manifest}: round-stream summaries made again in {time.perf_counter() - start:.1f} s")
        return (manifest,)
    if out is None:
        raise BenchError("--out is required (the results folder of the cells), unless --streams-only")
    out = output_folder(out, "--out")
    start = time.perf_counter()
    if started is not None:
        started(out, cells)
    res = run_cells(cells, out, jobs=jobs, progress=progress, prog=prog)
    print(f"{len(res.ran)} cells run, {len(res.skipped)} found finished in {time.perf_counter() - start:.1f} s")
    command = f"privbandit store-reference --suite {shlex.quote(suite)} --out DIR --jobs {jobs}"
    try:
        archive, manifest = pack_results(the_suite, out, command, dest=dest)
    except ValueError as exc:  # a cell missing (a dead worker) or failing the check
        raise BenchError(f"{str(exc).splitlines()[0]} (run the same command again to finish)") from None
    print(f"{archive} ({archive.stat().st_size / 1024:.0f} KiB)\n{manifest}")
    return archive, manifest
