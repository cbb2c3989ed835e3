"""numpy entry points without their Python wrappers, for the per-round path's small arrays.

On arrays of a few dozen numbers a numpy function's Python wrapper (argument parsing, dispatch) costs
as much as its arithmetic. These names are the C functions the wrappers end in, so they compute the same
values bit for bit; where numpy's layout differs (another major version) they fall back to the public
function.
"""

from __future__ import annotations

import numpy as np

__all__ = ["einsum"]

try:                                             # numpy >= 2.0
    from numpy._core._multiarray_umath import c_einsum as _c_einsum
except ImportError:                              # pragma: no cover - numpy 1.x layout
    try:
        from numpy.core._multiarray_umath import c_einsum as _c_einsum
    except ImportError:
        _c_einsum = None

einsum = _c_einsum if _c_einsum is not None else np.einsum
"""``np.einsum(subscripts, *operands)``: with its default ``optimize=False`` the wrapper calls this C
function with the same arguments and returns its result, so the two agree bit for bit (tested)."""
