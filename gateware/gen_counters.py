"""The traffic generator's transmit counters: the port's totals (test frames, their bytes
with the FCS, the first and last transmit timestamps) and the per-stream frames and bytes
(:class:`.txcounters.TxStreamCounters`), each with a snapshot the host reads.

The totals and the per-stream counts see the launch one cycle late (registered: the launch is
the scheduler's combinational ``go``, which fans out no further), and so do their clears. A
SNAPSHOT takes the totals as they will be after this cycle (with a launch of the cycle
before), at once: the host may read them the cycle after. The per-stream counts see the
snapshot one cycle late too, so all are of the counts at the snapshot's edge.
"""

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .registers import WindowSignature
from .txcounters import TxStreamCounters

__all__ = ["GeneratorCounters", "TOTALS"]

#: (name, doc) of the port's totals, each 64 bits (``pN.gen.<name>``)
TOTALS = [
    ("tx_frames", "test frames sent"),
    ("tx_bytes", "bytes of test frames sent, FCS included"),
    ("first_tx_ns", "transmit timestamp of the first frame"),
    ("last_tx_ns", "transmit timestamp of the last frame"),
]
_TOTALS = wiring.Signature({name: Out(64) for name, _ in TOTALS})


class GeneratorCounters(wiring.Component):
    """``launch``: a frame leaves (the scheduler's ``go``); ``stream`` and ``frame_len``: the
    frame launched last, from the cycle after its launch (the emitter's). ``snap``: the totals
    at the last SNAPSHOT; ``stream_tx``: the host's window on the per-stream counts (128 bits
    an entry: frames, then bytes) at the last SNAPSHOT."""

    def __init__(self, n_streams):
        self.n_streams = n_streams
        super().__init__({
            "launch": In(1), "stream": In(4), "frame_len": In(14), "now": In(64),
            "clear": In(1), "snapshot": In(1),
            "snap": Out(_TOTALS),
            "stream_tx": In(WindowSignature(n_streams, 128, writable=False)),
        })

    def elaborate(self, platform):
        m = Module()
        live = {name: Signal(64, name=f"live_{name}") for name, _ in TOTALS}
        launched = Signal()
        clear_d = Signal()
        snapshot_d = Signal()
        now_d = Signal(64)            # now at the launch, on `launched`
        m.d.sync += [launched.eq(self.launch), clear_d.eq(self.clear), snapshot_d.eq(self.snapshot),
                     now_d.eq(self.now)]
        no_tx = Signal(init=1)        # live tx_frames == 0, registered
        live_n = {name: Signal(64, name=f"live_{name}_n") for name in live}
        m.d.comb += [live_n[name].eq(sig) for name, sig in live.items()]
        with m.If(clear_d):
            m.d.comb += [sig.eq(0) for sig in live_n.values()]
            m.d.sync += no_tx.eq(1)
        with m.Elif(launched):
            m.d.comb += [live_n["tx_frames"].eq(live["tx_frames"] + 1),
                         live_n["tx_bytes"].eq(live["tx_bytes"] + self.frame_len),
                         live_n["last_tx_ns"].eq(now_d)]
            m.d.sync += no_tx.eq(0)
            with m.If(no_tx):
                m.d.comb += live_n["first_tx_ns"].eq(now_d)
        m.d.sync += [sig.eq(live_n[name]) for name, sig in live.items()]
        # the per-stream counts, one more cycle late, all of them (count, clear, snapshot): from
        # registers of their own, which placement keeps beside the counters' LUT RAM (the
        # emitter's frame stream also addresses the templates, across the generator)
        m.submodules.txc = txc = TxStreamCounters(self.n_streams)
        m.d.sync += [txc.count.eq(launched), txc.clear.eq(clear_d), txc.snapshot.eq(snapshot_d),
                     txc.stream.eq(self.stream), txc.frame_len.eq(self.frame_len)]
        m.d.comb += [txc.read_addr.eq(self.stream_tx.addr), self.stream_tx.data.eq(txc.read_data)]
        with m.If(self.snapshot):
            m.d.sync += [getattr(self.snap, name).eq(live_n[name]) for name in live]
        return m
