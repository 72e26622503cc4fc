"""The tester seen from the host: registers by name, identification, time, commands, the
generators' programs, the analyzers' counters, histograms and statistics, the responder, and
the trials (:mod:`.trial`) and learning phase (:mod:`.learning`) built on them.

The contract is docs/architecture.md ("Register map", "Timing of a trial").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from wirespeed import regs
from wirespeed.gateware.regmap import CMD_CLEAR, CMD_SNAPSHOT, CMD_START, CMD_STOP, MAGIC

from ..errors import DeviceError, DeviceMismatch
from ..traffic import CompiledPort, Flow, PortAddress, PortProgram, StreamSpec, ns_to_cycles, rate_to_period
from ..transport import Transport
from . import learning, trial
from .models import GatewareId, HistogramConfig, LatencyHistogram, LearningResult, PortCounters, TrialResult

if TYPE_CHECKING:
    from wirespeed.gateware.regmap import RegisterMap

__all__ = ["Device", "ID_REGISTERS", "RESPONDER_COUNTERS", "CMD_START", "CMD_STOP", "CMD_CLEAR", "CMD_SNAPSHOT"]

ID_REGISTERS = (regs.ID.magic, regs.ID.version, regs.ID.map_hash, regs.ID.clk_hz, regs.ID.n_ports)
RESPONDER_COUNTERS = ("arp_requests", "arp_replies", "ns_received", "na_sent")   # pN.arp.*


class Device:
    """A tester reached through ``transport``, addressed by the register names of ``regmap``.

    ``stall_timeout_s``: wall-clock seconds that ``time.ns`` may stay still while the host
    waits on it before the tester is declared stuck (a stopped simulation, a hung board).
    """

    def __init__(self, transport: Transport, regmap: RegisterMap, *, stall_timeout_s: float = 10.0,
                 poll_interval_s: tuple[float, float] = (0.0005, 0.05)) -> None:
        self.transport = transport
        self.regmap = regmap
        self.stall_timeout_s = stall_timeout_s
        self.poll_interval_s = poll_interval_s
        self.ident: GatewareId | None = None

    @property
    def clk_hz(self) -> int:
        clk_hz: int = self.regmap.clk_hz
        return clk_hz

    @property
    def n_ports(self) -> int:
        n_ports: int = self.regmap.n_ports
        return n_ports

    # registers

    def read(self, name: str) -> int:
        return self.read_many([name])[name]

    def write(self, name: str, value: int) -> None:
        self.write_many({name: value})

    def read_many(self, names: Sequence[str]) -> dict[str, int]:
        """Read ``names`` in one transaction (wide registers low word first)."""
        return self.transact({}, names)

    def write_many(self, values: Mapping[str, int]) -> None:
        """Write ``values`` in order, in one transaction."""
        self.transact(values, ())

    def transact(self, writes: Mapping[str, int], reads: Sequence[str]) -> dict[str, int]:
        """Write ``writes`` in order, then read ``reads``, in one transaction."""
        pairs: list[tuple[int, int]] = []
        for name, value in writes.items():
            reg = self.regmap[name]
            if reg.access == "r":
                raise ValueError(f"register {name} is read only")
            pairs += zip(reg.word_offsets, reg.split(value))
        regs = [self.regmap[name] for name in reads]
        words = self.transport.transact(pairs, [off for reg in regs for off in reg.word_offsets])
        values: dict[str, int] = {}
        at = 0
        for reg in regs:
            values[reg.name], at = reg.join(words[at:at + reg.words]), at + reg.words
        return values

    # identification

    def connect(self) -> GatewareId:
        """Read the identification block and refuse a tester whose gateware does not match
        ``regmap`` (raises :class:`DeviceMismatch`, one line)."""
        values = self.read_many(ID_REGISTERS)
        ident = GatewareId(**{name.split(".")[1]: value for name, value in values.items()})
        where = self.transport.url
        if ident.magic != MAGIC:
            raise DeviceMismatch(f"{where} is not a wirespeed tester (id.magic {ident.magic:#010x}, "
                                 f"expected {MAGIC:#010x})")
        if ident.map_hash != self.regmap.hash:
            raise DeviceMismatch(f"register map mismatch: {where} has map hash {ident.map_hash:#010x}, this "
                                 f"host expects {self.regmap.hash:#010x}; rebuild the gateware or update the host")
        for what, have, want in ((regs.ID.n_ports, ident.n_ports, self.n_ports),
                                 (regs.ID.clk_hz, ident.clk_hz, self.clk_hz)):
            if have != want:
                raise DeviceMismatch(f"{where} reports {what} = {have}, the register map says {want}")
        self.ident = ident
        return ident

    # time

    def now_ns(self) -> int:
        """The tester's ``time.ns`` (simulated time in a simulation)."""
        return self.read(regs.TIME.ns)

    def wait_ns(self, ns: int) -> int:
        """Wait until ``ns`` nanoseconds of tester time have passed; returns ``time.ns``."""
        end = self.now_ns() + ns
        return self.wait_until([], lambda v: v[regs.TIME.ns] >= end, expected_ns=end)[regs.TIME.ns]

    def wait_until(self, names: Sequence[str], done: Callable[[dict[str, int]], bool], *, expected_ns: int,
                   deadline_ns: int | None = None) -> dict[str, int]:
        """Read registers ``names`` and ``time.ns`` until ``done(values)`` (a function of the
        name -> value mapping); returns the last values. Raises DeviceError when tester time
        passes ``deadline_ns`` first, or stands still for ``stall_timeout_s`` of wall time.
        Sleeps about the tester time still expected (until ``expected_ns``), within
        ``poll_interval_s``."""
        last_ns, last_change = -1, time.monotonic()
        while True:
            values = self.read_many([*names, regs.TIME.ns])
            now = values[regs.TIME.ns]
            if done(values):
                return values
            if deadline_ns is not None and now >= deadline_ns:
                raise DeviceError(f"{', '.join(names)} still not done at time.ns {now} "
                                  f"(deadline {deadline_ns} ns)")
            if now != last_ns:
                last_ns, last_change = now, time.monotonic()
            elif time.monotonic() - last_change > self.stall_timeout_s:
                raise DeviceError(f"time.ns of {self.transport.url} stopped at {now} ns for "
                                  f"{self.stall_timeout_s:g} s: is the tester (simulation) running?")
            low, high = self.poll_interval_s
            time.sleep(min(max((expected_ns - now) / 1e9, low), high))

    # commands

    def _command(self, bits: int) -> int:
        """Strobe ``ctrl.cmd``; returns ``time.ns`` read just after, in the same transaction."""
        return self.transact({regs.CTRL.cmd: bits}, [regs.TIME.ns])[regs.TIME.ns]

    def start(self) -> int:
        """START every enabled generator on the same clock; returns ``time.ns`` just after."""
        return self._command(CMD_START)

    def stop(self) -> None:
        self._command(CMD_STOP)

    def clear(self) -> None:
        """Zero every counter and the sequence state of every port."""
        self._command(CMD_CLEAR)

    def read_memory(self, name: str) -> list[int]:
        """Every entry of a memory window (e.g. ``p1.ana.hist``)."""
        reg = self.regmap[name]
        entries: list[int] = reg.entries(self.transport.transact([], reg.word_offsets))
        return entries

    def write_memory(self, name: str, entries: Mapping[int, int] | Sequence[int], *, start: int = 0) -> None:
        """Write entries of a read/write memory window (e.g. ``p0.gen.tmpl``) in one
        transaction: a mapping index -> value, or a sequence written from entry ``start``."""
        reg = self.regmap[name]
        if reg.depth < 2 or reg.access != "rw":
            raise ValueError(f"{name} is not a writable memory window")
        items = entries.items() if isinstance(entries, Mapping) else enumerate(entries, start)
        pairs = []
        for index, value in items:
            if not 0 <= index < reg.depth:
                raise ValueError(f"{name}: entry {index} is outside 0..{reg.depth - 1}")
            base = reg.offset + 4 * reg.words * index
            pairs += [(base + 4 * i, word) for i, word in enumerate(reg.split(value))]
        if pairs:
            self.transport.transact(pairs, [])

    def configure_histogram(self, port: int, config: HistogramConfig) -> None:
        self.check_port(port)
        ana = regs.port(port).ana
        self.write_many({ana.hist_offset: config.offset_ns, ana.hist_shift: config.shift})

    def read_stream_histograms(self, port: int, config: HistogramConfig) -> dict[int, LatencyHistogram]:
        """The latency histograms of port ``port``'s streams that had latency samples, by index
        in its stream group (``pN.ana.hist_used``, as of the last SNAPSHOT), binned as
        ``config`` (what :meth:`configure_histogram` set). Read when traffic has stopped."""
        self.check_port(port)
        used = self.read(regs.port(port).ana.hist_used)
        uo = self.read_memory(regs.port(port).ana.hist_uo)
        window = self.regmap[regs.port(port).ana.hist]
        result = {}
        for stream in range(len(uo) // 2):
            if not used >> stream & 1:
                continue
            select = self.regmap[regs.port(port).ana.hist_stream]
            words = self.transport.transact([(select.offset, stream)], window.word_offsets)
            bins = window.entries(words)
            result[stream] = LatencyHistogram(offset_ns=config.offset_ns, bin_ns=config.bin_ns,
                                              counts={i: n for i, n in enumerate(bins) if n},
                                              underflow=uo[2 * stream], overflow=uo[2 * stream + 1])
        return result

    def read_histogram(self, port: int, config: HistogramConfig, counters: PortCounters) -> LatencyHistogram:
        """Port ``port``'s latency distribution: the sum of its streams' histograms."""
        counts: dict[int, int] = {}
        for hist in self.read_stream_histograms(port, config).values():
            for index, n in hist.counts.items():
                counts[index] = counts.get(index, 0) + n
        return LatencyHistogram(offset_ns=config.offset_ns, bin_ns=config.bin_ns, counts=dict(sorted(counts.items())),
                                underflow=counters.hist_underflow, overflow=counters.hist_overflow)

    def snapshot_counters(self) -> dict[int, PortCounters]:
        """SNAPSHOT every counter of every port at one instant and read them all, in one
        transaction."""
        names = [name for port in range(self.n_ports) for name in PortCounters.register_names(port, self.regmap)]
        values = self.transact({regs.CTRL.cmd: CMD_SNAPSHOT}, names)
        return {port: PortCounters.from_registers(port, values) for port in range(self.n_ports)}

    def read_stream_stats(self, port: int) -> list[dict[str, int]]:
        """The per-stream receive statistics of port ``port`` as of the last SNAPSHOT
        (``pN.ana.streams``): 16 entries, entry i for stream id ``stream_group * 16 + i``,
        fields per :data:`wirespeed.gateware.statsdesc.STATS_FIELDS` (docs/analyzer.md)."""
        from wirespeed.gateware.statsdesc import unpack_entry
        self.check_port(port)
        self._wait_streams_copied(port)
        return [unpack_entry(value) for value in self.read_memory(regs.port(port).ana.streams)]

    def read_stream_tx(self, port: int) -> list[tuple[int, int]]:
        """(frames, bytes) sent by each of port ``port``'s generator streams (by stream index,
        not id) as of the last SNAPSHOT (``pN.gen.stream_tx``)."""
        self.check_port(port)
        return [(value & (2**64 - 1), value >> 64) for value in self.read_memory(regs.port(port).gen.stream_tx)]

    def read_stream_entries(self, port: int, indices: Sequence[int]) -> dict[int, dict[str, int]]:
        """Entries ``indices`` of port ``port``'s per-stream statistics as of the last SNAPSHOT
        (as :meth:`read_stream_stats`, reading only those entries: one transaction)."""
        from wirespeed.gateware.statsdesc import unpack_entry
        self.check_port(port)
        self._wait_streams_copied(port)
        reg = self.regmap[regs.port(port).ana.streams]
        wanted = sorted(set(indices))
        offsets = [reg.offset + 4 * (reg.words * i + w) for i in wanted for w in range(reg.words)]
        words = self.transport.transact([], offsets)
        return {i: unpack_entry(reg.join(words[k * reg.words:(k + 1) * reg.words])) for k, i in enumerate(wanted)}

    def _wait_streams_copied(self, port: int) -> None:
        # the gateware copies the snapshot into the window after the command (a few us)
        copying = regs.port(port).ana.streams_copying
        if copying in self.regmap:
            now = self.read_many([copying, regs.TIME.ns])
            if now[copying]:
                self.wait_until([copying], lambda v: not v[copying], expected_ns=now[regs.TIME.ns],
                                deadline_ns=now[regs.TIME.ns] + 10_000_000)

    #: simulation only: a callable returning the simulated DUT model's own counters, by
    #: direction then name (``{"0->1": {"lost": ...}}``); trials record their difference
    dut_probe: Callable[[], dict[str, dict[str, int]]] | None = None

    def dut_counters(self) -> dict[str, dict[str, int]] | None:
        """The simulated DUT model's counters now (None: not a simulation)."""
        return self.dut_probe() if self.dut_probe is not None else None

    #: simulation only: a callable returning what the simulated DUT reports of itself (a Linux
    #: DUT: the kernel's interfaces, neighbours, bridge table, SNMP counters)
    dut_state_probe: Callable[[], dict[str, Any]] | None = None

    # generators

    def check_port(self, port: int) -> None:
        if not 0 <= port < self.n_ports:
            raise ValueError(f"port must be 0..{self.n_ports - 1}, not {port}")

    def configure_generator(self, port: int, spec: StreamSpec, rate_fps: float, *,
                            duration_ns: int | None = None, count: int | None = None) -> int:
        """Enable port ``port``'s generator for ``spec`` frames at ``rate_fps``, for
        ``duration_ns`` of tester time or ``count`` frames (exactly one of them). Returns the
        programmed period (Q32.32 cycles)."""
        self.check_port(port)
        if (duration_ns is None) == (count is None):
            raise ValueError("give exactly one of duration_ns or count")
        rate_to_period(rate_fps, spec.point, self.clk_hz)          # checks the rate
        program = PortProgram(port=port, streams=(spec,), rate_fps=rate_fps, clk_hz=self.clk_hz)
        compiled = program.compile()
        self.load_program(port, compiled, duration_ns=duration_ns, count=count)
        return compiled.streams[0].descriptor["period"]

    def load_program(self, port: int, compiled: CompiledPort, *, duration_ns: int | None = None,
                     count: int | None = None, burst_len: int = 0, burst_gap_ns: int = 0) -> None:
        """Load a compiled port program (:meth:`wirespeed.traffic.PortProgram.compile`) into
        port ``port``'s generator and enable it for ``duration_ns`` of tester time or ``count``
        frames of all streams together (exactly one of them), optionally in bursts of
        ``burst_len`` frames back to back separated by ``burst_gap_ns``."""
        from .program import write_port_program
        self.check_port(port)
        if (duration_ns is None) == (count is None):
            raise ValueError("give exactly one of duration_ns or count")
        self.write(regs.port(port).gen.enable, 0)
        write_port_program(self, port, compiled)
        values = {"burst_len": burst_len, "burst_gap": ns_to_cycles(burst_gap_ns, self.clk_hz)}
        if duration_ns is not None:
            values |= {"mode": 0, "duration": ns_to_cycles(duration_ns, self.clk_hz)}
        elif count is not None:             # always, as exactly one of them was given
            values |= {"mode": 1, "count": count}
        gen = regs.port(port).gen
        self.write_many({getattr(gen, k): v for k, v in values.items()} | {gen.enable: 1})

    def disable_generator(self, port: int) -> None:
        """Turn port ``port``'s generator off (a port without one sends nothing anyway)."""
        self.check_port(port)
        if self.has_generator(port):
            self.write(regs.port(port).gen.enable, 0)

    def has_generator(self, port: int) -> bool:
        """Whether port ``port`` of this build has a traffic generator (``pN.gen.*``)."""
        return regs.port(port).gen.enable in self.regmap

    def has_analyzer(self, port: int) -> bool:
        """Whether port ``port`` of this build has an analyzer (``pN.ana.*``)."""
        return regs.port(port).ana.rx_frames in self.regmap

    def has_responder(self, port: int) -> bool:
        """Whether port ``port`` of this build has the ARP/ND responder (``pN.arp.*``: a build
        with the responder, on the ports that receive)."""
        return regs.port(port).arp.mac in self.regmap

    def counts_sequence_errors(self, port: int) -> bool:
        """Whether port ``port``'s analyzer counts sequence errors (``pN.ana.seq_errors``: a build
        with per-stream receive statistics)."""
        return regs.port(port).ana.seq_errors in self.regmap

    def check_flows(self, flows: Sequence[Flow]) -> None:
        """ValueError (one line) for a flow this build cannot carry: its sending port has no
        generator or its receiving port no analyzer (a unidirectional board build)."""
        for flow in flows:
            for port, has, what in ((flow.tx_port, self.has_generator, "generator"),
                                    (flow.rx_port, self.has_analyzer, "analyzer")):
                self.check_port(port)
                if not has(port):
                    raise ValueError(f"port {port} of this gateware has no {what} (it sends on port(s) "
                                     f"{self._ports_with(self.has_generator)} and receives on port(s) "
                                     f"{self._ports_with(self.has_analyzer)}), so it cannot carry "
                                     f"port {flow.tx_port} -> port {flow.rx_port}")

    def _ports_with(self, has: Callable[[int], bool]) -> str:
        return ", ".join(str(p) for p in range(self.n_ports) if has(p)) or "none"

    # trials (wirespeed.host.trial: one engine, three schedules)

    def run_trial(self, flows: Sequence[Flow], rate_fps: float, duration_ns: int, wait_ns: int,
                  histogram: HistogramConfig | None = None, *, lat_def: int = 0,
                  event: tuple[int, Callable[[], None]] | None = None, timeline_points: int = 0) -> TrialResult:
        """Every flow at ``rate_fps`` for ``duration_ns`` (:func:`~.trial.run_trial`, :class:`~.trial.Constant`)."""
        return trial.run_trial(self, flows, trial.Constant(rate_fps, duration_ns), wait_ns, histogram,
                               lat_def=lat_def, event=event, timeline_points=timeline_points)

    def run_phase_trial(self, flow: Flow, rates_fps: tuple[float, float], phase_ns: int, duration_ns: int,
                        wait_ns: int, histogram: HistogramConfig | None = None, *,
                        lat_def: int = 0, timeline_points: int = 0) -> TrialResult:
        """One flow whose rate steps down at ``phase_ns`` (:class:`~.trial.TwoPhase`, RFC 2544 26.5);
        the result's ``offered_fps`` is the first rate, ``period_q32`` the second phase's period."""
        return trial.run_trial(self, [flow], trial.TwoPhase(rates_fps, phase_ns, duration_ns), wait_ns, histogram,
                               lat_def=lat_def, timeline_points=timeline_points)

    def run_burst_trial(self, flow: Flow, burst_frames: int, wait_ns: int,
                        histogram: HistogramConfig | None = None, *, lat_def: int = 0) -> TrialResult:
        """One burst of ``burst_frames`` frames at minimum gap from idle (:class:`~.trial.Burst`,
        RFC 2544 26.4); the result's ``duration_ns`` is the burst's time on the wire, its
        ``offered_fps`` the line rate."""
        return trial.run_trial(self, [flow], trial.Burst(burst_frames), wait_ns, histogram, lat_def=lat_def)

    # learning (RFC 2544 section 23)

    def configure_addresses(self, addresses: Mapping[int, PortAddress], *, answer_arp: bool = True,
                            answer_nd: bool = True) -> None:
        """Set each port's own addresses (``pN.arp.mac/ipv4/ipv6``) and whether it answers ARP
        requests and IPv6 neighbour solicitations for them (``pN.arp.enable``); a port without
        a responder in this gateware has no such registers (its addresses are only in the
        frames it sends)."""
        enable = (1 if answer_arp else 0) | (2 if answer_nd else 0)
        values: dict[str, int] = {}
        for port, address in sorted(addresses.items()):
            self.check_port(port)
            if self.has_responder(port):
                values |= address.registers(port) | {regs.port(port).arp.enable: enable}
        if values:
            self.write_many(values)

    def read_responder(self, ports: Sequence[int]) -> dict[int, dict[str, int]]:
        """The ARP/ND responder counters of ``ports`` (live, zeroed by CLEAR), in one transaction;
        ports without a responder in this gateware are left out."""
        names = [name for p in ports for c in RESPONDER_COUNTERS
                 if (name := getattr(regs.port(p).arp, c)) in self.regmap]
        values = self.read_many(names) if names else {}
        result: dict[int, dict[str, int]] = {}
        for name, value in values.items():
            port, _, counter = name.split(".")
            result.setdefault(int(port[1:]), {})[counter] = value
        return result

    def learn(self, flows: Sequence[Flow], addresses: Mapping[int, PortAddress] | None = None,
              **kwargs: Any) -> LearningResult:
        """The learning phase before the first trial (:func:`wirespeed.host.learning.learn`)."""
        return learning.learn(self, flows, addresses, **kwargs)
