"""What a results table says: its numbers and markdown, the leaderboard, paired comparisons, figures and the board.

:mod:`~privbandit.report.tables` (final regret with 95% intervals, log-log slopes, the price of privacy, the ledger's
guarantees, ``report.md``), :mod:`~privbandit.report.leaderboard`, :mod:`~privbandit.report.compare` (a challenger
against each baseline, seed by seed), :mod:`~privbandit.report.figures` (matplotlib) and
:mod:`~privbandit.report.board` (the interactive results board: ``privbandit board DIR... [--stored SUITE] --out
FILE.html`` and ``privbandit bench``'s ``board.html`` call :func:`write_board`).
"""

from .board import board_data, board_html, write_board
from .compare import paired_comparison
from .leaderboard import leaderboard
from .tables import final_regret, ledger_guarantees, loglog_slopes, price_of_privacy, write_report

__all__ = ["board_data", "board_html", "final_regret", "ledger_guarantees", "leaderboard", "loglog_slopes",
           "paired_comparison", "price_of_privacy", "write_board", "write_report"]
