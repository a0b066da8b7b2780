"""ldp.numeric.kernel_input: one type per compiled kernel's input, the caller's array untouched."""
import numpy as np
import pytest

from ldp.numeric import kernel_input
from ldp.oracles import FLH, flh_kernels


def test_kernel_input_is_a_read_only_view_and_leaves_the_array_writeable():
    a = np.arange(10, dtype=np.uint64)
    out = kernel_input(a)
    assert not out.flags.writeable and out.flags.c_contiguous
    assert np.shares_memory(out, a)  # no copy
    assert a.flags.writeable  # the caller's array is not changed
    a[0] = 7
    assert out[0] == 7


def test_kernel_input_converts_and_makes_contiguous():
    a = np.arange(20, dtype=np.int64)[::2]
    out = kernel_input(a, np.uint32)
    assert out.dtype == np.uint32 and out.flags.c_contiguous and not out.flags.writeable
    np.testing.assert_array_equal(out, a)
    frozen = np.arange(4)
    frozen.flags.writeable = False
    assert kernel_input(frozen) is frozen  # already what a kernel gets


@pytest.mark.parametrize("writeable", [True, False])
def test_a_kernel_gets_read_only_inputs_whatever_the_callers_arrays(writeable):
    # numba compiles a kernel once per writeable flag of its arguments: a read-only data set and fresh
    # arrays would cost two compilations; every specialisation of the tally kernel takes read-only inputs
    o = FLH(2.0, m=16, pool_size=8)
    reports = o.privatize(np.arange(200) % 7, rng=np.random.default_rng(1))
    index, y = reports.index.copy(), reports.y.copy()
    index.flags.writeable = y.flags.writeable = writeable
    again = type(reports)(reports.params, index=index, y=y)
    np.testing.assert_array_equal(o.tally(again), o.tally(reports))
    assert flh_kernels.tally_into.signatures
    assert all(not sig[0].mutable and not sig[1].mutable for sig in flh_kernels.tally_into.signatures)
