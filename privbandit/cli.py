"""The ``privbandit`` command: ``bench``, ``run``, ``plot``, ``audit``, ``leaderboard``, ``board``,
``store-reference`` and ``list`` (``privbandit COMMAND --help`` lists each one's options).

``bench`` runs a named suite (:mod:`privbandit.sim.suites`) cell by cell into ``DIR/cells`` (a rerun
skips finished cells), then writes ``DIR/results.csv`` (every cell of the folder, also those of earlier
commands), the figures ``DIR/figures/*.png``, ``DIR/report.md`` and ``DIR/report.json`` (the report's
title, provenance notes, references and slope window, which ``plot`` reuses). With ``--agent``, ``bench``
is a challenger run: the agent (a name, an entry point or an import path, :mod:`privbandit.registry`) joins
every block of the suite its privacy model fits, and the report adds its paired comparison with each
baseline and a leaderboard (:mod:`privbandit.sim.compare`). Its label is its own name (its registered
name, else the ``name`` attribute of its factory or agent: :func:`privbandit.sim.labels.agent_name`) with
its ``--agent-kwargs``, or ``--label``. A suite's cells (a challenger's baselines) come from the
suite's stored reference results where they match this install, cell by cell and every round of their round
streams (:mod:`privbandit.sim.reference`; ``--baselines``, said in one line): then only the others run (the
challenger's). Every label a report prints can be given to
``--agent`` again (``linucb-practical``, ``elim-jdp(first_epoch=4)``: :mod:`privbandit.sim.labels`).
``leaderboard`` ranks agents per board across results folders and stored results
(:mod:`privbandit.sim.leaderboard`); ``board`` draws them in one self-contained HTML page
(:mod:`privbandit.report.board`), which ``bench``, ``run --out`` and ``plot`` write as ``DIR/board.html``.
``store-reference`` regenerates a suite's stored reference results: it runs
the suite's cells into ``DIR`` (resumable, as ``bench``) and packs its baseline cells with their manifest
(:func:`privbandit.sim.reference.store_reference`) into the package data, or ``--dest``. ``run`` plays one agent on
one env for S seeds. ``audit`` is a privacy audit of a private agent (:mod:`privbandit.sim.audit`; its exit codes
are :func:`cmd_audit`'s). ``plot`` redraws the figures and the report of a results folder. Bad arguments exit with
code 2 and a one-line message; Ctrl-C exits with code 130 and says how many cells were saved.

A results folder is checked before it is trusted: ``bench`` and ``run`` move cell files that fail the check
(:func:`privbandit.sim.cells.load_cell`) to ``DIR/cells/rejected/``, say so on stderr and run those cells again;
``plot`` refuses a folder with such files. Two commands on one folder: the second exits with code 2
(``DIR/.lock``). A full disk exits with code 2 in one line, finished cells kept. When some group of the report
has fewer seeds than planned (a dead worker), the last line says ``N groups incomplete: rerun to finish`` and
the exit code is :data:`EXIT_INCOMPLETE` (3).
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import __version__


class UsageError(Exception):
    """A bad argument found after parsing (reported like argparse's errors, exit code 2)."""


WRITE_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR, errno.EEXIST})
"""OSError numbers that mean "this path cannot be written": reported in one line, exit code 2."""

FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""OSError numbers that mean "the disk is full": reported in one line, exit code 2."""

EXIT_INCOMPLETE = 3
"""Exit code of ``bench``, ``run`` and ``plot`` when some group of the report has fewer seeds than planned."""

EXIT_LEDGER = 4
"""Exit code of ``audit`` when the agent's ledger is missing or shows a user above the claim (unless refuted)."""

EXIT_CONTRACT = 5
"""Exit code of ``audit`` when a check of the agent contract that is not about privacy fails (unless refuted or
:data:`EXIT_LEDGER`): the agent breaks the interface the runner and the audit rely on."""

EXIT_CODES = ("exit codes: 0 done; 1 audit refuted (a privacy check of the contract or the empirical bound); 2 bad "
              f"arguments, a full disk or a folder in use by another command; {EXIT_INCOMPLETE} incomplete (some "
              f"group has fewer seeds than planned: rerun to finish); {EXIT_LEDGER} audit: ledger missing or above the "
              f"claim; {EXIT_CONTRACT} audit: contract failure, not a privacy finding; 130 interrupted")

REPORT_META = "report.json"
"""The file beside ``report.md`` that keeps its title, notes, references and slope window for ``plot``."""


def _output_folder(path: Path, what: str) -> Path:
    """``path`` as a folder the command can write (created if missing), else a :class:`UsageError`
    naming ``what`` (the argument)."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{what} must be a folder, got the file {path}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{what} {path}: cannot create the folder ({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path} is not writable (results, figures and report.md go there)")
    return path


def _argument(parse: Callable[[str], Any], accept: Callable[[Any], bool], allowed: str) -> Callable[[str], Any]:
    """An argparse ``type``: ``parse(text)`` when ``accept`` takes it, else "must be ALLOWED, got TEXT"."""
    def convert(text: str) -> Any:
        try:
            value = parse(text)
        except ValueError:
            value = None
        if value is None or not accept(value):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}")
        return value

    return convert


_positive_int = _argument(int, lambda v: v >= 1, "an integer >= 1")
_jobs = _argument(int, lambda v: v == -1 or v >= 1, "-1 (all cores) or an integer >= 1")
_epsilon = _argument(float, lambda v: v > 0 and math.isfinite(v), "a finite number > 0")
_delta = _argument(float, lambda v: 0 < v < 1, "a number in (0, 1)")
_labels = _argument(lambda text: tuple(t.strip() for t in text.split(",")), lambda v: all(v),
                    "a comma list of labels")
_epsilons = _argument(lambda text: tuple(float(t) for t in text.split(",")),
                      lambda v: all(e > 0 and math.isfinite(e) for e in v), "a comma list of finite numbers > 0")


def _add_bench_parser(sub) -> argparse.ArgumentParser:
    """The ``bench`` subcommand's parser, added to ``sub``."""
    from .agents.workers import BACKENDS
    from .bench.suites import SUITES

    b = sub.add_parser("bench", help="run a benchmark suite: results, figures and report.md", epilog=EXIT_CODES)
    b.add_argument("--suite", choices=sorted(SUITES), default="quick", help="the suite (default: quick)")
    b.add_argument("--out", type=Path, default=None, help="results folder (default: results/SUITE)")
    b.add_argument("--jobs", type=_jobs, default=-1, help="parallel workers (default -1: all cores)")
    b.add_argument("--backend", choices=BACKENDS, default="loky", help="joblib backend (dask/ray: the dist extra)")
    b.add_argument("--address", default=None, help="dask or ray scheduler address (default: a local cluster)")
    b.add_argument("--agent", default=None, help="a challenger: an agent name, entry point or import path "
                   "pkg.module:factory, run beside the baselines of every block its privacy model fits")
    b.add_argument("--private", choices=("jdp", "ldp"), default=None,
                   help="the challenger's privacy model (checked against its privacy spec)")
    b.add_argument("--reference", default=None, help="the baseline the challenger is compared with first")
    b.add_argument("--agent-kwargs", default=None, help='keyword arguments of the challenger as JSON, e.g. '
                   '\'{"radius": "practical"}\'')
    b.add_argument("--label", default=None,
                   help="the challenger's label in the tables (default: its registered name or its name attribute)")
    b.add_argument("--baselines", choices=("auto", "stored", "rerun"), default="auto",
                   help="the suite's cells (a challenger's baselines): taken from the stored reference results of "
                   "the suite where they match this version and these round streams, the others run (auto, stored: "
                   "the default, said in one line), or every one run again (rerun)")
    b.add_argument("--seeds", type=_positive_int, default=None, help="override the suite's number of seeds")
    b.add_argument("--horizon", type=_positive_int, default=None, help="override the suite's horizon T")
    b.add_argument("--delta", type=_delta, default=None,
                   help="override the suite's privacy delta of the private agents (the paper suite's is 1e-6)")
    b.add_argument("--agents", type=_labels, default=None,
                   help="run only these agents of the suite (comma list of labels, e.g. elim-jdp,linucb-practical)")
    b.add_argument("--envs", type=_labels, default=None,
                   help="run only these envs of the suite (comma list of labels, e.g. heavy-tailed-d10k10)")
    b.add_argument("--epsilons", type=_epsilons, default=None,
                   help="override the suite's epsilons of the private agents (comma list, e.g. 0.3,1)")
    b.add_argument("--env-kwargs", default=None,
                   help='keyword arguments added to every env of the run as JSON, e.g. \'{"reward": "linear-fit"}\' '
                   'for the real-data envs (their labels get the arguments as a suffix)')
    b.add_argument("--estimate", action="store_true",
                   help="only estimate the wall time on --jobs workers (one timed run per agent, env and horizon)")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")
    return b


def _add_run_parser(sub) -> argparse.ArgumentParser:
    """The ``run`` subcommand's parser, added to ``sub``."""
    r = sub.add_parser("run", help="one agent on one env for several seeds", epilog=EXIT_CODES)
    r.add_argument("--env", required=True, help="a registered env id, e.g. PrivLinCB-v0 (see: privbandit list envs)")
    r.add_argument("--agent", required=True, help="an agent name (see: privbandit list agents), a label of a report "
                   "(e.g. linucb-practical) or an import path pkg.module:factory")
    r.add_argument("--agent-kwargs", default=None, help='keyword arguments of the agent as JSON, e.g. '
                   '\'{"radius": "practical"}\'')
    r.add_argument("--label", default=None, help="the agent's label in the tables (default: its name and kwargs)")
    r.add_argument("--epsilon", type=_epsilon, default=None,
                   help="privacy epsilon of a private agent (required for private agents)")
    r.add_argument("--delta", type=_delta, default=1e-5, help="privacy delta of a private agent (default 1e-5)")
    r.add_argument("--horizon", type=_positive_int, required=True, help="rounds T")
    r.add_argument("--seeds", type=_positive_int, default=1, help="number of seeds (default 1)")
    r.add_argument("--family", default=None, help="context family (see: privbandit list families)")
    r.add_argument("--dim", type=_positive_int, default=None, help="feature dimension d")
    r.add_argument("--arms", type=_positive_int, default=None, help="number of arms K")
    r.add_argument("--out", type=Path, default=None, help="results folder (cells, results.csv, figures, report.md)")
    r.add_argument("--jobs", type=_jobs, default=1, help="parallel workers (default 1)")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    return r


def _add_plot_parser(sub) -> argparse.ArgumentParser:
    """The ``plot`` subcommand's parser, added to ``sub``."""
    pl = sub.add_parser("plot", help="redraw the figures and report.md of a results folder", epilog=EXIT_CODES)
    pl.add_argument("dir", type=Path, help="a folder with results.csv (from bench or run --out)")
    return pl


def _add_audit_parser(sub) -> argparse.ArgumentParser:
    """The ``audit`` subcommand's parser, added to ``sub``."""
    au = sub.add_parser("audit", help="privacy audit of a private agent: the contract's privacy checks, then an "
                        "empirical lower bound on its epsilon",
                        epilog=EXIT_CODES)
    au.add_argument("--agent", required=True, help="an agent name, entry point or import path pkg.module:factory")
    au.add_argument("--epsilon", type=_epsilon, required=True, help="the claimed epsilon the agent is built with")
    au.add_argument("--delta", type=_delta, default=1e-5, help="the claimed delta (default 1e-5)")
    au.add_argument("--agent-kwargs", default=None,
                    help='public hyperparameters of the agent as JSON, e.g. \'{"first_epoch": 1}\'')
    au.add_argument("--horizon", type=_positive_int, default=512,
                    help="the longest stream: target users whose first release comes later are left out (default 512)")
    au.add_argument("--draws", type=_positive_int, default=None, help="runs per stream of the test the pilot runs "
                    "choose, >= 100 (default 6000: enough to refute elim-jdp-ucb with a quarter of its noise at "
                    "epsilon 1; they stop early once the rest could refute the claim only with chance below 0.001); "
                    "the report says the largest epsilon these can detect")
    au.add_argument("--pilot-draws", type=_positive_int, default=None, help="runs per bisection step of the pilots, "
                    ">= 16 (default 64; the selection pilots run 4 times as many per stream; a deterministic agent "
                    "needs no more than 16)")
    au.add_argument("--quick", action="store_true", help="fewer runs (--draws 1500 --pilot-draws 32 unless given): "
                    "less power, which the report states (the largest epsilon it can refute)")
    au.add_argument("--jobs", type=_jobs, default=-1, help="parallel workers of the runs (default -1: all cores; "
                    "the results do not depend on it)")
    au.add_argument("--no-progress", action="store_true", help="no progress bar")
    au.add_argument("--seed", type=int, default=0, help="seed of the audit (default 0)")
    return au


def _add_result_sources(parser: argparse.ArgumentParser) -> None:
    """The results a ``leaderboard`` or ``board`` reads: folders (``DIR...``) and ``--stored SUITE``."""
    from .bench.suites import SUITES

    parser.add_argument("dirs", type=Path, nargs="*", metavar="DIR", help="folders with results.csv")
    parser.add_argument("--stored", choices=sorted(SUITES), action="append", default=[],
                        help="add the stored reference results of a suite (repeatable)")


def _add_leaderboard_parser(sub) -> argparse.ArgumentParser:
    """The ``leaderboard`` subcommand's parser, added to ``sub``."""
    lb = sub.add_parser("leaderboard", help="agents ranked by regret per env, privacy model and epsilon, across "
                        "results folders and stored reference results", epilog=EXIT_CODES)
    _add_result_sources(lb)
    lb.add_argument("--reference", default=None,
                    help="the agent each board is paired against (default: its best non-private agent)")
    return lb


def _add_board_parser(sub) -> argparse.ArgumentParser:
    """The ``board`` subcommand's parser, added to ``sub``."""
    bo = sub.add_parser("board", help="the results board: one self-contained HTML page (regret curves, the price of "
                        "privacy, the leaderboard) of results folders and stored reference results", epilog=EXIT_CODES)
    _add_result_sources(bo)
    bo.add_argument("--out", type=Path, required=True, help="the HTML file to write")
    return bo


def _add_store_reference_parser(sub) -> argparse.ArgumentParser:
    """The ``store-reference`` subcommand's parser."""
    from .bench.suites import SUITES

    sr = sub.add_parser("store-reference", help="run a suite's baseline cells and pack them as its stored reference "
                        "results (privbandit/data/reference/SUITE.tar.xz and SUITE.json)", epilog=EXIT_CODES)
    sr.add_argument("--suite", choices=sorted(SUITES), required=True, help="the suite")
    sr.add_argument("--out", type=Path, default=None,
                    help="results folder of the cells (a rerun resumes); required unless --streams-only")
    sr.add_argument("--jobs", type=_jobs, default=-1, help="parallel workers (default -1: all cores)")
    sr.add_argument("--dest", type=Path, default=None,
                    help="folder of the archive and manifest (default: the package's data/reference)")
    sr.add_argument("--streams-only", action="store_true",
                    help="rewrite only the manifest's round-stream summaries from this install's envs (the stored "
                    "cells are kept byte for byte; nothing runs)")
    sr.add_argument("--no-progress", action="store_true", help="no progress bar")
    return sr


def _add_list_parser(sub) -> argparse.ArgumentParser:
    """The ``list`` subcommand's parser, added to ``sub``."""
    ls = sub.add_parser("list", help="list what is registered")
    ls.add_argument("what", choices=("envs", "agents", "oracles", "families"))
    return ls


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``privbandit``."""
    p = argparse.ArgumentParser(prog="privbandit", description="Differentially private contextual bandits: "
                                "benchmarks, runs, plots.", epilog=EXIT_CODES)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True,
                           metavar="{bench,run,plot,audit,leaderboard,board,store-reference,list}")
    parsers = (_add_bench_parser(sub), _add_run_parser(sub), _add_plot_parser(sub), _add_audit_parser(sub),
               _add_leaderboard_parser(sub), _add_board_parser(sub), _add_store_reference_parser(sub),
               _add_list_parser(sub))
    for parser in parsers:  # errors found after parsing are reported as "privbandit COMMAND: error: ..."
        parser.set_defaults(subparser=parser)
    return p


def _finish(table, out: Path, *, title: str, references: dict, notes: list[str],
            slope_window=(None, None), challenger: str | None = None, reference: str | None = None,
            planned=None) -> Path:
    import matplotlib

    from .report.figures import save_standard_figures
    from .report.files import atomic_write
    from .report.tables import write_report

    matplotlib.use("Agg")
    figures = list(save_standard_figures(table, out / "figures")) if len(table) else []  # none: every cell lost
    sections = []
    if challenger is not None and challenger in set(table["agent"]):
        from .report.compare import challenger_figure, comparison_markdown
        from .report.leaderboard import leaderboard

        sections.append(comparison_markdown(table, challenger, reference))
        figures.append(challenger_figure(leaderboard(table), challenger, out / "figures" / "challenger.png"))
    report = write_report(table, out, title=title, references=references, figures=figures, notes=notes,
                          slope_window=slope_window, sections=sections, planned=planned)
    meta = dict(title=title, notes=list(notes), references=dict(references), slope_window=list(slope_window),
                challenger=challenger, reference=reference,
                planned=[] if planned is None else planned.to_dict(orient="records"))
    atomic_write(out / REPORT_META, json.dumps(meta, indent=1) + "\n")
    if len(table):  # the results board beside report.md (privbandit.report), from the files just written
        from .report import write_board

        write_board([out], out / "board.html", title=title)
    return report


def _run_sweep(args: argparse.Namespace, cells, out, *, kept: bool = True, **kwargs):
    """``sweep(cells, out, ...)`` on ``--jobs`` workers (a progress bar unless ``--no-progress``), saying on
    stderr which cell files failed the check (moved aside, run again) and which cells a dead worker lost.
    ``kept``: ``out`` outlives the command (what Ctrl-C says, :func:`_interrupted`)."""
    import warnings

    from .bench.sweep import CellFilesRejected, sweep

    args.sweep_state = (Path(out) if kept else None, cells)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CellFilesRejected)  # said below, one line per file
        res = sweep(cells, out, jobs=args.jobs, progress=not args.no_progress, **kwargs)
    prog = args.subparser.prog
    for name, why in res.rejected:
        print(f"{prog}: warning: cell file {name} failed the check ({why}): moved to "
              f"{Path(out) / 'cells' / 'rejected'} and run again", file=sys.stderr)
    if res.lost:
        print(f"{prog}: warning: a worker died; {len(res.lost)} cells not finished (a rerun runs them): "
              + ", ".join(res.lost), file=sys.stderr)
    return res


def _completion(table, planned) -> int:
    """Print the last line about completeness (how many groups of the report have fewer seeds than planned, a
    planned group with none too); the exit code."""
    from .report.tables import PLAN_KEYS, final_regret, incomplete_groups

    final = final_regret(table, planned=planned) if len(table) else None
    n = 0 if final is None else incomplete_groups(final)
    if planned is not None and len(planned):
        def key(r):
            return str(r["env"]), str(r["agent"]), float(r["epsilon"]), int(r["horizon"])

        found = set() if final is None else {key(r) for _, r in final[list(PLAN_KEYS)].iterrows()}
        n += sum(1 for _, r in planned.iterrows() if int(r["n_planned"]) > 0 and key(r) not in found)
    if n:
        print(f"{n} groups incomplete: rerun to finish")
        return EXIT_INCOMPLETE
    return 0


def _read_meta(folder: Path) -> dict:
    """The title, notes, references and slope window of the folder's last report (``report.json``); empty if
    there is none."""
    try:
        meta = json.loads((folder / REPORT_META).read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _with_earlier(out: Path, others: Sequence[str], notes: list[str], references: dict) -> tuple[list[str], dict]:
    """Notes and references of a report on a folder that also holds ``others``, cells of earlier commands:
    say so, and keep those commands' lines and references."""
    if not others:
        return notes, references
    meta = _read_meta(out)
    earlier = [n if n.startswith("earlier ") else f"earlier {n}" for n in meta.get("notes", ())
               if isinstance(n, str) and n.startswith(("command:", "earlier command:"))]
    notes = notes + [f"the folder also holds {len(others)} cells of earlier commands: results.csv and this report "
                     "include them"] + [n for n in dict.fromkeys(earlier) if n != f"earlier {notes[0]}"]
    old = meta.get("references", {})
    return notes, {**(old if isinstance(old, dict) else {}), **references}


def _headline(table, planned=None) -> str:
    from .report.tables import final_regret, headline_table, markdown_table

    return markdown_table(headline_table(final_regret(table, planned=planned)))


def cmd_bench(args: argparse.Namespace) -> int:
    """``privbandit bench``."""
    from dataclasses import replace

    from .bench.cells import folder_lock
    from .bench.suites import get_suite

    suite = get_suite(args.suite)
    challenger = None
    if args.agent is None:
        if any(v is not None for v in (args.private, args.reference, args.agent_kwargs, args.label)):
            raise UsageError("--private, --reference, --agent-kwargs and --label describe a challenger: give it "
                             "with --agent")
        suite = replace(suite, grids=_overridden(suite.available_grids(), args))
    elif any(v is not None for v in (args.agents, args.envs, args.epsilons, args.env_kwargs)):
        raise UsageError("--agents, --envs, --epsilons and --env-kwargs choose the suite's cells: a challenger "
                         "(--agent) runs beside the whole suite")
    else:
        suite, challenger = _challenger_suite(suite, args)
    cells = suite.cells()
    if not cells:
        raise UsageError(f"suite {args.suite!r} has no agent available in this install")
    if args.estimate:
        from .bench.sweep import estimate

        print(estimate(cells, args.jobs).line())
        return 0
    out = _output_folder(args.out or Path("results") / args.suite, "--out")
    with folder_lock(out):
        return _bench(args, suite, cells, out, challenger)


def _overridden(grids, args: argparse.Namespace) -> tuple:
    """The grids with ``--seeds``, ``--horizon``, ``--delta`` and ``--epsilons`` where given, and only the agents
    of ``--agents`` and the envs of ``--envs`` (grids left empty are dropped)."""
    from dataclasses import replace

    from .bench.suites import get_suite

    agents, envs, whole = args.agents, args.envs, get_suite(args.suite).grids
    for what, chosen, known in (("--agents", agents, {a.label for g in whole for a in g.agents}),
                                ("--envs", envs, {e.label for g in whole for e in g.envs})):
        unknown = sorted(set(chosen or ()) - known)
        if unknown:
            raise UsageError(f"{what}: {', '.join(unknown)} not in suite {args.suite!r}; choose from {sorted(known)}")
    out = []
    extra = _json_object("--env-kwargs", args.env_kwargs, '{"reward": "linear-fit"}')
    for g in grids:
        kept_agents = tuple(a for a in g.agents if agents is None or a.label in agents)
        kept_envs = tuple(_with_kwargs(e, extra) for e in g.envs if envs is None or e.label in envs)
        if kept_agents and kept_envs:
            out.append(replace(g, agents=kept_agents, envs=kept_envs, seeds=args.seeds or g.seeds,
                               horizon=args.horizon or g.horizon, delta=args.delta or g.delta,
                               epsilons=args.epsilons or g.epsilons))
    return tuple(out)


def _with_kwargs(entry, extra: dict):
    """The env entry with ``extra`` keyword arguments (``--env-kwargs``) and a label saying them, checked by making
    the env (a :class:`UsageError` naming the env if it refuses them)."""
    if not extra:
        return entry
    from .bench.grid import EnvEntry

    suffix = ",".join(f"{k}={v}" for k, v in sorted(extra.items()))
    new = EnvEntry(f"{entry.label}[{suffix}]", entry.env_id, {**dict(entry.kwargs), **extra})
    try:
        new.make(1).close()
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--env-kwargs: env {entry.label} ({entry.env_id}) refuses them: {exc}") from None
    return new


def _bench(args: argparse.Namespace, suite, cells, out: Path, challenger: str | None) -> int:
    from dataclasses import replace

    from .bench.suites import get_suite

    start = time.perf_counter()
    args.sweep_state = (out, cells)
    full = get_suite(args.suite)
    left_out = replace(full, grids=_overridden(full.grids, args)).left_out()
    if left_out:  # said before the progress bar
        print(f"{args.subparser.prog}: {left_out}", file=sys.stderr)
    stored = _stored_baselines(args, cells, out, challenger)
    res = _run_sweep(args, cells, out, backend=args.backend, address=args.address)
    wall = time.perf_counter() - start
    notes = [f"command: `privbandit {' '.join(shlex.quote(a) for a in args.argv)}`",
             f"suite `{suite.name}`: {suite.description}",
             f"{len(cells)} cells ({len(res.ran)} run now, {len(res.skipped)} found finished); "
             f"sweep wall time {wall:.1f} s with --jobs {args.jobs} --backend {args.backend}"]
    if left_out:
        notes.append(left_out)
    if challenger is not None:
        notes.append(f"challenger `{challenger}` ({args.agent}) beside the baselines of every block its privacy "
                     "model fits" + (f"; reference `{args.reference}`" if args.reference else ""))
    if stored is not None:
        notes.append(stored)
    notes, references = _with_earlier(out, res.others, notes, suite.references())
    title = f"privbandit benchmark: {suite.name}" + (f", challenger {challenger}" if challenger else "")
    report = _finish(res.table, out, title=title, references=references, notes=notes,
                     slope_window=suite.slope_window, challenger=challenger, reference=args.reference,
                     planned=res.planned)
    total = time.perf_counter() - start
    if challenger is not None and challenger in set(res.table["agent"]):
        from .report.compare import comparison_lines

        print(comparison_lines(res.table, challenger, args.reference))
    else:
        print(_headline(res.table, res.planned))
    print(f"\n{len(cells)} cells ({len(res.ran)} run, {len(res.skipped)} already finished); wall time {total:.1f} s")
    if res.others:
        print(f"{out} also holds {len(res.others)} cells of earlier commands: results.csv and the report include them")
    print(f"report: {report}")
    return _completion(res.table, res.planned)


def _stored_baselines(args: argparse.Namespace, cells, out: Path, challenger: str | None) -> str | None:
    """Put the suite's stored cells into ``out/cells`` where they can stand in for a run here, cell by cell
    (:func:`privbandit.sim.reference.match_reference`, every round of every stream checked): the cells of a suite
    run, the baselines of a challenger run, only those ``out`` does not hold yet. Returns the report's line on where
    they came from (None when ``out`` already held them all), which is also printed: on stderr when some did not
    match (those run), else on stdout."""
    from .bench.cells import cell_path
    from .bench.stored import install_reference, match_reference
    from .bench.suites import get_suite

    what, whose = ("cells", "cells") if challenger is None else ("baseline cells", "baselines")
    baselines = [c for c in cells if c.agent.label != challenger and not cell_path(out / "cells", c).exists()]
    if args.baselines == "rerun":
        held = sum(1 for c in cells if c.agent.label != challenger) - len(baselines)
        line = f"{what} run again (--baselines rerun)" + (
            f"; the {held} that {out} already holds are kept (a new --out runs every one)" if held else "")
        print(f"{args.subparser.prog}: {line}")
        return line
    if not baselines:
        return None
    if any(v is not None for v in (args.seeds, args.horizon, args.delta)):
        line = (f"stored {whose} not used (--seeds, --horizon and --delta change the {what}: the stored ones are the "
                f"suite's own): the {whose} run" + (" again" if challenger is not None else ""))
        # a suite run shrunk as asked: a note on stdout; a challenger's baselines that run again: stderr
        print(f"{args.subparser.prog}: {line}", file=sys.stdout if challenger is None else sys.stderr)
        return line
    match = match_reference(get_suite(args.suite), baselines)
    problems, usable, unstored, inexact = list(match.problems), match.usable, match.unstored, match.inexact
    if not usable:
        line = f"stored {whose} not used (" + "; ".join(problems or ["the stored results hold none of them"]) + \
               f"): the {whose} run" + (" again" if challenger is not None else "")
        print(f"{args.subparser.prog}: {line}", file=sys.stderr)
        return line
    if unstored:
        agents = sorted({c.agent.label for c in baselines if c.key in set(unstored)})
        problems.append(f"{len(unstored)} {what} are not in the stored results and run (agents: "
                        f"{', '.join(agents)})")
    names = install_reference(get_suite(args.suite), out, set(usable))
    line = (f"{len(names)} {what} from the stored reference results of suite `{args.suite}` (results version, cell "
            "identities and every round of their round streams checked against this install"
            + ("; --baselines rerun runs them)" if challenger is None else
               "); the challenger is paired with them by seed"))
    if inexact:
        line += (f"; {len(inexact)} of their round streams equal the stored ones up to rounding, not bit for bit "
                 "(another CPU or BLAS computed them)")
    if problems:
        print(f"{args.subparser.prog}: stored {whose} used for {len(names)} of {len(baselines)} cells; the others "
              "run again: " + "; ".join(problems), file=sys.stderr)
        line += "; the others run again: " + "; ".join(problems)
    else:
        print(f"{args.subparser.prog}: {line}")
    return line


def _challenger_suite(suite, args: argparse.Namespace):
    """The suite with ``--agent`` added to every block its privacy model fits, and the challenger's label."""
    from .bench.challenger import challenger_entry, challenger_suite

    try:
        entry = challenger_entry(args.agent, private=args.private, reference=args.reference, label=args.label,
                                 kwargs=_agent_kwargs(args))
        ran = challenger_suite(suite, entry, seeds=args.seeds, horizon=args.horizon, delta=args.delta)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--agent {args.agent}: {str(exc).splitlines()[0]}") from None
    if args.reference is not None:
        labels = sorted({a.label for g in ran.grids for a in g.agents} - {entry.label})
        if args.reference not in labels:
            raise UsageError(f"--reference must be a baseline of the blocks the challenger joins, one of {labels}; "
                             f"got {args.reference!r}")
    return ran, entry.label


def cmd_run(args: argparse.Namespace) -> int:
    """``privbandit run``."""
    import gymnasium as gym

    from .agents import agent_is_private, agent_names
    from .bench.cells import folder_lock
    from .bench.grid import AgentEntry, EnvEntry, Grid
    from .bench.labels import agent_name, kwargs_label, resolve_label
    from .envs.registration import ENV_IDS

    if args.env not in ENV_IDS:
        raise UsageError(f"--env must be one of {sorted(ENV_IDS)}, got {args.env!r}")

    name, kwargs = resolve_label(args.agent, _agent_kwargs(args))
    try:
        agent_is_private(name)  # a registered name, an entry point or an import path
    except ValueError:
        raise UsageError(f"--agent must be one of {list(agent_names())}, a label of a report (e.g. linucb-practical) "
                         f"or an import path pkg.module:factory, got {args.agent!r}") from None
    try:
        entry = AgentEntry(name, kwargs)
        private = entry.is_private()
        entry.build(1.0 if private else None, args.delta if private else None)  # the kwargs, checked now
        agent_label = args.label or (args.agent if name != args.agent and args.agent_kwargs is None
                                     else kwargs_label(agent_name(name, kwargs), kwargs))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--agent {args.agent} with --agent-kwargs {args.agent_kwargs}: "
                         f"{str(exc).splitlines()[0]}") from None
    if not private and args.epsilon is not None:
        raise UsageError(f"--epsilon applies to private agents only; {args.agent!r} is non-private")
    if private and args.epsilon is None:
        raise UsageError(f"{args.agent!r} is private: choose a budget with --epsilon, e.g. --epsilon 1")
    env_kwargs = {k: v for k, v in dict(family=args.family, dim=args.dim, n_arms=args.arms).items() if v is not None}
    label = "-".join([args.env] + [f"{k}={v}" for k, v in env_kwargs.items()])
    env_entry = EnvEntry(label, args.env, env_kwargs)
    try:  # check the env kwargs now, with the library's message
        env_entry.make(args.horizon).close()
    except (TypeError, ValueError, gym.error.Error) as exc:
        raise UsageError(f"cannot make {args.env} with {env_kwargs}: {exc}") from None
    grid = Grid((AgentEntry(name, kwargs, label=agent_label, private=private),), (env_entry,),
                epsilons=(args.epsilon if private else 1.0,), seeds=args.seeds, horizon=args.horizon, delta=args.delta)
    cells = grid.cells()
    if args.out is None:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="privbandit-run-") as tmp:
            res = _run_sweep(args, cells, tmp, kept=False)
        print(_headline(res.table, res.planned))
        return _completion(res.table, res.planned)
    out = _output_folder(args.out, "--out")
    with folder_lock(out):
        start = time.perf_counter()
        res = _run_sweep(args, cells, out)
        notes = [f"command: `privbandit {' '.join(shlex.quote(a) for a in args.argv)}`",
                 f"{len(cells)} cells ({len(res.ran)} run now, {len(res.skipped)} found finished); "
                 f"sweep wall time {time.perf_counter() - start:.1f} s with --jobs {args.jobs}"]
        notes, references = _with_earlier(out, res.others, notes, {})
        title = f"privbandit run: {agent_label} on {label}" if not res.others else f"privbandit results: {out}"
        _finish(res.table, out, title=title, references=references or _references(res.table), notes=notes,
                planned=res.planned)
    print(_headline(res.table, res.planned))
    if res.others:
        print(f"{args.out} also holds {len(res.others)} cells of earlier commands: results.csv and the report "
              "include them")
    print(f"results: {args.out / 'results.csv'}")
    return _completion(res.table, res.planned)


def cmd_plot(args: argparse.Namespace) -> int:
    """``privbandit plot DIR``."""
    from .report.files import read_cell
    from .report.tables import RUN_KEYS

    path = args.dir / "results.csv"
    if not path.is_file():
        raise UsageError(f"{args.dir} has no results.csv (make one with privbandit bench or run --out)")
    try:
        table = read_cell(path)
    except ValueError as exc:  # pandas' parser errors and undecodable bytes
        raise UsageError(f"{path} is not a privbandit results table ({str(exc).splitlines()[0]})") from None
    missing = [c for c in RUN_KEYS + ("t", "cum_regret", "epsilon_spent") if c not in table.columns]
    if missing or table.empty:
        why = f"it lacks the columns {missing}" if missing else "it has no rows"
        raise UsageError(f"{path} is not a privbandit results table (from bench or run --out): {why}")
    _output_folder(args.dir, "DIR")
    from .bench.cells import folder_lock

    with folder_lock(args.dir):
        return _plot(args, table)


def _damaged_cells(folder: Path) -> list[tuple[str, str]]:
    """The cell files of ``folder/cells`` that fail :func:`~privbandit.sim.cells.load_cell` (name, reason)."""
    from .bench.cells import CellFileError, load_cell

    bad = []
    for p in sorted((folder / "cells").glob("*.csv")):
        try:
            load_cell(p)
        except CellFileError as exc:
            bad.append((p.name, str(exc)))
    return bad


def _plot(args: argparse.Namespace, table) -> int:
    import pandas as pd

    from .bench.sweep import PLANNED_COLUMNS

    bad = _damaged_cells(args.dir)
    if bad:
        raise UsageError(f"{len(bad)} cell files in {args.dir / 'cells'} fail the check, so results.csv cannot be "
                         f"trusted ({bad[0][0]}: {bad[0][1]}{', ...' if len(bad) > 1 else ''}): rerun the command "
                         "that made the folder (bench or run --out) to move them aside and run them again")
    meta = _read_meta(args.dir)  # keep the report's provenance (command, suite, wall time) and settings
    redrawn = f"redrawn by `privbandit plot {shlex.quote(str(args.dir))}`"
    notes = [n for n in meta.get("notes", ()) if isinstance(n, str) and not n.startswith("redrawn by")] + [redrawn]
    references = meta.get("references") if isinstance(meta.get("references"), dict) else _references(table)
    window = meta.get("slope_window")
    window = tuple(window) if isinstance(window, list) and len(window) == 2 else (None, None)
    challenger = meta.get("challenger") if isinstance(meta.get("challenger"), str) else None
    reference = meta.get("reference") if isinstance(meta.get("reference"), str) else None
    try:
        planned = pd.DataFrame(meta.get("planned") or [], columns=list(PLANNED_COLUMNS)).astype(
            dict(env=str, agent=str, epsilon=float, horizon=int, n_planned=int))
    except (TypeError, ValueError):
        planned = None
    report = _finish(table, args.dir, title=str(meta.get("title", f"privbandit results: {args.dir}")),
                     references=references, notes=notes, slope_window=window, challenger=challenger,
                     reference=reference, planned=planned)
    print(f"figures: {args.dir / 'figures'}\nreport: {report}")
    return _completion(table, planned)


def _references(table) -> dict[str, str]:
    from .bench.suites import SUITES

    labels = set(table["agent"])
    return {k: v for suite in SUITES.values() for k, v in suite.references().items() if k in labels and v in labels}


def cmd_list(args: argparse.Namespace) -> int:
    """``privbandit list envs|agents|oracles|families``."""
    if args.what == "envs":
        from .envs.registration import ENV_IDS

        for name in sorted(ENV_IDS):
            print(name)
    elif args.what == "agents":
        from .agents import agent_descriptions

        for name, text in agent_descriptions().items():
            print(f"{name:24s} {text}")
    elif args.what == "oracles":
        from .oracles import oracle_class, oracle_names
        from .registry import first_doc_line

        for name in oracle_names():
            print(f"{name:24s} {first_doc_line(oracle_class(name))}")
    else:
        from .envs import family_names

        for name in family_names():
            print(name)
    return 0


def _agent_kwargs(args: argparse.Namespace) -> dict:
    """``--agent-kwargs`` as a dict (empty if not given), else a :class:`UsageError`."""
    return _json_object("--agent-kwargs", args.agent_kwargs, '{"first_epoch": 1}')


def _json_object(option: str, text: str | None, example: str) -> dict:
    """The JSON object ``text`` of ``option`` as a dict (empty if not given), else a :class:`UsageError`."""
    if text is None:
        return {}
    try:
        kwargs = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{option} must be a JSON object, e.g. '{example}' ({exc})") from None
    if not isinstance(kwargs, dict):
        raise UsageError(f"{option} must be a JSON object, got {text!r}")
    return kwargs


def cmd_audit(args: argparse.Namespace) -> int:
    """``privbandit audit``: prints the contract stage (the privacy checks of the agent contract on several target
    users), the empirical lower bound and the agent's own ledger; exit code 1 if refuted (by a privacy check of the
    contract or by the bound), else :data:`EXIT_LEDGER` if the ledger is missing or above the claim (whatever the
    bound says), else :data:`EXIT_CONTRACT` if a check that is not about privacy failed."""
    from .agents.audit import CONTRACT_NOT_PRIVACY, FULL, QUICK, audit_agent
    from .oracles import ContractError

    kwargs = _agent_kwargs(args)
    sizes = dict(QUICK if args.quick else FULL)
    sizes.update({k: v for k, v in (("n_draws", args.draws), ("pilot_draws", args.pilot_draws)) if v is not None})
    try:
        res = audit_agent(args.agent, args.epsilon, args.delta, agent_kwargs=kwargs, max_horizon=args.horizon,
                          seed=args.seed, progress=not args.no_progress, jobs=args.jobs, **sizes)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--agent {args.agent}: {str(exc).splitlines()[0]}") from None
    except ContractError as exc:  # the agent cannot be played through its interface: no claim to test
        print(f"privbandit audit: {CONTRACT_NOT_PRIVACY}: {str(exc).splitlines()[0]}", file=sys.stderr)
        return EXIT_CONTRACT
    print("\n".join(res.lines()))
    return 1 if res.refuted else EXIT_LEDGER if not res.ledger_ok else EXIT_CONTRACT if not res.contract_ok else 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """``privbandit leaderboard DIR...``: the ranked boards of :mod:`privbandit.sim.leaderboard`."""
    from .bench.stored import stored_results
    from .report.leaderboard import leaderboard_markdown, ranked_boards, read_results

    try:  # a folder without results.csv, a table that does not parse, no results to rank: one line
        tables = [read_results(d) for d in args.dirs]
        for suite in args.stored:
            tables.append(stored_results(suite))
            if tables[-1].empty:
                raise UsageError(f"--stored {suite}: no stored reference results for this suite in this install")
        if not tables:
            raise UsageError("give results folders (DIR...) or --stored SUITE")
        print(leaderboard_markdown(ranked_boards(tables, args.reference)))
    except ValueError as exc:
        raise UsageError(str(exc).splitlines()[0]) from None
    return 0


def cmd_board(args: argparse.Namespace) -> int:
    """``privbandit board DIR... --out FILE``: the results board of :mod:`privbandit.report.board`."""
    from .bench.stored import stored_source
    from .report import write_board

    if not args.dirs and not args.stored:
        raise UsageError("give results folders (DIR...) or --stored SUITE")
    if args.out.is_dir() or not args.out.parent.is_dir():  # said before the work, not after
        raise UsageError(f"--out {args.out}: " + ("a folder: give a file name, e.g. board.html" if args.out.is_dir()
                                                  else f"no folder {args.out.parent} to write it in"))
    try:  # a folder without results.csv, a table that does not parse, a suite with no stored results: one line
        out = write_board(args.dirs, args.out, stored=[stored_source(s) for s in args.stored])
    except ValueError as exc:
        raise UsageError(str(exc).splitlines()[0]) from None
    print(f"board: {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return 0


def cmd_store_reference(args: argparse.Namespace) -> int:
    """``privbandit store-reference``: the suite's cells into ``--out`` (resumable), then its baseline cells
    packed with their manifest (:func:`privbandit.sim.reference.store_reference`), whose ``command`` is this
    command with ``--out DIR``. With ``--streams-only``, only the manifest's round-stream summaries are made again
    (:func:`privbandit.sim.reference.refresh_stream_summaries`)."""
    from .bench.stored import refresh_stream_summaries, store_reference
    from .bench.suites import get_suite

    suite = get_suite(args.suite)
    cells = suite.cells()  # its baselines: a suite holds no challenger
    dest = None if args.dest is None else _output_folder(args.dest, "--dest")
    if args.streams_only:
        if args.out is not None:
            raise UsageError("--streams-only runs no cell: give no --out")
        start = time.perf_counter()
        try:
            manifest = refresh_stream_summaries(suite, dest)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        print(f"{manifest}: round-stream summaries made again in {time.perf_counter() - start:.1f} s")
        return 0
    if args.out is None:
        raise UsageError("--out is required (the results folder of the cells), unless --streams-only")
    out = _output_folder(args.out, "--out")
    start = time.perf_counter()
    res = _run_sweep(args, cells, out)
    print(f"{len(res.ran)} cells run, {len(res.skipped)} found finished in {time.perf_counter() - start:.1f} s")
    command = f"privbandit store-reference --suite {shlex.quote(args.suite)} --out DIR --jobs {args.jobs}"
    try:
        archive, manifest = store_reference(suite, out, command, dest=dest)
    except ValueError as exc:  # a cell missing (a dead worker) or failing the check
        raise UsageError(f"{str(exc).splitlines()[0]} (run the same command again to finish)") from None
    print(f"{archive} ({archive.stat().st_size / 1024:.0f} KiB)\n{manifest}")
    return 0


COMMANDS = {"bench": cmd_bench, "run": cmd_run, "plot": cmd_plot, "audit": cmd_audit, "leaderboard": cmd_leaderboard,
            "board": cmd_board, "store-reference": cmd_store_reference, "list": cmd_list}


def _interrupted(args: argparse.Namespace | None) -> str:
    """The line printed on Ctrl-C: how many cells of the command are saved, and how to resume."""
    from .bench.cells import cell_path

    out, cells = getattr(args, "sweep_state", (None, None))
    if cells is None:
        return "interrupted"
    if out is None:
        return "interrupted: nothing saved (run keeps its cells only with --out DIR)"
    done = sum(cell_path(out / "cells", c).exists() for c in cells)
    return f"interrupted: {done} of {len(cells)} cells saved in {out}; run the same command again to resume"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``privbandit`` console script; returns the exit code (2 on bad arguments, 130 on
    Ctrl-C)."""
    args = None
    try:
        parser = build_parser()
        argv = list(sys.argv[1:] if argv is None else argv)
        args = parser.parse_args(argv)  # exits with code 2 on a parse error
        args.argv = argv
        sub = args.subparser

        def error(message: str) -> None:  # one line, "privbandit run: error: ...", exit code 2
            sub.exit(2, f"{sub.prog}: error: {message}\n")

        from .bench.cells import FolderLocked
        from .registry import PluginError

        try:
            return COMMANDS[args.command](args)
        except (UsageError, PluginError, FolderLocked) as exc:  # a plugin that cannot be imported says why, in one line
            error(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        except ImportError as exc:  # an optional backend that is not installed
            from .agents.workers import BackendUnavailable

            if isinstance(exc, BackendUnavailable):
                error(str(exc))
            raise
        except OSError as exc:  # a path that cannot be written (read-only, not a folder, ...)
            if exc.errno in WRITE_ERRNOS and exc.filename:
                error(f"cannot write {exc.filename}: {exc.strerror}")
            if exc.errno in FULL_ERRNOS:
                where = f" {exc.filename}" if exc.filename else ""
                error(f"cannot write{where}: {exc.strerror or os.strerror(exc.errno)} (no partial file is kept; "
                      "free some space and run the same command again to finish)")
            raise
    except KeyboardInterrupt:
        print(_interrupted(args), file=sys.stderr)
        return 130
    return 1  # pragma: no cover - parser.error exits


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
