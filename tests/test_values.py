"""m-bit values: encoding, prefixes, extension, validation (ldp.values)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ldp
from ldp import values as V


@pytest.mark.parametrize("m", [1, 7, 32, 48, 63, 64, 65, 100, 128, 160, 255, 256])
def test_prefix_is_the_leading_bits(m):
    rng = np.random.default_rng(m)
    ints = [int(x) for x in rng.integers(0, 2**62, size=40)]
    ints = [(a << 200 | b << 100 | a * b) % (1 << m) for a, b in zip(ints, reversed(ints))]
    arr = V.from_ints(ints, m)
    assert V.to_ints(arr) == ints
    for L in sorted({1, m // 3 or 1, m // 2 or 1, m - 1 or 1, m}):
        got = V.to_ints(V.prefix(arr, m, L))
        assert got == [v >> (m - L) for v in ints], (m, L)


@pytest.mark.parametrize("length, eta", [(4, 3), (60, 5), (62, 4), (64, 6), (100, 8), (155, 5)])
def test_extend_enumerates_every_suffix(length, eta):
    rng = np.random.default_rng(length)
    ints = [int(x) % (1 << length) for x in rng.integers(0, 2**63, size=5)]
    ext = V.to_ints(V.extend(V.from_ints(ints, length), length, eta))
    assert ext == [(c << eta) | s for c in ints for s in range(1 << eta)]


def test_concat_and_chunks():
    left = V.from_ints([0xABC, 0x1], 12)
    right = V.from_ints([(1 << 70) - 1, 5], 80)
    both = V.concat(left, 12, right, 80)
    assert V.to_ints(both) == [(0xABC << 80) | ((1 << 70) - 1), (1 << 80) | 5]
    v = V.from_ints([0x0102030405060708090A], 80)
    # chunks are the 32-bit pieces of the integer, most significant first
    assert V.to_chunks32(v, 80).tolist() == [[0x0102, 0x03040506, 0x0708090A]]


def test_encode_decode_round_trip_and_padding():
    strings = ["google", "ab", "", "exactly6", "ümlaut"]
    vals = ldp.encode(strings, 6, truncate=True)
    assert vals.dtype == np.uint64 and vals.shape == (5,)
    assert ldp.decode(vals, 6) == ["google", "ab", "", "exactl", "ümlau"]
    # short strings are padded on the right with spaces: the first byte is the top byte
    assert int(vals[1]) == int.from_bytes(b"ab    ", "big")
    wide = ldp.encode([b"www.example.com/abc/def"], 20, truncate=True)
    assert wide.shape == (1, 3)
    assert ldp.decode(wide, 20, as_bytes=True) == [b"www.example.com/abc/"]
    # the prefix of 8 j bits is the first j bytes
    assert V.to_ints(V.prefix(wide, 160, 24)) == [int.from_bytes(b"www", "big")]


def test_uint64_arrays_are_accepted_without_copy():
    a = np.arange(10, dtype=np.uint64)
    assert V.as_values(a, 64) is a


@pytest.mark.parametrize("call, match", [
    (lambda: V.as_values(np.array([8], dtype=np.uint64), 3), "m = 3"),
    (lambda: V.as_values(np.array([-1]), 8), "non-negative"),
    (lambda: V.as_values(np.zeros(0, dtype=np.uint64), 8), "empty"),
    (lambda: V.as_values(np.zeros((3, 2), dtype=np.uint64), 64), "1-D"),
    (lambda: V.as_values(np.zeros((3, 2), dtype=np.uint64), 160), r"\(n, 3\)"),
    (lambda: V.as_values(np.array([[1 << 33, 0, 0]], dtype=np.uint64), 160), "2\\*\\*160"),
    (lambda: V.as_values(np.array([1.5]), 8), "unsigned integers"),
    (lambda: V.from_ints([1 << 9], 9), "2\\*\\*9"),
    (lambda: V.prefix(np.zeros(2, dtype=np.uint64), 8, 9), "length"),
    (lambda: V.n_words(0), r"m must be in \[1, 4096\]"),
    (lambda: ldp.encode(["x"], 0), "nbytes"),
    (lambda: ldp.encode("abc", 3), "iterable"),
    # a longer string would silently collide with others sharing its first nbytes
    (lambda: ldp.encode(["abcdefgh", "abcdxyzw"], 4),
     r"strings\[0\] = 'abcdefgh' is 8 bytes.*nbytes = 4.*truncate=True"),
    (lambda: ldp.encode(["ok", "ümlaut"], 6), r"strings\[1\] = 'ümlaut' is 7 bytes"),
])
def test_bad_input_names_the_parameter(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


@pytest.mark.parametrize("m", [1, 20, 64, 65, 160])
def test_uniform_values_fit_and_reproduce(m):
    a = V.uniform(2000, m, rng=5)
    assert V.as_values(a, m) is not None  # fits in m bits
    np.testing.assert_array_equal(a, V.uniform(2000, m, rng=5))
    top = V.prefix(a, m, 1)
    assert 0.4 < float(np.mean(top == 1)) < 0.6  # leading bit is used (binomial, ~9 sigma band)


# ---------------------------------------------------------------------------
# properties (hypothesis; derandomized, so every run checks the same examples)
# ---------------------------------------------------------------------------
PROPERTY = settings(derandomize=True, database=None, deadline=None, max_examples=150)


@st.composite
def widths_and_ints(draw, max_m=300, min_size=1, max_size=12):
    """A width m and a list of m-bit Python integers (small and large ones, both ends of the range)."""
    m = draw(st.integers(1, max_m))
    ints = draw(st.lists(st.one_of(st.integers(0, 2**m - 1), st.sampled_from([0, 2**m - 1])),
                         min_size=min_size, max_size=max_size))
    return m, ints


@PROPERTY
@given(widths_and_ints())
def test_property_from_ints_to_ints_round_trip(mi):
    m, ints = mi
    arr = V.from_ints(ints, m)
    assert arr.dtype == np.uint64 and arr.shape == ((len(ints),) if m <= 64 else (len(ints), V.n_words(m)))
    assert V.to_ints(arr) == ints
    assert V.as_values(arr, m) is arr  # canonical arrays pass through


@PROPERTY
@given(widths_and_ints(), st.data())
def test_property_prefix_is_a_right_shift(mi, data):
    m, ints = mi
    L = data.draw(st.integers(1, m))
    got = V.prefix(V.from_ints(ints, m), m, L)
    assert V.to_ints(got) == [v >> (m - L) for v in ints]
    assert V.as_values(got, L) is not None  # an L-bit canonical array


@PROPERTY
@given(widths_and_ints(max_m=200, max_size=4), st.integers(1, 4))
def test_property_extend_then_prefix_gives_back_the_prefixes(mi, eta):
    length, ints = mi
    ext = V.extend(V.from_ints(ints, length), length, eta)
    assert V.to_ints(ext) == [(c << eta) | s for c in ints for s in range(1 << eta)]
    back = V.prefix(ext, length + eta, length)
    assert V.to_ints(back) == [c for c in ints for _ in range(1 << eta)]


@PROPERTY
@given(st.integers(1, 200), st.integers(1, 200), st.data())
def test_property_concat_is_shift_or(a_bits, b_bits, data):
    n = data.draw(st.integers(1, 6))
    left = data.draw(st.lists(st.integers(0, 2**a_bits - 1), min_size=n, max_size=n))
    right = data.draw(st.lists(st.integers(0, 2**b_bits - 1), min_size=n, max_size=n))
    both = V.concat(V.from_ints(left, a_bits), a_bits, V.from_ints(right, b_bits), b_bits)
    assert V.to_ints(both) == [(x << b_bits) | y for x, y in zip(left, right)]
    assert V.to_ints(V.prefix(both, a_bits + b_bits, a_bits)) == left


@PROPERTY
@given(widths_and_ints())
def test_property_chunks32_rebuild_the_integer(mi):
    m, ints = mi
    chunks = V.to_chunks32(V.from_ints(ints, m), m)
    assert chunks.shape == (len(ints), V.n_chunks(m)) and chunks.dtype == np.uint32
    rebuilt = [sum(int(c) << (32 * (chunks.shape[1] - 1 - i)) for i, c in enumerate(row)) for row in chunks]
    assert rebuilt == ints


@PROPERTY
@given(widths_and_ints(min_size=2, max_size=20))
def test_property_value_keys_sort_like_the_integers(mi):
    m, ints = mi
    keys = V.value_keys(V.from_ints(ints, m))
    assert [ints[i] for i in np.argsort(keys, kind="stable")] == sorted(ints)
    distinct, counts, inverse = V.group_values(V.from_ints(ints, m))
    assert V.to_ints(distinct) == sorted(set(ints)) and counts.sum() == len(ints)
    assert [V.to_ints(distinct)[i] for i in inverse] == ints


_NO_TRAILING_PAD = st.text(max_size=12).filter(lambda s: not s.endswith(" "))


@PROPERTY
@given(st.lists(_NO_TRAILING_PAD, min_size=1, max_size=6), st.integers(0, 8))
def test_property_encode_decode_round_trip(strings, extra):
    """Strings that fit (and do not end in the pad byte) come back as they were; bytes come back padded."""
    nbytes = max(1, max(len(s.encode("utf-8")) for s in strings)) + extra
    vals = ldp.encode(strings, nbytes)
    assert ldp.decode(vals, nbytes) == strings
    raw = ldp.decode(vals, nbytes, strip=False, as_bytes=True)
    assert raw == [s.encode("utf-8").ljust(nbytes, V.PAD_BYTE) for s in strings]
    # the prefix of 8 j bits is the first j bytes
    j = max(1, nbytes // 2)
    assert ldp.decode(V.prefix(vals, 8 * nbytes, 8 * j), j, strip=False, as_bytes=True) == [r[:j] for r in raw]


@PROPERTY
@given(st.lists(st.binary(max_size=10), min_size=1, max_size=6), st.integers(1, 10))
def test_property_truncated_encode_keeps_the_first_bytes(blobs, nbytes):
    vals = ldp.encode(blobs, nbytes, truncate=True)
    assert ldp.decode(vals, nbytes, strip=False, as_bytes=True) == [b[:nbytes].ljust(nbytes, V.PAD_BYTE)
                                                                      for b in blobs]
