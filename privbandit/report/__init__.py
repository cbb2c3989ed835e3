"""What a results table says in a browser: the interactive results board (:mod:`privbandit.report.board`).

``privbandit board DIR... [--stored SUITE] --out FILE.html`` and ``privbandit bench`` (its ``board.html``) call
:func:`write_board`.
"""

from .board import board_data, board_html, write_board

__all__ = ["board_data", "board_html", "write_board"]
