"""Sphinx configuration of the privbandit documentation.

The build imports the package from this checkout (the repository root goes first on ``sys.path``) and runs
nine generators before reading the sources, each writing under ``docs/_generated/`` (never committed):

- ``scripts/make_docs_catalogue.py``: the agent and oracle catalogue, the env cards and the pictures of the
  context families, read from the registries;
- ``scripts/make_docs_tables.py``: the results page's tables and figures, read from a results folder that
  ``privbandit bench`` wrote (``PRIVBANDIT_DOCS_RESULTS``; see :func:`_results_folder`), and the paper suite's
  leaderboards, from its stored reference results (see :func:`_paper_results`);
- ``scripts/make_docs_interop.py``: the measured parts of the rendering and interop guide: the per-frame render
  cost, timed at build time, and Open Bandit Pipeline's estimates, read from ``docs/data/obp_offpolicy.json``
  (written by ``scripts/obp_offpolicy.py``, run by hand where OBP is installed);
- ``scripts/bench_rates.py --from docs/data/rates.csv --markdown``: the measured regret exponents beside the
  paper's, fitted from the runs the full-size command saved (hours of CPU, so run by hand and committed);
- ``scripts/bench_pooled.py --from-csv docs/data/pooled_jdp.csv,docs/data/pooled_ldp.csv --markdown``: the
  pooled agents' regret and the coverage of their widths, from the runs its commands saved (committed likewise);
- ``scripts/rerun_stored.py --from docs/data/rerun_stored.csv --markdown``: stored baseline cells run again with
  other CPU settings, against their stored tables (committed likewise);
- ``scripts/ldp_boards.py DIR --markdown docs/_generated/ldp`` on the paper suite's results folder and
  ``scripts/ldp_boards.py --from-csv docs/data/ldp_heldout.csv --markdown docs/_generated/ldp_heldout``: the
  local-DP boards against their targets, the best agent per board and horizon, and the held-out settings;
- ``scripts/study_ldp_cost.py --from docs/data/ldp_cost.csv --markdown docs/_generated/ldp_cost``: the tables of
  the local-DP cost study (``docs/guide/ldp_cost.md``) and the bullets that read them, from the run its command
  saved (committed likewise);
- the API listing below (:func:`_write_api`), from the public modules' ``__all__``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
GENERATED = DOCS / "_generated"
sys.path.insert(0, str(ROOT))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # kernels too
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])  # `privbandit`

import privbandit  # noqa: E402

project = "privbandit"
author = "the privbandit authors"
copyright = "2026, the privbandit authors"
release = version = privbandit.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "myst_nb",
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints", "jupyter_execute"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}

html_theme = "furo"
html_title = f"privbandit {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_extra_path = ["_generated/boards"]  # the results boards (conf.py's _board), self-contained HTML pages

myst_enable_extensions = ["colon_fence", "dollarmath", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "force"          # every notebook and tutorial runs at build time
nb_execution_raise_on_error = True   # a failing cell fails the build
nb_execution_timeout = 300
nb_execution_in_temp = True         # files a notebook writes go to a temporary folder
nb_merge_streams = True

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
suppress_warnings = ["myst.header"]   # docstring env cards start at level-2 headings

# --- the API reference: every public name of the public modules, by the path a user imports it from ---------
PUBLIC_MODULES = [
    ("privbandit.envs", "Environments and context families"),
    ("privbandit.agents", "Agents"),
    ("privbandit.protocols", "Interfaces: what the runner needs of an agent"),
    ("privbandit.constraints", "Constraint types of hyperparameters"),
    ("privbandit.oracles", "Regression oracles"),
    ("privbandit.privacy", "Privacy: specs, mechanisms, ledger, audits"),
    ("privbandit.infomatrix", "Information matrices"),
    ("privbandit.linalg", "Symmetric and PSD matrices"),
    ("privbandit.sim", "One run: the runner and bandit feedback"),
    ("privbandit.bench", "The benchmark: sweeps, suites, stored results, challengers"),
    ("privbandit.bench.workflow", "The bench workflow: what privbandit bench, run and plot run"),
    ("privbandit.agents.audit", "End-to-end privacy audits"),
    ("privbandit.report", "Reports: tables, leaderboard, paired comparisons, the results board"),
    ("privbandit.report.figures", "Plots"),
    ("privbandit.links", "Link functions"),
    ("privbandit.integrations.coba", "coba integration"),
    ("privbandit", "Top-level names"),
]


def public_names(module_name: str) -> list[str]:
    """The module's ``__all__`` (submodules left out), or its public functions and classes defined there."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, obj in vars(module).items() if not n.startswith("_")
                 and (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module_name]
    return [n for n in names if not inspect.ismodule(getattr(module, n))]


API_INTRO = """API reference
=============

Every public name, listed by the module a user imports it from (each module's ``__all__``). A name that several
modules export is listed once, under the first of them below.

"""


def _write_api() -> None:
    """``api.rst``: one autosummary per public module; an object re-exported by several modules is
    listed under the first (so every name has one page, and a move between private modules changes nothing)."""
    seen: dict[int, str] = {}
    lines, listed = [API_INTRO], set()
    for module_name, title in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        entries = []
        for name in public_names(module_name):
            obj = getattr(module, name)
            if (inspect.isclass(obj) or callable(obj)) and id(obj) in seen:
                continue
            if inspect.isclass(obj) or callable(obj):
                seen[id(obj)] = f"{module_name}.{name}"
                entries.append(f"{module_name}.{name}")
        listed.update(entries)
        if not entries:
            continue
        lines += [title, "-" * len(title), "", f".. currentmodule:: {module_name}", "",
                  f"``{module_name}``", "", ".. autosummary::", "   :toctree: reference", "   :nosignatures:", ""]
        lines += [f"   {e.rsplit('.', 1)[1] if module_name != 'privbandit' else e.rsplit('.', 1)[1]}" for e in entries]
        lines.append("")
    _write(DOCS / "api.rst", "\n".join(lines))
    for stub in (DOCS / "reference").glob("*.rst"):   # pages of names that moved or went: -W would warn on them
        if stub.stem not in listed:
            stub.unlink()


def _write(path: Path, text: str) -> None:
    """Write ``text`` only if it changed (keeps Sphinx's incremental builds incremental)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _results_folder() -> Path:
    """The results folder the results page is made from.

    ``PRIVBANDIT_DOCS_RESULTS`` names a folder that ``privbandit bench`` wrote (``results.csv`` and
    ``report.json`` inside). Unset, the build runs the quick suite into ``docs/_build/results/quick``: ``bench``
    takes the stored reference results of the quick suite where they match this install (every round stream
    checked, :func:`privbandit.bench.stored.match_stored`), so the suite finds its cells finished and only
    writes its tables (the same tables a full run gives: the stored cells are checked to re-run equal by
    ``tests/bench/test_reference.py``); it runs the cells that do not match.
    """
    given = os.environ.get("PRIVBANDIT_DOCS_RESULTS")
    if given:
        folder = Path(given)
        if not (folder / "results.csv").is_file():
            raise SystemExit(f"PRIVBANDIT_DOCS_RESULTS={given}: no results.csv there; make one with "
                             "`privbandit bench --suite quick --out DIR` or unset the variable")
        return folder
    folder = Path("docs/_build/results/quick")        # relative: the command printed is the one to type
    print(f"privbandit docs: the quick suite into {folder} (set PRIVBANDIT_DOCS_RESULTS to reuse a folder)")
    subprocess.run([sys.executable, "-m", "privbandit.cli", "bench", "--suite", "quick", "--out", str(folder),
                    "--no-progress"], check=True, cwd=ROOT)
    return ROOT / folder


def _paper_results() -> tuple[Path | None, str]:
    """The paper suite's results folder, made from its stored reference results, or None and why not.

    ``PRIVBANDIT_DOCS_PAPER_RESULTS`` names a folder that ``privbandit bench --suite paper`` wrote. Unset, the
    stored results are installed into ``docs/_build/results/paper`` when they match this install (versions and
    cells; of its round streams, three checked, every round: the page shows the stored results, and checking
    every stream takes minutes), and ``privbandit bench --suite paper`` finds every cell finished and only writes
    its report. The build never runs the paper suite's cells (hours); when the stored results do not apply, the
    page says why.
    """
    given = os.environ.get("PRIVBANDIT_DOCS_PAPER_RESULTS")
    if given:
        return Path(given), ""
    from privbandit.bench.stored import install_stored, match_stored
    from privbandit.bench.suites import get_suite

    paper = get_suite("paper")
    match = match_stored(paper, sample=3)             # the other streams unchecked, knowingly (docstring)
    problems = [*match.problems, *([f"{len(match.unstored)} cells not in the stored results"] if match.unstored
                                   else [])]
    if problems:
        return None, "; ".join(problems)
    folder = Path("docs/_build/results/paper")
    shutil.rmtree(ROOT / folder, ignore_errors=True)     # a build artifact: no cell of an older suite stays in it
    install_stored(paper, ROOT / folder)
    print(f"privbandit docs: the paper suite's report into {folder}, from its stored results")
    subprocess.run([sys.executable, "-m", "privbandit.cli", "bench", "--suite", "paper", "--out", str(folder),
                    "--no-progress"], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return ROOT / folder, ""


def _board(suite: str, folder: Path | None, why: str = "") -> None:
    """The results board of a suite's results folder (what :func:`privbandit.report.write_board` writes, its source
    named by the suite rather than by this machine's path of the folder), copied to the site's
    root as ``board-SUITE.html`` (``html_extra_path``), and ``_generated/results/board_SUITE.md``, which embeds it
    in the results page and (the quick suite's) the getting-started page, both at the site's root (or says why there
    is none)."""
    from dataclasses import replace

    from privbandit.report.board import board_data, board_html, folder_source

    page = GENERATED / "boards" / f"board-{suite}.html"
    embed = GENERATED / "results" / f"board_{suite}.md"
    page.parent.mkdir(parents=True, exist_ok=True)  # html_extra_path's folder exists even with no board
    if folder is None:
        page.unlink(missing_ok=True)
        _write(embed, f"No board: the stored results of the {suite} suite do not apply to this install ({why}).\n")
        return
    source = replace(folder_source(folder), name=f"the {suite} suite")  # not this machine's path of the folder
    _write(page, board_html(board_data([source]), title=f"privbandit results board: the {suite} suite"))
    _write(embed, f'```{{raw}} html\n<iframe class="results-board" src="{page.name}" title="results board of the '
           f'{suite} suite" loading="lazy"></iframe>\n<p><a href="{page.name}">Open the board of the {suite} suite '
           f"on its own page</a> ({page.stat().st_size / 1e6:.1f} MB, made by <code>privbandit board DIR</code> from "
           f"the {suite} suite's results folder, the one the results page reads).</p>\n```\n")


def _generate() -> None:
    GENERATED.mkdir(exist_ok=True)
    _write_api()
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_docs_catalogue.py"), "--out", str(GENERATED)],
                   check=True, cwd=ROOT)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_docs_interop.py"),
                    "--out", str(GENERATED / "interop")], check=True, cwd=ROOT)
    quick = _results_folder()
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_docs_tables.py"), str(quick),
                    "--out", str(GENERATED / "results"), "--figure-prefix", "/_generated/results/figures"],
                   check=True, cwd=ROOT)
    _board("quick", quick)
    rates = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_rates.py"), "--from",
                            str(DOCS / "data" / "rates.csv"), "--markdown"], check=True, cwd=ROOT,
                           capture_output=True, text=True).stdout
    _write(GENERATED / "rates.md", rates)
    pooled = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_pooled.py"), "--from-csv",
                             ",".join(str(DOCS / "data" / f"pooled_{s}.csv") for s in ("jdp", "ldp")), "--markdown"],
                            check=True, cwd=ROOT, capture_output=True, text=True).stdout
    _write(GENERATED / "pooled_coverage.md", pooled)
    rerun = subprocess.run([sys.executable, str(ROOT / "scripts" / "rerun_stored.py"), "--from",
                            str(DOCS / "data" / "rerun_stored.csv"), "--markdown"], check=True, cwd=ROOT,
                           capture_output=True, text=True).stdout
    _write(GENERATED / "rerun_stored.md", rerun)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "study_ldp_cost.py"), "--from",
                    str(DOCS / "data" / "ldp_cost.csv"), "--markdown", str(GENERATED / "ldp_cost")], check=True,
                   cwd=ROOT, stdout=subprocess.DEVNULL)
    paper, why = _paper_results()
    _board("paper", paper, why)
    if paper is None:
        _write(GENERATED / "results" / "paper" / "results.md",
               f"The stored results of the paper suite do not apply to this install ({why}), and the build does not "
               "run its cells (hours on 2 cores). Make them with `privbandit bench --suite paper --out DIR` and "
               "build with `PRIVBANDIT_DOCS_PAPER_RESULTS=DIR`.\n")
        _write(GENERATED / "glm_boards.md", f"The stored results of the paper suite do not apply to this install "
               f"({why}): no GLM board to show.\n")
        for name in ("ldp_targets", "ldp_picks", "ldp_readings"):
            _write(GENERATED / "ldp" / f"{name}.md", f"The stored results of the paper suite do not apply to this "
                   f"install ({why}): no local-DP board to show.\n")
    else:
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_docs_tables.py"), str(paper), "--boards",
                        "--out", str(GENERATED / "results" / "paper"),
                        "--figure-prefix", "/_generated/results/paper/figures"], check=True, cwd=ROOT)
        glm = subprocess.run([sys.executable, str(ROOT / "scripts" / "glm_boards.py"), str(paper)], cwd=ROOT,
                             capture_output=True, text=True)
        _write(GENERATED / "glm_boards.md", glm.stdout if glm.returncode == 0 else
               f"No GLM board in the paper suite's results ({glm.stderr.strip()}).\n")
        subprocess.run([sys.executable, str(ROOT / "scripts" / "ldp_boards.py"), str(paper), "--markdown",
                        str(GENERATED / "ldp")], check=True, cwd=ROOT)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "ldp_boards.py"), "--from-csv",
                    str(DOCS / "data" / "ldp_heldout.csv"), "--markdown", str(GENERATED / "ldp_heldout")], check=True,
                   cwd=ROOT)


# Guide pages other work adds; each enters the guide's table of contents once its file exists.
OPTIONAL_GUIDES = ("benchmarking", "interop_and_rendering")


def _optional_guides(app, docname: str, source: list[str]) -> None:
    if docname == "guide/index":
        present = [g for g in OPTIONAL_GUIDES if (DOCS / "guide" / f"{g}.md").exists()]
        source[0] = source[0].replace("<!-- optional guides -->", "\n".join(present))


_LITERAL = re.compile(r"(:[a-z:]+:`[^`]*`|``[^`]*``|`[^`]*`)")
_EMPHASIS = re.compile(r"(\*\*[^*\s][^*]*\*\*|(?<![\w*\\])\*[^\s*][^*]*?(?<![\s\\])\*(?![\w*]))")


def _escape_plain(text: str) -> str:
    """Escape ``|`` and every ``*`` that does not delimit an emphasis (``theta*``, ``(n, *shape)``)."""
    parts = _EMPHASIS.split(text)
    for j in range(0, len(parts), 2):
        parts[j] = re.sub(r"(?<!\\)([|*])", r"\\\1", parts[j])
    return "".join(parts)


def _plain_text_math(app, what, name, obj, options, lines: list[str]) -> None:
    """Docstrings write math as plain text (``|x|``, ``theta*``, ``<phi, theta>``): escape what reST would
    read as substitutions or emphasis, outside literals and examples. An env card (Gymnasium's style) gets its
    ``## Section`` headings as rubrics and a blank line before a list that follows a paragraph."""
    out: list[str] = []
    in_example = False
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith((">>>", "...")) or line.rstrip().endswith("::"):
            in_example = stripped.startswith((">>>", "..."))
            out.append(line)
            continue
        if in_example and stripped:
            out.append(line)                           # an example's expected output
            continue
        in_example = False
        if stripped.startswith("## "):
            out += [".. rubric:: " + stripped[3:], ""]
            continue
        if stripped.startswith("- ") and out and out[-1].strip() and not out[-1].lstrip().startswith("- ") \
                and len(out[-1]) - len(out[-1].lstrip()) == len(line) - len(stripped):
            out.append("")                             # a list right after a paragraph line
        parts = _LITERAL.split(line)
        parts[::2] = [_escape_plain(p) for p in parts[::2]]
        out.append("".join(parts))
    lines[:] = out


def setup(app):
    _generate()
    app.connect("source-read", _optional_guides)
    app.connect("autodoc-process-docstring", _plain_text_math, priority=400)  # before napoleon (500)
