"""Drawing one bandit round: the ``"ansi"`` text block and the ``"rgb_array"`` image of the envs.

Both modes show the same :class:`RoundView`: the round last played (its arms' expected rewards, the
optimal arm, the chosen arm, its reward), the rounds played so far and the cumulative pseudo-regret.
Before the first step of an episode the view is the round about to be played (no action yet).

The image is drawn with numpy alone (filled rectangles and a 3 x 5 pixel font, no plotting library),
so a frame costs tens of microseconds and does not dominate a recorded episode:

- a title line ``t=<rounds played> regret=<cumulative regret>``;
- one bar per arm for its expected reward around a zero line, scaled so that the round's largest
  |expected reward| fills the half-height (the text mode gives the values): the chosen arm blue, the
  others grey, the optimal arm capped green;
- under the bars, a green square marks the optimal arm and a blue square the chosen one;
- at the bottom, the cumulative regret curve of the episode (red), scaled to its largest value so far.

References
----------
Source paper, `sec:intro-cb` (pseudo-regret max_a m_a - m_{a_t}).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["RENDER_FPS", "RENDER_MODES", "RegretTrace", "RoundView", "render_ansi", "render_rgb"]

RENDER_MODES = ("ansi", "rgb_array")
"""Render modes of the bandit envs (``metadata["render_modes"]``)."""

RENDER_FPS = 4
"""Frames per second a recorder should play (``metadata["render_fps"]``): one round every 0.25 s."""

HEIGHT = 240
"""Frame height in pixels."""

MIN_WIDTH = 320
"""Frame width in pixels for K <= 80 arms (4 px per arm beyond)."""

_GREY = np.array([170, 170, 170], dtype=np.uint8)
_BLUE = np.array([31, 119, 180], dtype=np.uint8)
_GREEN = np.array([44, 160, 44], dtype=np.uint8)
_RED = np.array([214, 39, 40], dtype=np.uint8)
_INK = np.array([0, 0, 0], dtype=np.uint8)

_GLYPHS = {  # 3 x 5 bitmaps, rows top to bottom
    "0": ("111", "101", "101", "101", "111"), "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"), "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"), "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"), "7": ("111", "001", "010", "010", "010"),
    "8": ("111", "101", "111", "101", "111"), "9": ("111", "101", "111", "001", "111"),
    ".": ("000", "000", "000", "000", "010"), "-": ("000", "000", "111", "000", "000"),
    "=": ("000", "111", "000", "111", "000"), " ": ("000", "000", "000", "000", "000"),
    "t": ("010", "111", "010", "010", "011"), "r": ("000", "101", "110", "100", "100"),
    "e": ("111", "101", "111", "100", "111"), "g": ("111", "101", "111", "001", "111"),
}
_SCALE = 2  # font pixels per bitmap pixel
_FONT = {c: np.kron(np.array([[ch == "1" for ch in row] + [False] for row in rows]),  # a blank column after
                    np.ones((_SCALE, _SCALE), dtype=bool))
         for c, rows in _GLYPHS.items()}


class RoundView(NamedTuple):
    """What a frame shows.

    Attributes
    ----------
    t : int
        Rounds played in the episode.
    horizon : int
        The episode length T.
    means : ndarray (K,)
        Expected rewards of the arms in the round shown.
    optimal : int
        Its optimal arm.
    action, reward, regret : int, float, float or None
        The chosen arm, its drawn reward and its pseudo-regret (None before the first step).
    cumulative : ndarray (n,)
        Cumulative regret after each of the n rounds played by ``step`` (the last entry is the total).
    """

    t: int
    horizon: int
    means: np.ndarray
    optimal: int
    action: int | None
    reward: float | None
    regret: float | None
    cumulative: np.ndarray


class RegretTrace:
    """Cumulative regret of the rounds played by ``step`` in an episode (kept only while rendering).

    A buffer that doubles when full, so recording is O(1) amortised and reading is a view.
    """

    def __init__(self) -> None:
        self._buf = np.empty(64)
        self._n = 0
        self.total = 0.0

    def add(self, regret: float) -> None:
        """Record one round's pseudo-regret."""
        if self._n == self._buf.size:
            self._buf = np.concatenate([self._buf, np.empty(self._buf.size)])
        self.total += regret
        self._buf[self._n] = self.total
        self._n += 1

    def array(self) -> np.ndarray:
        """The cumulative regret after each recorded round, shape (n,) (a read-only view)."""
        view = self._buf[:self._n]
        view.flags.writeable = False
        return view


def render_ansi(view: RoundView) -> str:
    """The round as a text block: one line per arm with its expected reward as a bar of ``#``.

    Examples
    --------
    >>> import numpy as np
    >>> view = RoundView(3, 10, np.array([0.5, -0.25, 0.0]), 0, 2, -1.0, 0.5, np.array([0.1, 0.3, 0.8]))
    >>> print(render_ansi(view))
    t = 3 of 10   cumulative regret 0.8000
    last round: arm 2 played, reward -1, regret 0.5000
     arm  E[reward]
       0    +0.5000 |#####      best
       1    -0.2500 |##
       2    +0.0000 |           played
    """
    lines = [f"t = {view.t} of {view.horizon}   cumulative regret {_total(view):.4f}"]
    if view.action is None:
        lines.append("next round: no arm played yet")
    else:
        lines.append(f"last round: arm {view.action} played, reward {view.reward:g}, regret {view.regret:.4f}")
    lines.append(" arm  E[reward]")
    width = len(str(len(view.means) - 1))
    for a, m in enumerate(view.means):
        bar = "#" * int(round(10 * min(abs(float(m)), 1.0)))
        tags = [tag for tag, on in (("best", a == view.optimal), ("played", a == view.action)) if on]
        lines.append(f"{a:>{max(width, 4)}}    {m:+.4f} |{bar:<10} {' '.join(tags)}".rstrip())
    return "\n".join(lines)


def frame_width(n_arms: int) -> int:
    """Width in pixels of the frames of a K-armed bandit: max(320, 4 K)."""
    return max(MIN_WIDTH, 4 * n_arms)


def render_rgb(view: RoundView) -> np.ndarray:
    """The round as an image of shape (240, max(320, 4 K), 3), dtype uint8 (see the module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> view = RoundView(3, 10, np.array([0.5, -0.25, 0.0]), 0, 2, -1.0, 0.5, np.array([0.1, 0.3, 0.8]))
    >>> frame = render_rgb(view)
    >>> frame.shape, frame.dtype
    ((240, 320, 3), dtype('uint8'))
    """
    k = len(view.means)
    w = frame_width(k)
    img = np.full((HEIGHT, w, 3), 255, dtype=np.uint8)
    _text(img, f"t={view.t} regret={_total(view):.3f}", 4, 4)
    # bars: expected rewards around the zero line, the largest |m| of the round at full half-height
    top, bottom = 24, 160
    zero = (top + bottom) // 2
    half = (bottom - top) // 2
    img[zero, :] = _INK
    slot = w / k
    gap = 1 if slot >= 4 else 0
    lefts = (np.arange(k) * slot).astype(int)
    rights = np.maximum(((np.arange(k) + 1) * slot).astype(int) - gap, lefts + 1)
    means = np.asarray(view.means, dtype=np.float64)
    peak = float(np.max(np.abs(means)))
    heights = np.rint(means * (half / peak if peak > 0 else 0.0)).astype(int)
    for a in range(k):
        lo, hi = (zero - heights[a], zero) if heights[a] >= 0 else (zero + 1, zero + 1 - heights[a])
        color = _BLUE if a == view.action else _GREY
        img[lo:hi, lefts[a]:rights[a]] = color
        if a == view.optimal:  # a green cap at the bar's end
            cap = zero - heights[a] if heights[a] >= 0 else zero - heights[a] - 3
            img[max(cap, top):max(cap, top) + 3, lefts[a]:rights[a]] = _GREEN
    # markers: optimal (green) and chosen (blue) arms
    img[164:172, lefts[view.optimal]:rights[view.optimal]] = _GREEN
    if view.action is not None:
        img[174:182, lefts[view.action]:rights[view.action]] = _BLUE
    # the cumulative regret curve, scaled to its maximum so far
    _curve(img, view.cumulative, 188, 236)
    return img


def _total(view: RoundView) -> float:
    return float(view.cumulative[-1]) if view.cumulative.size else 0.0


def _curve(img: np.ndarray, values: np.ndarray, top: int, bottom: int) -> None:
    """Plot ``values`` (non-decreasing, >= 0) against their index across the whole width, in red."""
    img[bottom, :] = _INK
    n = values.size
    peak = float(values[-1]) if n else 0.0
    if n == 0 or peak <= 0.0:
        return
    w = img.shape[1]
    idx = np.minimum((np.arange(w) * n) // w, n - 1)
    rows = bottom - 1 - np.rint(values[idx] / peak * (bottom - 1 - top)).astype(int)
    img[rows, np.arange(w)] = _RED
    img[np.minimum(rows + 1, bottom - 1), np.arange(w)] = _RED


def _text(img: np.ndarray, text: str, row: int, col: int) -> None:
    """Write ``text`` (characters of the 3 x 5 font) in black at (row, col), clipped at the right edge."""
    mask = np.hstack([_FONT[ch] for ch in text])[:, :img.shape[1] - col]
    img[row:row + mask.shape[0], col:col + mask.shape[1]][mask] = _INK
