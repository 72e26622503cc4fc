"""Capture against a golden model: the three triggers, snaplen and count limits, the data
memory running out, arm forgetting the previous capture, and a frame already in flight at
arm; everything read back through the register bank."""

import random

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator
from bankbus import BankBus

from wirespeed.gateware import frame as F
from wirespeed.gateware.capture import STATE_ARMED, STATE_CAPTURING, STATE_DONE, STATE_IDLE, Capture, capture_model
from wirespeed.gateware.registers import RegisterBank


def random_frames(rng, n):
    frames = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.5:
            data = F.build_frame(frame_len=rng.choice([64, 65, 66, 67, 128, 200, 301]),
                                 dst_mac=0x020000000002, src_mac=0x020000000001, src_ip=0xC6120001,
                                 dst_ip=0xC6130001, seq=rng.randrange(2**32), ts=rng.randrange(2**48))
        else:
            data = bytes(rng.randrange(256) for _ in range(rng.choice([1, 3, 15, 16, 17, 60, 61, 62, 63, 150])))
        frames.append((data, rng.random() < 0.2))
    return frames


class Harness:
    def __init__(self, **kw):
        self.bank = RegisterBank(name="t", version="0", clk_hz=125_000_000, n_ports=1)
        self.cap = Capture(self.bank, "p0", **kw)
        self.rmap = self.bank.register_map()
        self.csr = BankBus(self.bank.bus, self.rmap)
        self.m = Module()
        self.m.submodules.bank = self.bank
        self.m.submodules.cap = self.cap
        self.now = Signal(64, init=1000)
        self.m.d.sync += self.now.eq(self.now + 8)
        self.m.d.comb += self.cap.now.eq(self.now)

    async def send(self, ctx, rng, data, error, gaps=True):
        """Drive one frame; returns the timestamp of its first byte."""
        sink = self.cap.sink
        ts = None
        for i, b in enumerate(data):
            while gaps and rng.random() < 0.1:
                ctx.set(sink.valid, 0)
                await ctx.tick()
            ctx.set(sink.valid, 1)
            ctx.set(sink.p, {"data": b, "first": i == 0, "last": i == len(data) - 1,
                             "error": error and i == len(data) - 1})
            if i == 0:
                ts = ctx.get(self.now)
            await ctx.tick()
        ctx.set(sink.valid, 0)
        await ctx.tick().repeat(rng.choice([1, 2, 12]))
        return ts

    async def check(self, ctx, want_entries, want_words, wp):
        n = len(want_entries)
        assert await self.csr.read(ctx, "p0.cap.frames") == n
        got = await self.csr.read_entries(ctx, "p0.cap.index", 0, n)
        decoded = [(e & (2**64 - 1), (e >> 64) & 0xFFFF, (e >> 80) & 0xFFFF, (e >> 96) & 0xFFFF, e >> 112)
                   for e in got]
        assert decoded == want_entries
        assert await self.csr.read_entries(ctx, "p0.cap.data", 0, wp) == want_words[:wp]


def run(h, bench):
    sim = Simulator(h.m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("trigger,snaplen,count,seed", [
    (0, 128, 32, 1), (0, 16, 5, 2), (1, 64, 4, 3), (2, 20, 32, 4), (0, 1024, 32, 5), (2, 100, 3, 6),
    (1, 17, 32, 7),
])
def test_capture_matches_model(trigger, snaplen, count, seed):
    rng = random.Random(seed)
    h = Harness(data_words=512, max_frames=32)
    frames = random_frames(rng, 60)

    async def bench(ctx):
        assert await h.csr.read(ctx, "p0.cap.state") == STATE_IDLE
        assert await h.csr.read(ctx, "p0.cap.snaplen") == 128
        await h.csr.write(ctx, "p0.cap.trigger", trigger)
        await h.csr.write(ctx, "p0.cap.snaplen", snaplen)
        await h.csr.write(ctx, "p0.cap.count", count)
        await h.csr.write(ctx, "p0.cap.arm", 1)
        assert await h.csr.read(ctx, "p0.cap.state") == STATE_ARMED
        sent = []
        for data, error in frames:
            sent.append((data, error, await h.send(ctx, rng, data, error)))
        entries, words, wp = capture_model(sent, trigger, snaplen, count, 512)
        assert entries, "the test should trigger"
        await h.check(ctx, entries, words, wp)
        assert await h.csr.read(ctx, "p0.cap.state") == STATE_DONE

    run(h, bench)


def test_rearm_forgets_and_ignores_a_frame_in_flight():
    rng = random.Random(9)
    h = Harness(data_words=256, max_frames=4)
    first = bytes(range(100))

    async def bench(ctx):
        await h.csr.write(ctx, "p0.cap.snaplen", 2000)             # clamped to 1024
        await h.csr.write(ctx, "p0.cap.count", 0)                  # clamped to 1
        await h.csr.write(ctx, "p0.cap.arm", 1)
        ts = await h.send(ctx, rng, first, False)
        words = [int.from_bytes(first[i:i + 4], "big") for i in range(0, 100, 4)]
        await h.check(ctx, [(ts, 104, 100, 0, 0)], words, 25)
        assert await h.csr.read(ctx, "p0.cap.state") == STATE_DONE

        # arm again in the middle of a frame: that frame is not recorded
        await h.csr.write(ctx, "p0.cap.count", 7)                  # clamped to max_frames (4)
        await h.csr.write(ctx, "p0.cap.snaplen", 3)                # clamped to 16
        await h.csr.write(ctx, "p0.cap.trigger", 1)
        sink = h.cap.sink
        for i in range(80):
            ctx.set(sink.valid, 1)
            ctx.set(sink.p, {"data": 0xEE, "first": i == 0, "last": i == 79, "error": i == 79})
            if i == 40:
                ctx.set(h.bank.bus.addr, h.rmap["p0.cap.arm"].offset >> 2)
                ctx.set(h.bank.bus.w_data, 1)
                ctx.set(h.bank.bus.w_stb, 1)
            await ctx.tick()
            ctx.set(h.bank.bus.w_stb, 0)
        ctx.set(sink.valid, 0)
        await ctx.tick()
        assert await h.csr.read(ctx, "p0.cap.state") == STATE_ARMED
        assert await h.csr.read(ctx, "p0.cap.frames") == 0
        sent = []
        for data, error in [(b"\x11" * 70, False), (bytes(range(61)), True), (b"\x22" * 5, False),
                            (b"\x33" * 64, True), (b"\x44" * 64, False), (b"\x55" * 64, False)]:
            sent.append((data, error, await h.send(ctx, rng, data, error)))
            if len(sent) == 2:
                assert await h.csr.read(ctx, "p0.cap.state") == STATE_CAPTURING
        entries, words, wp = capture_model(sent, 1, 16, 4, 256)
        assert [e[1] for e in entries] == [65, 9, 68, 68]
        await h.check(ctx, entries, words, wp)
        assert await h.csr.read(ctx, "p0.cap.state") == STATE_DONE

    run(h, bench)


def test_data_memory_full_stops_the_capture():
    rng = random.Random(11)
    h = Harness(data_words=256, max_frames=32)

    async def bench(ctx):
        await h.csr.write(ctx, "p0.cap.snaplen", 300)              # 75 words a frame
        await h.csr.write(ctx, "p0.cap.arm", 1)
        sent = []
        for k in range(6):
            data = bytes([k]) * (60 if k == 1 else 400)         # a short one leaves more room
            sent.append((data, False, await h.send(ctx, rng, data, False, gaps=False)))
        entries, words, wp = capture_model(sent, 0, 300, 32, 256)
        # 75 + 15 + 75 + 75 = 240 words used: 16 left, less than a snaplen, so it stops at 4
        assert len(entries) == 4 and wp == 240
        await h.check(ctx, entries, words, wp)
        assert await h.csr.read(ctx, "p0.cap.state") == STATE_DONE

    run(h, bench)


def test_a_frame_with_no_idle_clock_before_it_is_not_recorded():
    """The block decides about a frame on the clock after its last byte; a frame starting on
    that clock (no idle clock between frames: a MAC never sends that) is not recorded, and
    the frame after it is recorded right after the first."""
    rng = random.Random(13)
    h = Harness(data_words=256, max_frames=8)
    a, b, c = bytes(range(1, 70)), b"\x77" * 64, bytes(range(100, 170))

    async def bench(ctx):
        await h.csr.write(ctx, "p0.cap.snaplen", 64)
        await h.csr.write(ctx, "p0.cap.arm", 1)
        sink = h.cap.sink
        stamps = []
        for data in (a, b):                                  # back to back, no idle clock
            for i, byte in enumerate(data):
                ctx.set(sink.valid, 1)
                ctx.set(sink.p, {"data": byte, "first": i == 0, "last": i == len(data) - 1, "error": 0})
                if i == 0:
                    stamps.append(ctx.get(h.now))
                await ctx.tick()
        ctx.set(sink.valid, 0)
        await ctx.tick()
        ts_c = await h.send(ctx, rng, c, False)
        entries, words, wp = capture_model([(a, False, stamps[0]), (c, False, ts_c)], 0, 64, 8, 256)
        assert [e[1] for e in entries] == [73, 74]
        await h.check(ctx, entries, words, wp)
        assert await h.csr.read(ctx, "p0.cap.state") == STATE_CAPTURING

    run(h, bench)
