"""Ones' complement arithmetic on 16-bit words, as combinational Amaranth expressions: the
checksums of the traffic generator (IPv4 header, UDP, the signature's share of it).

Each helper is at most two carry chains side by side and a multiplexer, so that a pipeline
stage of the generator can hold one of them and still meet the sys clock. Sums of many terms
are taken exact and wide first (:func:`tree_sum`) and folded to 16 bits afterwards
(:func:`fold`): the fold of an exact sum equals the ones' complement sum of its terms.
"""

from amaranth import Cat, Const, Mux, Value

__all__ = ["ones_add", "fold", "residue", "u16", "rotl1", "tree_sum"]


def ones_add(a, b):
    """Ones' complement sum of two 16-bit values (end-around carry): 0 only if both are 0. Two
    carry chains side by side and a mux: ``a + b``, and ``a - ~b`` (= ``a + b + 1 - 2**16``, a
    subtraction, so one chain with its carry-in set) taken when ``a + b`` carries."""
    t, v = a + b, a - ~b
    return Mux(t[16], v[:16], t[:16])


def fold(value, width):
    """Ones' complement fold of ``value`` (below 2**32) to 16 bits: both end-around carries,
    as one end-around add of its halves. 0 only if ``value`` is 0."""
    hi = value[16:width]
    return ones_add(value[:16], Cat(hi, Const(0, 16 - len(hi))))


def residue(lo, hi):
    """``(hi * 2**16 + lo) % 0xFFFF`` in 0..0xFFFE, for ``hi`` below 16 bits: ``lo + hi``, or
    ``lo - ~hi`` (= ``lo + hi - 0xFFFF``) when that is not negative (two chains side by side)."""
    hi = Cat(hi, Const(0, 16 - len(hi)))
    t, v = lo + hi, lo - ~hi
    return Mux(v[16], t[:16], v[:16])


def u16(x):
    """``x`` modulo 2**16 (sign-extended first if signed), as 16 bits."""
    x = Value.cast(x)
    if len(x) < 16:
        x = Cat(x, (x[-1] if x.shape().signed else Const(0, 1)).replicate(16 - len(x)))
    return x[:16]


def rotl1(x):
    """``x`` modulo 2**16 rotated left by one: ``2 * x`` modulo 0xFFFF."""
    x = u16(x)
    return Cat(x[15], x[:15])


def tree_sum(terms):
    """Exact sum of ``terms`` as a balanced tree of two-input adders (0 for none)."""
    terms = list(terms)
    if not terms:
        return Const(0, 1)
    while len(terms) > 1:
        terms = [terms[i] + terms[i + 1] if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)]
    return terms[0]
