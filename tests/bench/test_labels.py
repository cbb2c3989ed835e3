"""Labels that can be run again, a challenger labelled with its own name, result files that honour the umask."""

from __future__ import annotations

import os
import stat
import textwrap

import pytest

from privbandit import cli
from privbandit.bench.challenger import challenger_entry
from privbandit.bench.labels import agent_name, kwargs_label, resolve_label, suite_variants
from privbandit.bench.suites import SUITES
from privbandit.report.files import atomic_write


def test_every_label_of_a_suite_resolves_to_its_agent_and_kwargs():
    entries = {e.label: e for s in SUITES.values() for g in s.grids for e in g.agents}
    assert "linucb-practical" in suite_variants()
    for label, entry in entries.items():
        assert resolve_label(label) == (entry.name, dict(entry.kwargs)), label
        assert kwargs_label(entry.name, dict(entry.kwargs)) == label


def test_labels_with_kwargs_read_back():
    label = kwargs_label("elim-jdp", {"first_epoch": 4, "growth": 1.5, "play": "ucb"})
    assert label == "elim-jdp(first_epoch=4,growth=1.5,play=ucb)"
    assert resolve_label(label) == ("elim-jdp", {"first_epoch": 4, "growth": 1.5, "play": "ucb"})
    assert resolve_label("linucb-practical", {"radius": "theory"}) == ("linucb", {"radius": "theory"})
    assert resolve_label("not-an-agent(x=1)") == ("not-an-agent(x=1)", {})


@pytest.fixture
def peg(tmp_path, monkeypatch):
    """A plugin module whose factory ``make`` builds an agent named "peg"."""
    (tmp_path / "my_peg.py").write_text(textwrap.dedent('''
        from privbandit.agents import UniformAgent

        def make(**kwargs):
            agent = UniformAgent()
            agent.name = "peg"
            return agent

        make.private = False
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "my_peg:make"


def test_a_factory_challenger_is_labelled_with_the_agent_name(peg):
    assert agent_name(peg) == "peg" and agent_name("elim-jdp") == "elim-jdp"
    assert challenger_entry(peg).label == "peg"
    assert challenger_entry(peg, label="mine").label == "mine"
    entry = challenger_entry("linucb", kwargs={"radius": "practical"})
    assert (entry.name, dict(entry.kwargs), entry.label) == ("linucb", {"radius": "practical"}, "linucb-practical")


def test_run_takes_agent_kwargs_and_labels(peg, capsys):
    small = ["--env", "PrivLinCB-v0", "--horizon", "50", "--no-progress", "--dim", "2", "--arms", "2"]
    assert cli.main(["run", "--agent", "linucb", "--agent-kwargs", '{"radius": "practical"}', *small]) == 0
    assert "| linucb-practical |" in capsys.readouterr().out
    assert cli.main(["run", "--agent", "linucb-practical", *small]) == 0
    assert "| linucb-practical |" in capsys.readouterr().out
    assert cli.main(["run", "--agent", peg, *small]) == 0
    assert "| peg |" in capsys.readouterr().out
    assert cli.main(["run", "--agent", peg, "--label", "my-peg", *small]) == 0
    assert "| my-peg |" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        cli.main(["run", "--agent", "linucb", "--agent-kwargs", '{"radius": 5}', *small])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "radius must be one of" in err[0]


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_result_files_honour_the_umask(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        path = atomic_write(tmp_path / "results.csv", "a\n1\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == mode
