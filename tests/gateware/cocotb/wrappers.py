"""Small Amaranth test wrappers of single blocks, converted to Verilog at test time for the
cocotb module tests (tests/gateware/test_cocotb_blocks.py). Generated Verilog goes into the
build cache, never into git.

* :class:`GenTop`: a register bank (CSR bus on top-level ports), the
  :class:`~wirespeed.gateware.generator.TrafficGenerator` and the LiteEth
  :class:`~wirespeed.gateware.mac.EthMAC` transmitter on GMII. With ``tap`` = 1 the
  generator's output stream is cut from the MAC and offered on the ``gen_*`` ports, its
  ``ready`` driven by ``tap_ready`` (backpressure tests); with ``tap`` = 0 it feeds the MAC
  exactly as in a tester port.
* :class:`RxTop`: the EthMAC receiver feeding the
  :class:`~wirespeed.gateware.analyzer.Analyzer` (port counters in the bank, live),
  :class:`~wirespeed.gateware.stream_stats.StreamStats` (window ``ana.streams``),
  :class:`~wirespeed.gateware.capture.Capture` and the
  :class:`~wirespeed.gateware.responder.Responder`, whose frames go out through the MAC.
* :class:`ModTop`: two chained :class:`~wirespeed.gateware.modifier.Modifier` units, a
  :class:`~wirespeed.gateware.prng.RandomRange` and a small per-stream
  :class:`~wirespeed.gateware.histogram.Histogram` (``HIST_BINS`` bins x ``HIST_STREAMS``
  streams), every port on the top level.

One timebase per wrapper: ``now`` counts 8 ns per clock from 0 after reset.
"""

from pathlib import Path

from amaranth import Module, Signal
from amaranth.back import verilog
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from wirespeed.gateware.analyzer import Analyzer
from wirespeed.gateware.capture import Capture
from wirespeed.gateware.generator import TrafficGenerator
from wirespeed.gateware.histogram import Histogram
from wirespeed.gateware.liteeth_mac import MAC_MODULE, mac_verilog
from wirespeed.gateware.mac import EthMAC
from wirespeed.gateware.modifier import Modifier
from wirespeed.gateware.prng import RandomRange
from wirespeed.gateware.registers import ADDR_WIDTH, RegisterBank
from wirespeed.gateware.responder import Responder
from wirespeed.gateware.stream_stats import StreamStats

__all__ = ["GenTop", "RxTop", "ModTop", "WRAPPERS", "write_sources", "register_map", "HIST_BINS", "HIST_STREAMS"]

#: the histogram in ModTop: small enough to read back whole in a test, the same design
HIST_BINS, HIST_STREAMS = 64, 4

_CSR = {"csr_addr": In(ADDR_WIDTH), "csr_r_stb": In(1), "csr_r_data": Out(32),
        "csr_w_stb": In(1), "csr_w_data": In(32)}
_GMII = {"gmii_tx_en": Out(1), "gmii_tx_er": Out(1), "gmii_txd": Out(8),
         "gmii_rx_dv": In(1), "gmii_rx_er": In(1), "gmii_rxd": In(8)}

#: analyzer outputs shown in the bank as ``ana.<name>`` (live)
ANA_COUNTERS = [("rx_frames", 64), ("rx_bytes", 64), ("fcs_errors", 64),
                ("other_frames", 64), ("lat_min", 32), ("lat_max", 32), ("lat_sum", 64),
                ("first_rx_ns", 64), ("last_rx_ns", 64), ("lat_sq_sum", 96), ("jitter_sum", 64)]


def _bank():
    return RegisterBank(name="wrapper", version="0.0.0", clk_hz=125_000_000, n_ports=1)


def _connect_csr(m, top, bank):
    m.d.comb += [bank.bus.addr.eq(top.csr_addr), bank.bus.r_stb.eq(top.csr_r_stb),
                 bank.bus.w_stb.eq(top.csr_w_stb), bank.bus.w_data.eq(top.csr_w_data),
                 top.csr_r_data.eq(bank.bus.r_data)]


def _connect_gmii(m, top, mac):
    m.d.comb += [top.gmii_tx_en.eq(mac.gmii.tx_en), top.gmii_tx_er.eq(mac.gmii.tx_er),
                 top.gmii_txd.eq(mac.gmii.txd), mac.gmii.rx_dv.eq(top.gmii_rx_dv),
                 mac.gmii.rx_er.eq(top.gmii_rx_er), mac.gmii.rxd.eq(top.gmii_rxd)]


class GenTop(wiring.Component):
    NAME = "ws_gen_top"

    def __init__(self):
        super().__init__(_CSR | _GMII | {
            "start": In(1), "stop": In(1), "clear": In(1), "snapshot": In(1), "now": Out(64),
            "running": Out(1),
            "tap": In(1), "tap_ready": In(1),
            "gen_valid": Out(1), "gen_ready": Out(1), "gen_data": Out(8),
            "gen_first": Out(1), "gen_last": Out(1),
        })
        self.bank = _bank()
        self.gen = TrafficGenerator(self.bank, "p0")
        self.rmap = self.bank.register_map()

    def elaborate(self, platform):
        m = Module()
        m.submodules.bank = bank = self.bank
        m.submodules.gen = gen = self.gen
        m.submodules.mac = mac = EthMAC()
        _connect_csr(m, self, bank)
        _connect_gmii(m, self, mac)
        m.d.sync += self.now.eq(self.now + 8)
        m.d.comb += [gen.start.eq(self.start), gen.stop.eq(self.stop), gen.clear.eq(self.clear),
                     gen.snapshot.eq(self.snapshot), gen.now.eq(self.now), gen.hold.eq(0),
                     gen.running_extra.eq(0), self.running.eq(gen.running)]
        src = gen.source
        ready = Signal()
        m.d.comb += [
            self.gen_valid.eq(src.valid), self.gen_data.eq(src.p.data), self.gen_first.eq(src.p.first),
            self.gen_last.eq(src.p.last), self.gen_ready.eq(ready), src.ready.eq(ready),
            mac.sink.payload.eq(src.payload),
        ]
        with m.If(self.tap):
            m.d.comb += [ready.eq(self.tap_ready), mac.sink.valid.eq(0)]
        with m.Else():
            m.d.comb += [ready.eq(mac.sink.ready), mac.sink.valid.eq(src.valid)]
        return m


class RxTop(wiring.Component):
    NAME = "ws_rx_top"

    def __init__(self):
        super().__init__(_CSR | _GMII | {
            "clear": In(1), "snapshot": In(1), "now": Out(64),
            "mac_valid": Out(1), "mac_first": Out(1), "mac_last": Out(1), "mac_error": Out(1),
            "crc_errors": Out(32),
        })
        self.bank = bank = _bank()
        self.lat_def = bank.add("ana.lat_def", 1, "rw", offset=0x00)
        self.stream_group = bank.add("ana.stream_group", 12, "rw", offset=0x04)
        self.ana_regs, offset = {}, 0x08       # the counters one after another
        for name, bits in ANA_COUNTERS:
            self.ana_regs[name] = bank.add(f"ana.{name}", bits, "r", offset=offset)
            offset += 4 * ((bits + 31) // 32)
        self.foreign = bank.add("ana.foreign_frames", 64, "r", offset=0x5C)
        self.stats_seq_errors = bank.add("ana.stats_seq_errors", 64, "r", offset=0x64)
        self.streams_win = bank.add_memory("ana.streams", 1024, 16, word_reads=True, offset=0x800)
        self.resp = Responder(bank.block(0x1000), "p0")
        self.cap = Capture(bank.block(0x1034), "p0")
        self.rmap = bank.register_map()

    def elaborate(self, platform):
        m = Module()
        m.submodules.bank = bank = self.bank
        m.submodules.mac = mac = EthMAC()
        m.submodules.ana = ana = Analyzer()
        m.submodules.stats = stats = StreamStats()
        m.submodules.resp = resp = self.resp
        m.submodules.cap = cap = self.cap
        _connect_csr(m, self, bank)
        _connect_gmii(m, self, mac)
        m.d.sync += self.now.eq(self.now + 8)
        wiring.connect(m, mac.source, ana.sink)
        for watcher in (resp.sink, cap.sink):
            m.d.comb += [watcher.valid.eq(mac.source.valid), watcher.payload.eq(mac.source.payload)]
        wiring.connect(m, resp.source, mac.sink)
        m.d.comb += [
            self.mac_valid.eq(mac.source.valid), self.mac_first.eq(mac.source.p.first),
            self.mac_last.eq(mac.source.p.last), self.mac_error.eq(mac.source.p.error),
            self.crc_errors.eq(mac.crc_errors),
            ana.now.eq(self.now), ana.clear.eq(self.clear), ana.lat_def.eq(self.lat_def),
            cap.now.eq(self.now), resp.clear.eq(self.clear),
            stats.ev_valid.eq(ana.ev_valid), stats.ev_fcs_err.eq(ana.ev_fcs_err), stats.ev_sid.eq(ana.ev_sid),
            stats.ev_seq.eq(ana.ev_seq), stats.ev_latency.eq(ana.ev_latency), stats.ev_rx_ns.eq(ana.ev_rx_ns),
            stats.ev_bytes.eq(ana.ev_bytes), stats.stream_group.eq(self.stream_group),
            stats.clear.eq(self.clear), stats.snapshot.eq(self.snapshot),
            stats.read_addr.eq(self.streams_win.addr), self.streams_win.data.eq(stats.read_data),
            self.foreign.eq(stats.foreign_frames_snap), self.stats_seq_errors.eq(stats.seq_errors_snap),
        ]
        for name, reg in self.ana_regs.items():
            m.d.comb += reg.eq(getattr(ana, name))
        return m


class ModTop(wiring.Component):
    """Modifier units 0 and 1 (1 chained under 0 when its ``chain`` is set) sharing the
    ``frame``/``frame_stream``/``clear`` strobes, a standalone RandomRange, and a Histogram
    whose ports are ``h_<port>``."""
    NAME = "ws_mod_top"

    def __init__(self):
        members = {"frame": In(1), "frame_stream": In(4), "clear": In(1)}
        for j in (0, 1):
            members |= {f"m{j}_mode": In(2), f"m{j}_stream": In(4), f"m{j}_chain": In(1),
                        f"m{j}_base": In(32), f"m{j}_step": In(32), f"m{j}_count": In(32),
                        f"m{j}_seed": In(32),
                        f"m{j}_applies": Out(1), f"m{j}_value": Out(32), f"m{j}_wrap_out": Out(1),
                        f"m{j}_busy": Out(1)}
        members |= {"r_seed": In(32), "r_load": In(1), "r_span": In(32), "r_req": In(1),
                    "r_value": Out(32), "r_ready": Out(1)}
        self._hist = Histogram(HIST_BINS, HIST_STREAMS)
        members |= {f"h_{name}": member for name, member in self._hist.signature.members.items()}
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        units = []
        for j in (0, 1):
            u = Modifier()
            m.submodules[f"mod{j}"] = u
            m.d.comb += [getattr(u, name).eq(getattr(self, f"m{j}_{name}"))
                         for name in ("mode", "stream", "chain", "base", "step", "count", "seed")]
            m.d.comb += [getattr(self, f"m{j}_{name}").eq(getattr(u, name))
                         for name in ("applies", "value", "wrap_out", "busy")]
            m.d.comb += [u.frame.eq(self.frame), u.frame_stream.eq(self.frame_stream), u.clear.eq(self.clear),
                         u.chain_in.eq(units[-1].wrap_out if units else 0)]
            units.append(u)
        m.submodules.rng = rng = RandomRange()
        m.d.comb += [rng.seed.eq(self.r_seed), rng.load.eq(self.r_load), rng.span.eq(self.r_span),
                     rng.req.eq(self.r_req), self.r_value.eq(rng.value), self.r_ready.eq(rng.ready)]
        m.submodules.hist = hist = self._hist
        for name, member in hist.signature.members.items():
            ours, theirs = getattr(self, f"h_{name}"), getattr(hist, name)
            m.d.comb += theirs.eq(ours) if member.flow == In else ours.eq(theirs)
        return m


WRAPPERS = {"gen": GenTop, "rx": RxTop, "mod": ModTop}


def _silence(top):
    """The wrapper was built only for its register map: no 'never elaborated' warnings."""
    for part in [top, *vars(top).values()]:
        if isinstance(part, wiring.Component):
            part._MustUse__silence = True


def register_map(kind):
    """Register map of wrapper ``kind`` (without generating any HDL)."""
    top = WRAPPERS[kind]()
    _silence(top)
    return top.rmap


def _write(path: Path, text: str):
    """Write only when changed, so a warm build finds its inputs untouched."""
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def write_sources(kind, outdir) -> tuple[str, list[Path]]:
    """Verilog of wrapper ``kind`` (and of the LiteEth MAC when it has one) into ``outdir``:
    (top module name, source paths)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    cls = WRAPPERS[kind]
    paths = [outdir / f"{cls.NAME}.v"]
    _write(paths[0], verilog.convert(cls(), name=cls.NAME, emit_src=False))
    if kind in ("gen", "rx"):
        paths.append(outdir / f"{MAC_MODULE}.v")
        _write(paths[1], mac_verilog())
    return cls.NAME, paths
