"""Build configuration of the tester: the parameters that set its size.

The simulation keeps the full tester (:data:`SIM`); an FPGA board builds a smaller one
(:data:`BOARD_25F` for the Colorlight 5A-75B's LFE5U-25F, :data:`BOARD_45F` for the Versa's
LFE5UM-45F). Every parameter is per port. The configuration shapes the register map (window
depths, modifier blocks, optional blocks), so the gateware reports it in ``id.config``, one
32-bit word (:meth:`TesterConfig.word`) at the fixed byte address :data:`ID_CONFIG_OFFSET`
in every configuration: a host reads that word first, rebuilds the map with
``build_register_map(TesterConfig.from_word(word))`` and then checks ``id.map_hash``.

This module is plain Python (no Amaranth import), like :mod:`.regmap`, so the host can use it.

Word layout (least significant field first, :data:`WORD_FIELDS`): ``layout`` (1, this
layout; a word of 0 is a bitstream from before ``id.config``), log2 ``n_streams``,
``n_modifiers``, log2 ``hist_streams``, ``stream_stats``, ``responder``, ``capture``, log2
``capture_words``, log2 ``capture_frames`` (1 bit each for the flags), then the ports
*without* a generator and the ports *without* an analyzer (a bit per port, so the full
tester's word is what it was before the roles existed); the remaining bits are 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from .regmap import pack_fields, unpack_fields

__all__ = ["TesterConfig", "SIM", "BOARD_25F", "BOARD_45F", "PRESETS", "CLK_HZ", "NS_PER_CYCLE", "ID_CONFIG_OFFSET",
           "ID_OFFSETS", "WORD_FIELDS", "WORD_LAYOUT", "MAX_STREAMS", "MAX_MODIFIERS", "GROUP_STREAMS", "ROLE_PORTS"]

#: byte address of ``id.config`` in every configuration (after ``ctrl.cmd``)
#: the system clock of every build: one byte per clock per direction at 1 Gb/s (8 ns)
CLK_HZ = 125_000_000
#: one clock cycle, the time resolution of every timestamp and simulated delay
NS_PER_CYCLE = 1_000_000_000 // CLK_HZ
ID_CONFIG_OFFSET = 0x20
#: byte addresses of the identification block in every build: the host reads them before it has a map
ID_OFFSETS = {"id.magic": 0x00, "id.version": 0x04, "id.map_hash": 0x08, "id.clk_hz": 0x0C, "id.n_ports": 0x10,
              "id.config": ID_CONFIG_OFFSET}
#: value of the word's ``layout`` field
WORD_LAYOUT = 1
#: limits of the generator: the modifiers' ``stream`` field is 4 bits, the descriptor table 16
MAX_STREAMS = 16
MAX_MODIFIERS = 8
#: stream ids of a port's stream group (per-stream statistics and histograms follow it)
GROUP_STREAMS = 16
#: ports the role masks (``generators``, ``analyzers``) describe
ROLE_PORTS = 2
_ALL_PORTS = (1 << ROLE_PORTS) - 1

#: (name, bits) of the ``id.config`` word, least significant first
WORD_FIELDS = [
    ("layout", 4),
    ("log2_streams", 3),
    ("n_modifiers", 4),
    ("log2_hist_streams", 3),
    ("stream_stats", 1),
    ("responder", 1),
    ("capture", 1),
    ("log2_capture_words", 5),
    ("log2_capture_frames", 5),
    ("no_generator", ROLE_PORTS),
    ("no_analyzer", ROLE_PORTS),
]


def _log2(value):
    return value.bit_length() - 1


def _power_of_two(value):
    return isinstance(value, int) and value >= 1 and value & (value - 1) == 0


@dataclass(frozen=True)
class TesterConfig:
    """The size of each tester port.

    * ``n_streams``: generator streams (templates, descriptors, per-stream transmit counts),
      a power of two from 2 to 16;
    * ``n_modifiers``: field modifier units of the generator, 0 to 8;
    * ``hist_streams``: latency histograms (1024 bins of 40 bits each, block RAM), one for
      each of the stream group's first ``hist_streams`` streams, a power of two from 1 to 16;
    * ``stream_stats``: per-stream receive statistics of the stream group (``pN.ana.streams``,
      the port's sequence-error count and the gap/loss tracker's input);
    * ``responder``: the ARP / neighbour discovery responder (``pN.arp.*``) of each port with
      an analyzer (every port in the full tester). A port that only sends is never the
      destination of the DUT's traffic, so the DUT never resolves its addresses: a one-way
      build answers ARP/ND on its receiving port only;
    * ``capture``: frame capture (``pN.cap.*``) of ``capture_words`` 32-bit data words
      (a power of two from 256 to 65536) and ``capture_frames`` index entries (a power of two
      from 1 to 65536);
    * ``generators``, ``analyzers``: the ports (bit N: port N, of the first
      :data:`ROLE_PORTS`) that have a traffic generator (``pN.gen.*``, ``pN.modJ.*``) and an
      analyzer with its latency histograms, gap tracker and per-stream statistics
      (``pN.ana.*``). Every port has both in the full tester; a board may build a
      unidirectional tester (port 0 sends, port 1 receives: the set-up of the issue's
      Colorlight, tester port A -> DUT -> port B) to free half its logic.
    """

    n_streams: int = 16
    n_modifiers: int = 8
    hist_streams: int = 16
    stream_stats: bool = True
    responder: bool = True
    capture: bool = True
    capture_words: int = 1024
    capture_frames: int = 32
    generators: int = _ALL_PORTS
    analyzers: int = _ALL_PORTS

    def __post_init__(self):
        if not _power_of_two(self.n_streams) or not 2 <= self.n_streams <= MAX_STREAMS:
            raise ValueError(f"n_streams must be a power of two from 2 to {MAX_STREAMS}, not {self.n_streams}")
        if not isinstance(self.n_modifiers, int) or not 0 <= self.n_modifiers <= MAX_MODIFIERS:
            raise ValueError(f"n_modifiers must be 0 to {MAX_MODIFIERS}, not {self.n_modifiers}")
        if not _power_of_two(self.hist_streams) or self.hist_streams > GROUP_STREAMS:
            raise ValueError(f"hist_streams must be a power of two from 1 to {GROUP_STREAMS}, not {self.hist_streams}")
        for name in ("stream_stats", "responder", "capture"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, not {getattr(self, name)!r}")
        if not _power_of_two(self.capture_words) or not 256 <= self.capture_words <= 65536:
            raise ValueError(f"capture_words must be a power of two from 256 to 65536, not {self.capture_words}")
        if not _power_of_two(self.capture_frames) or self.capture_frames > 65536:
            raise ValueError(f"capture_frames must be a power of two from 1 to 65536, not {self.capture_frames}")
        for name in ("generators", "analyzers"):
            mask = getattr(self, name)
            if not isinstance(mask, int) or isinstance(mask, bool) or not 1 <= mask <= _ALL_PORTS:
                raise ValueError(f"{name} must be a mask of ports 1 to {_ALL_PORTS} (bit N: port N, at least "
                                 f"one port), not {mask!r}")

    def has_generator(self, port: int) -> bool:
        """Whether port ``port`` has a traffic generator (ports beyond the masks: yes)."""
        return port >= ROLE_PORTS or bool(self.generators >> port & 1)

    def has_analyzer(self, port: int) -> bool:
        """Whether port ``port`` has an analyzer (ports beyond the masks: yes)."""
        return port >= ROLE_PORTS or bool(self.analyzers >> port & 1)

    def has_responder(self, port: int) -> bool:
        """Whether port ``port`` has the ARP/ND responder: a build with it, a port with an analyzer."""
        return self.responder and self.has_analyzer(port)

    def word(self) -> int:
        """The 32-bit ``id.config`` word (see the module's docstring)."""
        return pack_fields(WORD_FIELDS, {
            "layout": WORD_LAYOUT,
            "log2_streams": _log2(self.n_streams),
            "n_modifiers": self.n_modifiers,
            "log2_hist_streams": _log2(self.hist_streams),
            "stream_stats": int(self.stream_stats),
            "responder": int(self.responder),
            "capture": int(self.capture),
            "log2_capture_words": _log2(self.capture_words),
            "log2_capture_frames": _log2(self.capture_frames),
            "no_generator": ~self.generators & _ALL_PORTS,
            "no_analyzer": ~self.analyzers & _ALL_PORTS,
        }, "id.config")

    @classmethod
    def from_word(cls, word: int) -> "TesterConfig":
        """The configuration a gateware reports in ``id.config``; ValueError (one line) for a
        word that is not one (0: a gateware from before ``id.config``)."""
        if not 0 <= word < 1 << 32:
            raise ValueError(f"id.config {word!r} is not a 32-bit word")
        f = unpack_fields(WORD_FIELDS, word)
        if word == 0:
            raise ValueError("id.config is 0: the gateware predates id.config (rebuild it)")
        if f["layout"] != WORD_LAYOUT:
            raise ValueError(f"id.config {word:#010x}: unknown layout {f['layout']} (this host knows {WORD_LAYOUT})")
        if word >> sum(bits for _, bits in WORD_FIELDS):
            raise ValueError(f"id.config {word:#010x}: reserved bits set")
        try:
            return cls(n_streams=1 << f["log2_streams"], n_modifiers=f["n_modifiers"],
                       hist_streams=1 << f["log2_hist_streams"], stream_stats=bool(f["stream_stats"]),
                       responder=bool(f["responder"]), capture=bool(f["capture"]),
                       capture_words=1 << f["log2_capture_words"], capture_frames=1 << f["log2_capture_frames"],
                       generators=~f["no_generator"] & _ALL_PORTS, analyzers=~f["no_analyzer"] & _ALL_PORTS)
        except ValueError as exc:
            raise ValueError(f"id.config {word:#010x}: {exc}") from None


#: The full tester, as simulated (the register map the tests and golden files pin).
SIM = TesterConfig()

#: Colorlight 5A-75B, LFE5U-25F: the traffic engine of RFC 2544, one way: port 0 sends, port 1
#: receives (tester port A -> DUT -> port B), as a generator with its scheduler and tables takes
#: a quarter of the part, so the ports, the MACs and the board's management logic leave room to
#: route at 125 MHz: 8 streams without field modifiers (each modifier is a large block), one
#: latency histogram and the per-stream receive statistics (sequence errors and system
#: recovery); no ARP/ND responder (with it the part is too full to meet 125 MHz: give the DUT
#: static ARP/ND entries, or use the learning build below) and no capture. What each block
#: costs: docs/performance.md.
BOARD_25F = TesterConfig(n_streams=8, n_modifiers=0, hist_streams=1, stream_stats=True, responder=False,
                         capture=False, capture_words=256, capture_frames=1, generators=0b01, analyzers=0b10)

#: The Colorlight's other build (``wirespeed build --board colorlight-5a-75b-v7 --variant
#: learning``): ``BOARD_25F`` with the ARP/ND responder on port 1 in place of the per-stream
#: statistics, which do not both fit at 125 MHz. It runs the learning
#: phase, so a DUT that routes resolves the tester's addresses itself; it has no system
#: recovery and counts no sequence errors. Figures in docs/performance.md.
BOARD_25F_LEARNING = TesterConfig(n_streams=8, n_modifiers=0, hist_streams=1, stream_stats=False, responder=True,
                                  capture=False, capture_words=256, capture_frames=1, generators=0b01,
                                  analyzers=0b10)

#: Lattice ECP5 Versa, LFE5UM-45F (43,848 LUT4, 108 DP16KD): one way like the 25F (port 0
#: sends, port 1 receives), with everything an RFC 2544 run reads: 16 streams, four latency
#: histograms, per-stream receive statistics, the ARP/ND responder and the capture; no field
#: modifiers. The two-way build (generators and analyzers on both ports, two modifiers, no
#: per-stream statistics) fills the part and misses 125 MHz by far: figures in
#: docs/performance.md.
BOARD_45F = TesterConfig(n_streams=16, n_modifiers=0, hist_streams=4, stream_stats=True, responder=True,
                         capture=True, capture_words=1024, capture_frames=32, generators=0b01, analyzers=0b10)

PRESETS = {"sim": SIM, "board_25f": BOARD_25F, "board_25f_learning": BOARD_25F_LEARNING, "board_45f": BOARD_45F}
