"""GapTracker against its golden model (wirespeed.gateware.gaps.GapModel), fed as in the port
by StreamStats' loss pulses: random event sequences with outages, loss, duplicates and
reordering (which must not count as loss events), bad FCS and foreign streams; snapshots and
CLEARs at every phase of the pipeline; and frames end to end from the traffic generator (with
the rate phase switch) through a lossy link to the analyzer."""

import random

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator
from genbench import GenBench
from test_stream_stats import stream_seqs

from wirespeed.gateware import frame as F
from wirespeed.gateware.analyzer import Analyzer
from wirespeed.gateware.gaps import GAP_FIELDS, MIN_EVENT_SPACING, GapModel, GapTracker
from wirespeed.gateware.stream_stats import StreamStats
from wirespeed.host.program import port_program_writes
from wirespeed.traffic import PortProgram, StreamSpec

NAMES = [name for name, _, _ in GAP_FIELDS]
M48 = (1 << 48) - 1


class Bench:
    """StreamStats and GapTracker wired as in TesterPort, driven one clock at a time, the
    model kept in step (events on a snapshot clock come after it; events with CLEAR are
    dropped; events while the statistics clear are not sequence-tracked)."""

    def __init__(self, group=0):
        self.m = m = Module()
        m.submodules.stats = self.stats = StreamStats()
        m.submodules.gaps = self.gaps = GapTracker()
        s, g = self.stats, self.gaps
        m.d.comb += [g.ev_valid.eq(s.ev_valid), g.ev_fcs_err.eq(s.ev_fcs_err), g.ev_sid.eq(s.ev_sid),
                     g.ev_seq.eq(s.ev_seq), g.ev_rx_ns.eq(s.ev_rx_ns),
                     g.loss_valid.eq(s.loss_valid), g.loss_skip.eq(s.loss_skip),
                     g.clear.eq(s.clear), g.snapshot.eq(s.snapshot)]
        self.group = group
        self.model = GapModel(16, group)
        self.snapshots = []

    async def cycle(self, ctx, ev=None, snapshot=False, clear=False):
        s, g, model = self.stats, self.gaps, self.model
        if snapshot:
            self.snapshots.append(model.snapshot())
        tracked = not ctx.get(s.clearing)
        if clear:
            model.clear()
        elif ev is not None:
            model.event(ev["fcs_err"], ev["sid"], ev["seq"], ev["rx_ns"], ev["tx_ns"], tracked=tracked)
        ctx.set(s.stream_group, self.group)
        ctx.set(s.snapshot, snapshot)
        ctx.set(s.clear, clear)
        ctx.set(s.ev_valid, ev is not None)
        if ev is not None:
            ctx.set(s.ev_fcs_err, ev["fcs_err"])
            ctx.set(s.ev_sid, ev["sid"])
            ctx.set(s.ev_seq, ev["seq"])
            ctx.set(s.ev_rx_ns, ev["rx_ns"])
            ctx.set(g.ev_tx_ns, ev["tx_ns"])
            ctx.set(s.ev_latency, (ev["rx_ns"] - ev["tx_ns"]) & 0xFFFFFFFF)
            ctx.set(s.ev_bytes, 64)
        await ctx.tick()
        ctx.set(s.snapshot, 0)
        ctx.set(s.clear, 0)
        ctx.set(s.ev_valid, 0)

    async def idle(self, ctx, n):
        for _ in range(n):
            await self.cycle(ctx)

    def got(self, ctx):
        return {name: ctx.get(getattr(self.gaps, name)) for name in NAMES}

    async def check(self, ctx):
        """Snapshot now; after the pipeline, the outputs must be the model's."""
        await self.cycle(ctx, snapshot=True)
        await self.idle(ctx, 5)
        assert self.got(ctx) == self.snapshots[-1]

    def run(self, bench):
        sim = Simulator(self.m)
        sim.add_clock(8e-9)
        sim.add_testbench(bench)
        sim.run()


def make_events(rng, group, per_stream, outages=3):
    """Interleaved streams of ``group`` (loss, duplicates, reordering, by stream_seqs), a
    foreign stream and bad FCS frames; transmit timestamps by (stream, seq) as a generator
    would send them, receive timestamps rising, with a few long outages."""
    queues = [[(group << 4 | i, s) for s in stream_seqs(rng, per_stream)] for i in rng.sample(range(16), 4)]
    queues.append([((group + 1) << 4 | 3, s) for s in range(per_stream // 4)])
    total = sum(len(q) for q in queues)
    outage_at = set(rng.sample(range(1, total), outages))
    events, rx = [], (1 << 47) - 5_000_000          # crosses 2**47; intervals mod 2**48
    for n in range(total):
        sid, seq = rng.choice([q for q in queues if q]).pop(0)
        rx += rng.randrange(600, 5000) + (rng.randrange(1, 20) * 1_000_000 if n in outage_at else 0)
        tx = (seq * 6_720 + (sid & 15) * 97 + (1 << 40)) & M48
        events.append(dict(fcs_err=int(rng.random() < 0.04), sid=sid, seq=seq, rx_ns=rx & ((1 << 64) - 1),
                           tx_ns=tx))
    return events


def test_model_definitions():
    """The model itself on a hand-written sequence."""
    m = GapModel(16, 0)
    for seq, rx, tx in [(0, 100, 10), (1, 200, 20), (3, 1000, 40), (2, 1100, 30), (3, 1150, 40),
                        (7, 1250, 80), (5, 1300, 60)]:
        m.event(0, 2, seq, rx, tx)
    m.event(1, 2, 20, 99_999, 999)                      # bad FCS: ignored
    m.event(0, 0x13, 50, 1400, 500)                     # another group: a gap, no loss
    st = m.snapshot()
    assert (st["gap_max"], st["gap_end_rx"], st["gap_end_tx"]) == (800, 1000, 40)
    assert st["loss_events"] == 2                       # 3 (after 2 lost) and 7 (after 4, 5, 6)
    assert (st["loss_last_tx"], st["loss_last_rx"], st["loss_last_stream"], st["loss_last_seq"],
            st["loss_last_gap"]) == (80, 1250, 2, 7, 3)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_events_match_model(seed):
    rng = random.Random(seed)
    bench = Bench(group=5)
    events = make_events(rng, 5, per_stream=60)

    async def tb(ctx):
        for ev in events:
            await bench.cycle(ctx, ev)
            await bench.idle(ctx, rng.choice([MIN_EVENT_SPACING - 1, 8, 20]))
        await bench.check(ctx)

    bench.run(tb)
    st = bench.model.state
    assert st["gap_max"] > 1_000_000 and st["loss_events"] > 3      # the traffic exercised both


def test_no_gap_no_loss():
    """Frames in order at a steady rate: gap_max is the spacing, no loss event."""
    bench = Bench()

    async def tb(ctx):
        for k in range(40):
            await bench.cycle(ctx, dict(fcs_err=0, sid=k % 3, seq=k // 3, rx_ns=1000 + 672 * k, tx_ns=500 + 672 * k))
            await bench.idle(ctx, 9)
        await bench.check(ctx)
        got = bench.got(ctx)
        assert got["gap_max"] == 672 and got["gap_end_rx"] == 1000 + 672 and got["loss_events"] == 0
        assert got["loss_last_tx"] == got["loss_last_seq"] == 0

    bench.run(tb)


def test_duplicates_and_reordering_are_not_loss_events():
    """A stream reordered and duplicated within and beyond the window, never ahead of the
    expected number by more than the frame itself: no loss event."""
    bench = Bench()
    seqs = [0, 1, 1, 2, 3, 3, 0, 4, 5, 5, 2, 6, 7]

    async def tb(ctx):
        for k, seq in enumerate(seqs):
            await bench.cycle(ctx, dict(fcs_err=0, sid=9, seq=seq, rx_ns=100 * k + 5, tx_ns=10 * seq))
            await bench.idle(ctx, MIN_EVENT_SPACING - 1)
        await bench.check(ctx)
        assert bench.got(ctx)["loss_events"] == 0

    bench.run(tb)


def test_largest_tx_wins_not_the_last_to_arrive():
    """Loss events whose frames arrive out of transmit order: loss_last_* describe the one
    with the largest transmit timestamp."""
    bench = Bench()

    async def tb(ctx):
        for k, (sid, seq, tx) in enumerate([(0, 5, 5000), (1, 9, 9100), (0, 7, 7000), (2, 3, 3300)]):
            await bench.cycle(ctx, dict(fcs_err=0, sid=sid, seq=seq, rx_ns=20_000 + 1000 * k, tx_ns=tx))
            await bench.idle(ctx, MIN_EVENT_SPACING - 1)
        await bench.check(ctx)
        got = bench.got(ctx)
        assert got["loss_events"] == 4
        assert (got["loss_last_stream"], got["loss_last_seq"], got["loss_last_gap"], got["loss_last_tx"],
                got["loss_last_rx"]) == (1, 9, 9, 9100, 21_000)

    bench.run(tb)


def test_snapshot_and_clear_at_every_phase():
    """Snapshots and CLEARs (alone, together, one after the other) at every clock after an
    event, while events keep coming at the highest rate: every snapshot as the model's."""
    rng = random.Random(9)
    bench = Bench(group=0)
    events = iter(make_events(rng, 0, per_stream=400, outages=20))
    spacing = MIN_EVENT_SPACING
    kinds = ["snap", "clear", "snap+clear", "clear,snap", "snap,clear"]

    async def tb(ctx):
        for kind in kinds:
            for phase in range(spacing):
                for second in (1, 2, 3):
                    for _ in range(rng.randrange(3, 12)):
                        await bench.cycle(ctx, next(events))
                        await bench.idle(ctx, spacing - 1)
                    # the command `phase` clocks after an event (0: on its clock)
                    plan = {}
                    if kind == "snap":
                        plan[phase] = dict(snapshot=True)
                    elif kind == "clear":
                        plan[phase] = dict(clear=True)
                    elif kind == "snap+clear":
                        plan[phase] = dict(snapshot=True, clear=True)
                    elif kind == "clear,snap":
                        plan[phase] = dict(clear=True)
                        plan[phase + second] = dict(snapshot=True)
                    else:
                        plan[phase] = dict(snapshot=True)
                        plan[phase + second] = dict(clear=True)
                    for k in range(2 * spacing):
                        ev = next(events) if k % spacing == 0 else None
                        await bench.cycle(ctx, ev, **plan.get(k, {}))
                    await bench.idle(ctx, 2)
                    if "snap" in kind:
                        # no snapshot since: the outputs still hold the planned one
                        assert bench.got(ctx) == bench.snapshots[-1], (kind, phase, second)
                    await bench.check(ctx)

    bench.run(tb)


# --- end to end: generator (rate phase switch) -> lossy link -> analyzer -> stats -> gaps ----


@pytest.mark.slow
def test_end_to_end_outage_through_analyzer():
    """Stream 0 until phase_at, stream 1 from phase_at (the RFC 2544 26.5 shape) through a
    link that drops the frames sent around the switch (an outage): the gap ends at the first
    frame after the outage, the only loss event is stream 1's first frame after it (stream 0
    sends nothing after phase_at), as the model computes from the frames that got through."""
    program = PortProgram(streams=(StreamSpec(size="64", weight=2), StreamSpec(size="64", weight=1)),
                          rate_pct=30)
    compiled = program.compile()
    gb = GenBench()
    memories, registers = port_program_writes(0, compiled)
    regs = {name.split(".", 1)[1]: value for name, value in registers.items()}
    phase_at = 3000
    regs |= {"gen.mode": 0, "gen.duration": 8000, "gen.enable": 1, "gen.phase_at": phase_at,
             "gen.phase2": 0b10}
    gb.load({name.split(".")[-1]: e for name, e in memories.items()} | {"regs": regs})
    gen, m = gb.gen, gb.m
    m.submodules.ana = ana = Analyzer()
    m.submodules.stats = stats = StreamStats()
    m.submodules.gaps = gaps = GapTracker()
    # the link: the generator's bytes (always ready) `link_delay` clocks later, the frames
    # numbered `outage` (port transmit order) dropped
    outage = range(5, 10)
    link_delay = 40
    sent_n = Signal(16)
    drop, dropping = Signal(), Signal()
    m.d.comb += drop.eq(dropping)
    with m.If(gen.source.valid & gen.source.p.first):
        m.d.sync += [sent_n.eq(sent_n + 1), dropping.eq((sent_n >= outage.start) & (sent_n < outage.stop))]
        m.d.comb += drop.eq((sent_n >= outage.start) & (sent_n < outage.stop))
    src = (gen.source.valid & ~drop, gen.source.p.data, gen.source.p.first, gen.source.p.last)
    for i in range(link_delay):
        stage = (Signal(name=f"v{i}"), Signal(8, name=f"d{i}"), Signal(name=f"f{i}"), Signal(name=f"l{i}"))
        m.d.sync += [a.eq(b) for a, b in zip(stage, src)]
        src = stage
    v, d, f, last = src
    m.d.comb += [gen.source.ready.eq(1), ana.sink.valid.eq(v), ana.sink.p.data.eq(d), ana.sink.p.first.eq(f),
                 ana.sink.p.last.eq(last), ana.now.eq(gb.now)]
    m.d.comb += [getattr(stats, n).eq(getattr(ana, n)) for n in
                 ("ev_valid", "ev_fcs_err", "ev_sid", "ev_seq", "ev_latency", "ev_rx_ns", "ev_bytes")]
    m.d.comb += [gaps.ev_valid.eq(ana.ev_valid), gaps.ev_fcs_err.eq(ana.ev_fcs_err), gaps.ev_sid.eq(ana.ev_sid),
                 gaps.ev_seq.eq(ana.ev_seq), gaps.ev_rx_ns.eq(ana.ev_rx_ns), gaps.ev_tx_ns.eq(ana.ev_tx_ns),
                 gaps.loss_valid.eq(stats.loss_valid), gaps.loss_skip.eq(stats.loss_skip),
                 gaps.snapshot.eq(gen.snapshot), gaps.clear.eq(gen.clear),
                 stats.snapshot.eq(gen.snapshot), stats.clear.eq(gen.clear)]
    received, sent, results = [], [], {}

    async def watch(ctx):
        frame = bytearray()
        async for _clk, _rst, valid, sid, seq, rx, tx, err, gv, gd, gl in ctx.tick().sample(
                ana.ev_valid, ana.ev_sid, ana.ev_seq, ana.ev_rx_ns, ana.ev_tx_ns, ana.ev_fcs_err,
                gen.source.valid, gen.source.p.data, gen.source.p.last):
            if valid:
                received.append((err, sid, seq, rx, tx))
            if gv:
                frame.append(gd)
                if gl:
                    sent.append(F.parse_signature(bytes(frame)))
                    frame = bytearray()

    async def bench(ctx):
        bus = gb.bank.bus
        for addr, value in gb.writes:
            ctx.set(bus.addr, addr)
            ctx.set(bus.w_data, value)
            ctx.set(bus.w_stb, 1)
            await ctx.tick()
        ctx.set(bus.w_stb, 0)
        ctx.set(gen.clear, 1)
        await ctx.tick()
        ctx.set(gen.clear, 0)
        await ctx.tick().repeat(2)
        while ctx.get(stats.clearing):                 # as TesterPort holds a START
            await ctx.tick()
        ctx.set(gen.start, 1)
        await ctx.tick()
        ctx.set(gen.start, 0)
        await ctx.tick().repeat(5)
        while ctx.get(gen.running):
            await ctx.tick()
        await ctx.tick().repeat(link_delay + 20)
        ctx.set(gen.snapshot, 1)
        await ctx.tick()
        ctx.set(gen.snapshot, 0)
        await ctx.tick().repeat(8)
        results.update({name: ctx.get(getattr(gaps, name)) for name in NAMES})

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.add_process(watch)
    sim.run()
    model = GapModel(16, 0)
    for err, sid, seq, rx, tx in received:
        model.event(err, sid, seq, rx, tx)
    assert results == model.state
    lost = sent[outage.start:outage.stop]
    assert [r[1:3] for r in received] == [s[:2] for n, s in enumerate(sent) if n not in outage]
    assert {s[0] for s in lost} == {0, 1}, "the outage spans the phase switch"
    after = received[outage.start]                      # the first frame after the outage
    before = received[outage.start - 1]
    assert (results["gap_max"], results["gap_end_rx"], results["gap_end_tx"]) == \
        (after[3] - before[3], after[3] & M48, after[4])
    assert after[4] - before[4] == results["gap_max"], "latency constant: rx gap = tx gap"
    assert results["loss_events"] == 1 and results["loss_last_stream"] == 1
    n_lost_1 = sum(1 for s in lost if s[0] == 1)
    assert results["loss_last_seq"] == results["loss_last_gap"] == n_lost_1
    assert (results["loss_last_rx"], results["loss_last_tx"]) == (after[3] & M48, after[4])
