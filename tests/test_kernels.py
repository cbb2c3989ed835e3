"""privbandit._kernels: the C entry points agree with numpy's public functions bit for bit."""

import builtins
import importlib

import numpy as np
import pytest

import privbandit._kernels as kernels


@pytest.mark.parametrize("subscripts, shapes", [
    ("...i,...i->...", [(10, 10), (10, 10)]),
    ("...i,...i->...", [(7, 5, 3), (7, 5, 3)]),
    ("ij,ij->i", [(64, 10), (64, 10)]),
    ("mkd,mkd->mk", [(3, 4, 5), (3, 4, 5)]),
])
def test_einsum_equals_numpy_einsum_bit_for_bit(subscripts, shapes):
    rng = np.random.default_rng(0)
    ops = [rng.normal(size=s) * 10.0 ** rng.integers(-200, 200, size=s) for s in shapes]
    ops[0].flat[0], ops[0].flat[1] = np.nan, np.inf          # NaN and inf propagate alike
    ours, theirs = kernels.einsum(subscripts, *ops), np.einsum(subscripts, *ops)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert np.array_equal(ours, theirs, equal_nan=True)
    assert ours.tobytes() == theirs.tobytes()


def test_einsum_falls_back_to_the_public_function_when_numpy_moves_it(monkeypatch):
    real_import = builtins.__import__

    def no_c_einsum(name, globals=None, locals=None, fromlist=(), level=0):
        if name.endswith("_multiarray_umath") and fromlist and "c_einsum" in fromlist:
            raise ImportError("moved")
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", no_c_einsum)
    try:
        reloaded = importlib.reload(kernels)
        assert reloaded.einsum is np.einsum
    finally:
        monkeypatch.undo()
        importlib.reload(kernels)
    assert kernels.einsum is not np.einsum
