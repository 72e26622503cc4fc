"""StreamStats against a golden model of the per-stream definitions (docs/analyzer.md):
random event sequences with loss, duplicates and reordering within and beyond the window,
interleaved streams, foreign groups and bad FCS; the 2**32 sequence wrap; snapshots taken
under load; clear; and the analyzer feeding it from frames."""

import copy
import gc
import random
import warnings

import pytest
from amaranth import Module
from amaranth.sim import Simulator

from wirespeed.gateware import frame as F
from wirespeed.gateware.analyzer import LAT_LAST_BIT, Analyzer
from wirespeed.gateware.stream_stats import (
    ENTRY_BITS,
    ENTRY_WORDS,
    MIN_EVENT_SPACING,
    READ_LATENCY,
    READ_WORDS,
    STATS_FIELDS,
    StreamStats,
    empty_entry,
    unpack_entry,
)

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


class StatsModel:
    """The definitions, written plainly: the history is the set of numbers received among
    the ``window`` below the expected one."""

    def __init__(self, n_streams, window, group):
        self.n, self.window, self.group = n_streams, window, group
        self.bits = (n_streams - 1).bit_length()
        self.clear()

    def clear(self):
        self.entries = [empty_entry() for _ in range(self.n)]
        self.seen = [{(-k) & M32 for k in range(1, self.window + 1)} for _ in range(self.n)]
        self.foreign = 0
        self.seq_errors = 0

    def snapshot(self):
        return copy.deepcopy(self.entries), self.foreign, self.seq_errors

    def event(self, fcs_err, sid, seq, lat, rx_ns, nbytes):
        if sid >> self.bits != self.group:
            self.foreign += 1
            return
        index = sid & (self.n - 1)
        e = self.entries[index]
        if fcs_err:
            e["fcs_errors"] += 1
            return
        self.seq_errors += seq != e["next_seq"]
        if e["rx_frames"] == 0:
            e["first_rx_ns"] = rx_ns
        else:
            e["jitter_sum"] += abs(lat - e["last_lat"])
        e["rx_frames"] += 1
        e["rx_bytes"] += nbytes
        e["last_rx_ns"] = rx_ns
        e["lat_min"] = min(e["lat_min"], lat)
        e["lat_max"] = max(e["lat_max"], lat)
        e["lat_sum"] += lat
        e["lat_sq_sum"] += lat * lat
        e["last_lat"] = lat

        expected = e["next_seq"]
        d = (seq - expected) & M32
        d = d - (1 << 32) if d >> 31 else d                       # RFC 1982: signed difference
        seen = self.seen[index]
        if d >= 0:
            if d == 0:
                e["in_order"] += 1
            e["lost"] += d
            e["next_seq"] = (seq + 1) & M32
            seen.add(seq)
            self.seen[index] = {x for x in seen if 1 <= (e["next_seq"] - x) & M32 <= self.window}
        elif -d <= self.window:
            if seq in seen:
                e["duplicate"] += 1
            else:
                seen.add(seq)
                e["out_of_order"] += 1
                e["lost"] = (e["lost"] - 1) & M64
        else:
            e["late"] += 1


def stream_seqs(rng, count, start=0):
    """Sequence numbers of one stream as a DUT might deliver them: losses small and large,
    duplicates, and reordering by distances inside and beyond a 32-number window."""
    seqs, s = [], start
    for _ in range(count):
        r = rng.random()
        if r < 0.08:
            s += rng.randrange(1, 5)
        elif r < 0.11:
            s += rng.randrange(33, 90)
        seqs.append(s & M32)
        s += 1
    for i in range(len(seqs) - 1):
        r = rng.random()
        if r < 0.06:
            seqs.insert(i + rng.randrange(0, 6), seqs[i])                         # duplicate
        elif r < 0.14:
            j = min(len(seqs) - 1, i + rng.choice([1, 2, 3, 5, 20, 31, 32, 33, 40]))
            seqs[i], seqs[j] = seqs[j], seqs[i]                                   # reordered
    return seqs


LATENCIES = [0, 1, 500, 12_345, M32, 1 << 31]


def make_events(rng, n_streams, group, per_stream, foreign_groups=(), start=0):
    """Events of several interleaved streams of ``group`` (and some of other groups)."""
    bits = (n_streams - 1).bit_length()
    queues = [[(group << bits | i, s) for s in stream_seqs(rng, per_stream, start)]
              for i in rng.sample(range(n_streams), min(n_streams, 5))]
    queues += [[(g << bits | rng.randrange(n_streams), s) for s in range(per_stream // 4)]
               for g in foreign_groups]
    events, rx_ns = [], 1 << 40
    while any(queues):
        queue = rng.choice([q for q in queues if q])
        sid, seq = queue.pop(0)
        rx_ns += rng.randrange(1, 100_000)
        lat = rng.choice(LATENCIES) if rng.random() < 0.2 else rng.randrange(200, 60_000)
        events.append(dict(fcs_err=int(rng.random() < 0.05), sid=sid, seq=seq, lat=lat,
                           rx_ns=rx_ns, nbytes=rng.choice([64, 65, 1518, 9018, rng.randrange(20, 9019)])))
    return events


class Driver:
    """Drives one clock at a time and keeps the model in step: events presented on the
    snapshot clock come after it; events presented while clearing (or with clear) are
    dropped."""

    def __init__(self, ctx, dut, model):
        self.ctx, self.dut, self.model = ctx, dut, model
        self.snapshots = []

    async def cycle(self, ev=None, snapshot=False, clear=False, read_addr=0):
        ctx, dut, model = self.ctx, self.dut, self.model
        if snapshot:
            self.snapshots.append(model.snapshot())
        dropped = clear or ctx.get(dut.clearing)
        if clear:
            model.clear()
        if ev is not None and not dropped:
            model.event(**ev)
        ctx.set(dut.snapshot, snapshot)
        ctx.set(dut.clear, clear)
        ctx.set(dut.read_addr, read_addr)
        ctx.set(dut.ev_valid, ev is not None)
        if ev is not None:
            for name, value in ev.items():
                ctx.set(getattr(dut, "ev_" + {"lat": "latency", "nbytes": "bytes"}.get(name, name)), value)
        await ctx.tick()
        ctx.set(dut.snapshot, 0)
        ctx.set(dut.clear, 0)
        ctx.set(dut.ev_valid, 0)
        return ctx.get(dut.read_data)

    async def idle(self, cycles):
        for _ in range(cycles):
            await self.cycle()

    async def settle(self):
        while self.ctx.get(self.dut.copying) or self.ctx.get(self.dut.clearing):
            await self.cycle()

    async def read_entry(self, index):
        """One shadow entry, read a 32-bit word per clock as the register bank does (each
        word READ_LATENCY clocks after its address)."""
        value = 0
        addrs = [index * READ_WORDS + k for k in range(READ_WORDS)]
        for k, addr in enumerate(addrs + [addrs[-1]] * (READ_LATENCY - 1)):
            data = await self.cycle(read_addr=addr)
            if k >= READ_LATENCY - 1:
                value |= data << (32 * (k - READ_LATENCY + 1))
        return unpack_entry(value)

    async def read_shadow(self):
        return [await self.read_entry(i) for i in range(self.model.n)]

    async def check(self):
        """Snapshot now, and the shadow must be the model."""
        await self.cycle(snapshot=True)
        await self.settle()
        entries, foreign, seq_errors = self.snapshots[-1]
        assert await self.read_shadow() == entries
        assert self.ctx.get(self.dut.foreign_frames_snap) == foreign
        assert self.ctx.get(self.dut.seq_errors_snap) == seq_errors


def simulate(dut, bench, stats=None):
    """Run ``bench``; on every clock of the statistics ``stats`` (``dut`` unless given), a write
    to the shadow must come while ``copying`` is high (the host reads the shadow whenever it is
    low: a word still to be written would be stale, and a read of it on its write's clock would
    break the memory's no-collision promise)."""
    writes = []
    stats = stats or dut

    async def watch(ctx):
        async for _, _, shadow_write, copying in ctx.tick().sample(stats._shadow_write, stats.copying):
            writes.append(bool(copying) if shadow_write else True)
            assert writes[-1], "a shadow write while copying is low"

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_process(watch)
    sim.add_testbench(bench)
    sim.run()
    assert writes, "the watch saw no clock"


def test_entry_layout():
    assert ENTRY_BITS == sum(bits for _, bits in STATS_FIELDS) <= 1024
    value = 0
    for at in range(len(STATS_FIELDS)):
        value |= (at + 1) << sum(b for _, b in STATS_FIELDS[:at])
    assert unpack_entry(value) == {name: at + 1 for at, (name, _) in enumerate(STATS_FIELDS)}


@pytest.mark.parametrize("n_streams,window", [(16, 32), (4, 5), (2, 1)])
def test_random_events_match_model(n_streams, window):
    rng = random.Random(n_streams * 100 + window)
    group = 0x5A3 & ((1 << (16 - (n_streams - 1).bit_length())) - 1)
    dut = StreamStats(n_streams, window)
    model = StatsModel(n_streams, window, group)
    events = make_events(rng, n_streams, group, per_stream=120, foreign_groups=(group + 1, 0))

    async def bench(ctx):
        ctx.set(dut.stream_group, group)
        drv = Driver(ctx, dut, model)
        for ev in events:
            await drv.cycle(ev)
            await drv.idle(rng.choice([MIN_EVENT_SPACING - 1, MIN_EVENT_SPACING, 40]))
        await drv.idle(3)
        await drv.check()
        assert ctx.get(dut.foreign_frames) == model.foreign > 0

    simulate(dut, bench)
    totals = {name: sum(e[name] for e in model.entries) for name in ("in_order", "lost", "duplicate",
                                                                      "out_of_order", "late", "fcs_errors")}
    if window > 1:
        assert all(totals.values()), totals      # every definition was exercised
    else:
        assert totals["out_of_order"] == 0       # the window holds only the last number received


def test_sequence_wrap():
    """A stream running across 2**32 keeps counting in order, with loss, reordering and
    duplicates on both sides of the wrap (serial number arithmetic)."""
    rng = random.Random(32)
    dut = StreamStats()
    model = StatsModel(16, 32, 0)
    seqs = [0x7FFF_FFF0, 0xFFFF_FF00] + stream_seqs(rng, 400, start=0xFFFF_FF01)

    async def bench(ctx):
        drv = Driver(ctx, dut, model)
        for seq in seqs:
            await drv.cycle(dict(fcs_err=0, sid=7, seq=seq, lat=100, rx_ns=0, nbytes=64))
            await drv.idle(MIN_EVENT_SPACING - 1)
        await drv.check()

    simulate(dut, bench)
    e = model.entries[7]
    assert e["next_seq"] < 0x1000 and e["in_order"] > 40 and e["out_of_order"] and e["duplicate"]
    assert e["lost"] < 1 << 33                    # no wrap counted as a 4-billion jump backwards


def test_stale_frames_after_clear_are_not_negative_loss():
    """Numbers just below 0 right after CLEAR (frames sent before it) are duplicates, so
    lost never goes negative."""
    dut = StreamStats(window=8)
    model = StatsModel(16, 8, 0)

    async def bench(ctx):
        drv = Driver(ctx, dut, model)
        for seq in (M32 - 2, M32, M32 - 20, 0, 1, 3, 2):
            await drv.cycle(dict(fcs_err=0, sid=1, seq=seq, lat=5, rx_ns=9, nbytes=64))
            await drv.idle(MIN_EVENT_SPACING - 1)
        await drv.check()

    simulate(dut, bench)
    e = model.entries[1]
    assert (e["duplicate"], e["late"], e["lost"], e["out_of_order"], e["in_order"]) == (2, 1, 0, 1, 2)


@pytest.mark.slow
def test_snapshot_consistent_under_load():
    """Snapshots at every phase of the update pipeline while events hit a few entries at
    the highest rate, during the sweep and while the host reads the shadow."""
    rng = random.Random(7)
    dut = StreamStats()
    model = StatsModel(16, 32, 3)
    events = make_events(rng, 16, 3, per_stream=1200, foreign_groups=(4,))
    hot = [dict(ev, sid=3 << 4 | rng.choice([0, 1, 15])) if ev["sid"] >> 4 == 3 else ev for ev in events]
    spacing = MIN_EVENT_SPACING

    async def bench(ctx):
        ctx.set(dut.stream_group, 3)
        drv = Driver(ctx, dut, model)
        stream = iter(hot)

        async def hammer_and_read(backwards=False):
            """Events every `spacing` clocks; read the shadow as soon as it is complete (from
            the last word on, ``backwards``: the last entry's words the first clock the shadow
            says it is complete, while a copy on write of it may just have ended)."""
            got, i, clocks, issued = {}, 0, 0, []
            words = 16 * READ_WORDS
            while len(got) < words:
                complete = not ctx.get(dut.copying)
                addr = words - 1 - i if backwards else i
                data = await drv.cycle(next(stream) if clocks % spacing == 0 else None, read_addr=addr)
                clocks += 1
                issued.append(addr if complete else None)      # the word this clock's address reads
                if len(issued) >= READ_LATENCY and issued[-READ_LATENCY] is not None:
                    got[issued[-READ_LATENCY]] = data
                if complete and i < words - 1:
                    i += 1
            # the sweep gets the free clocks between updates: at least one word per event
            assert clocks <= 16 * ENTRY_WORDS * spacing + words
            await drv.idle(spacing - 1)
            entries, foreign, seq_errors = drv.snapshots[-1]
            assert [unpack_entry(sum(got[e * READ_WORDS + k] << (32 * k) for k in range(READ_WORDS)))
                    for e in range(16)] == entries
            assert ctx.get(dut.foreign_frames_snap) == foreign
            assert ctx.get(dut.seq_errors_snap) == seq_errors

        for phase in range(2 * spacing):
            for _ in range(rng.randrange(5, 40)):
                await drv.cycle(next(stream))
                await drv.idle(spacing - 1)
            # the snapshot comes `phase % spacing` clocks after an event (0: on its clock), one
            # of this group, then one of another (foreign_frames)
            ev = next(stream)
            if phase >= spacing:
                ev = dict(ev, sid=4 << 4 | ev["sid"] & 15)
            for k in range(spacing):
                await drv.cycle(ev if k == 0 else None, snapshot=k == phase % spacing)
            await hammer_and_read(backwards=phase % 2 == 1)
        # a second snapshot while the first is being swept
        await drv.cycle(next(stream), snapshot=True)
        await drv.idle(spacing - 1)
        await drv.cycle(next(stream))
        await drv.cycle(snapshot=True)                    # with that event in the pipeline
        await drv.idle(spacing - 2)
        await hammer_and_read()
        await drv.idle(3)
        await drv.check()

    simulate(dut, bench)


def test_clear():
    """CLEAR empties every entry and foreign_frames at once as far as a snapshot can tell
    (events while it sweeps are dropped): a snapshot taken with it captures the table
    before, one taken during its sweep an empty table."""
    rng = random.Random(11)
    dut = StreamStats()
    model = StatsModel(16, 32, 0)
    events = make_events(rng, 16, 0, per_stream=80, foreign_groups=(9,))

    async def bench(ctx):
        drv = Driver(ctx, dut, model)
        stream = iter(events)
        for when in ("with", "during", "alone", "before"):
            for _ in range(40):
                await drv.cycle(next(stream))
                await drv.idle(MIN_EVENT_SPACING - 1)
            if when == "before":                          # its sweep still running at the clear
                await drv.cycle(snapshot=True)
            await drv.cycle(next(stream))                 # an event still in the pipeline
            await drv.cycle(clear=True, snapshot=when == "with")
            # events while clearing are dropped (the clear waits for the update in progress)
            for k in range(dut.clear_clocks + 24):
                await drv.cycle(next(stream) if k % MIN_EVENT_SPACING == 0 else None,
                                snapshot=when == "during" and k == 7)
            assert not ctx.get(dut.clearing)
            await drv.settle()
            entries, foreign, seq_errors = drv.snapshots[-1] if when != "alone" else ([], 0, 0)
            if when != "alone":
                assert await drv.read_shadow() == entries
                assert ctx.get(dut.foreign_frames_snap) == foreign
                assert ctx.get(dut.seq_errors_snap) == seq_errors
                assert (entries == [empty_entry()] * 16) == (when == "during")
            await drv.check()
        for _ in range(30):
            await drv.cycle(next(stream))
            await drv.idle(MIN_EVENT_SPACING - 1)
        await drv.idle(3)
        await drv.check()

    simulate(dut, bench)


def test_constructor_checks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # the half-built components are never elaborated
        for kwargs, message in [
                (dict(n_streams=12), "n_streams must be a power of two from 2 to 65536, got 12"),
                (dict(n_streams=1), "n_streams must be a power of two from 2 to 65536, got 1"),
                (dict(window=0), "window must be 1..1024, got 0"),
                (dict(window=1025), "window must be 1..1024, got 1025")]:
            with pytest.raises(ValueError) as info:
                StreamStats(**kwargs)
            assert str(info.value) == "StreamStats: " + message
            del info
            gc.collect()


def test_analyzer_feeds_stream_stats():
    """Frames in, per-stream counters out: the analyzer's events drive StreamStats."""
    rng = random.Random(3)
    group = 0x012
    cfg = dict(dst_mac=0x020000000002, src_mac=0x020000000001, src_ip=0xC6120001, dst_ip=0xC6130001)
    queues = [[(group << 4 | i, s) for s in stream_seqs(rng, 25)] for i in (0, 5, 15)]
    queues.append([(0x999, s) for s in range(4)])                 # another group
    frames = []
    while any(queues):                                            # streams interleaved
        sid, seq = rng.choice([q for q in queues if q]).pop(0)
        frames.append((sid, seq, rng.choice([64, 65, 127, 1518]), int(rng.random() < 0.05)))
    m = Module()
    m.submodules.ana = ana = Analyzer()
    m.submodules.stats = stats = StreamStats()
    m.d.comb += [getattr(stats, name).eq(getattr(ana, name)) for name in
                 ("ev_valid", "ev_fcs_err", "ev_sid", "ev_seq", "ev_latency", "ev_rx_ns", "ev_bytes")]
    model = StatsModel(16, 32, group)

    async def bench(ctx):
        ctx.set(stats.stream_group, group)
        ctx.set(ana.lat_def, LAT_LAST_BIT)
        now = 1 << 32
        for sid, seq, size, error in frames:
            ts = now - rng.randrange(0, 40_000)
            data = F.build_frame(frame_len=size, stream_id=sid, seq=seq, ts=ts, **cfg)
            lat = max(((now - ts) & M32) - 8 * size, 0)
            model.event(fcs_err=error, sid=sid, seq=seq, lat=lat, rx_ns=now, nbytes=size)
            for i, byte in enumerate(data):
                last = i == len(data) - 1
                ctx.set(ana.sink.valid, 1)
                ctx.set(ana.sink.p, {"data": byte, "first": i == 0, "last": last, "error": error and last})
                ctx.set(ana.now, now)
                await ctx.tick()
                now += 8
            ctx.set(ana.sink.valid, 0)
            await ctx.tick().repeat(12)
            now += 96
        await ctx.tick().repeat(8)
        ctx.set(stats.snapshot, 1)
        await ctx.tick()
        ctx.set(stats.snapshot, 0)
        while ctx.get(stats.copying):
            await ctx.tick()
        got = []
        for i in range(16):
            value = 0
            for k in range(READ_WORDS):
                ctx.set(stats.read_addr, i * READ_WORDS + k)
                await ctx.tick().repeat(READ_LATENCY)
                value |= ctx.get(stats.read_data) << (32 * k)
            got.append(unpack_entry(value))
        assert got == model.entries
        assert ctx.get(stats.foreign_frames_snap) == model.foreign == 4
        foreign_good = sum(1 for sid, _, _, error in frames if sid == 0x999 and not error)
        assert ctx.get(ana.rx_frames) == sum(e["rx_frames"] for e in got) + foreign_good

    simulate(m, bench, stats)
