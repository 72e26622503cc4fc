"""The ones' complement helpers behind the generator's IPv4, UDP and signature checksums
(wirespeed.gateware.onescomp), against Python, for crafted operands at the carries' edges and
random ones."""

import random

from amaranth import Module, Signal, signed
from amaranth.sim import Simulator

from wirespeed.gateware.onescomp import fold, ones_add, residue, rotl1, tree_sum


def model_fold(v):
    while v >> 16:
        v = (v & 0xFFFF) + (v >> 16)
    return v


def simulate(m, cases, check):
    async def bench(ctx):
        for case in cases:
            check(ctx, case)

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()


def test_checksum_fold_takes_both_end_around_carries():
    """The ones' complement fold behind the IPv4/UDP/signature checksums, against Python for
    crafted sums whose first fold carries again (about 1 frame in 65,536 hits these) and for
    random sums."""
    value, out = Signal(24), Signal(16)
    m = Module()
    m.d.comb += out.eq(fold(value, 24))
    rng = random.Random(5)
    cases = [0x01FFFF, 0x02FFFE, 0xFFFFFF, 0x00FFFF, 0x010000, 0] + [rng.randrange(1 << 24) for _ in range(500)]
    assert model_fold(0x01FFFF) == 1              # 0xFFFF + 0x1 = 0x10000: the second carry matters

    def check(ctx, v):
        ctx.set(value, v)
        assert ctx.get(out) == model_fold(v), hex(v)

    simulate(m, cases, check)


def test_ones_add_residue_rotl1():
    """``ones_add``: the end-around sum (0 only for 0 + 0); ``residue``: the value modulo
    0xFFFF in 0..0xFFFE (0xFFFF itself gives 0, so its inversion is never 0: RFC 768);
    ``rotl1``: twice the 16-bit word (the value modulo 2**16, as a length field holds it)
    modulo 0xFFFF, where 0xFFFF and 0 both stand for 0; for unsigned operands and signed ones
    narrower than 16 bits."""
    a, b = Signal(16), Signal(16)
    lo, hi = Signal(16), Signal(4)
    x, xs = Signal(16), Signal(signed(12))
    add, res, rot, rots = Signal(16), Signal(16), Signal(16), Signal(16)
    m = Module()
    m.d.comb += [add.eq(ones_add(a, b)), res.eq(residue(lo, hi)), rot.eq(rotl1(x)), rots.eq(rotl1(xs))]
    rng = random.Random(7)
    edges = [0, 1, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF]
    cases = [(p, q) for p in edges for q in edges] + [(rng.randrange(1 << 16), rng.randrange(1 << 16))
                                                       for _ in range(400)]

    def check(ctx, case):
        p, q = case
        ctx.set(a, p)
        ctx.set(b, q)
        ctx.set(lo, p)
        ctx.set(hi, q & 0xF)
        ctx.set(x, p)
        ctx.set(xs, (q & 0xFFF) - 0x800)
        got = ctx.get(add)
        assert got == model_fold(p + q) and (got == 0) == (p == q == 0), (hex(p), hex(q))
        assert ctx.get(res) == ((q & 0xF) * 0x10000 + p) % 0xFFFF, (hex(p), hex(q))
        assert ctx.get(rot) % 0xFFFF == 2 * p % 0xFFFF, hex(p)
        assert ctx.get(rots) % 0xFFFF == 2 * (((q & 0xFFF) - 0x800) % 0x10000) % 0xFFFF, hex(q)

    simulate(m, cases, check)


def test_tree_sum_is_exact():
    """The wide sum the checksums fold later: exact for any number of terms (none is 0)."""
    rng = random.Random(3)
    for count in (0, 1, 2, 3, 5, 8, 17):
        terms = [Signal(16, name=f"t{i}") for i in range(count)]
        out = Signal(24)
        m = Module()
        m.d.comb += out.eq(tree_sum(terms))
        cases = [[0xFFFF] * count, [0] * count] + [[rng.randrange(1 << 16) for _ in terms] for _ in range(50)]

        def check(ctx, values, terms=terms, out=out):
            for t, v in zip(terms, values):
                ctx.set(t, v)
            assert ctx.get(out) == sum(values), values

        simulate(m, cases, check)
