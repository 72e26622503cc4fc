"""The generator's stream table, as data: plain Python shared by the gateware
(:mod:`wirespeed.gateware.generator`), its golden model and the host, which fills it.

A port has :data:`N_STREAMS` streams. Each has

* a **template**: the first ``hdr_len`` bytes of its frames (Ethernet II, optional 802.1Q,
  IPv4 or IPv6, UDP: built by the host), :data:`TEMPLATE_BYTES` per stream in the port's
  ``pN.gen.tmpl`` window (one byte per entry, stream ``s`` at entries ``s * 128 ..``);
* a **descriptor** (:data:`DESC_FIELDS`, packed least significant field first into one
  256-bit entry of ``pN.gen.desc``): size mode, length and checksum patch points, rate;
* frames of any length from 64 (or ``hdr_len + 20``) to 9018 bytes.

The k-th frame of stream s (k counted from 0 since CLEAR, its sequence number), of length
L bytes FCS included, is made of (byte offsets from the destination MAC):

1. template bytes ``0 .. hdr_len - 1``, with the patches below applied;
2. zero fill ``hdr_len .. L - 21``;
3. the 16-byte signature ``L - 20 .. L - 5`` (see :mod:`wirespeed.gateware.frame`): magic,
   stream id, sequence k (32), transmit timestamp (48, ns), check;
4. the FCS, appended by the MAC.

Patches, applied to the template in this order (a later one wins on the same bit):

* **modifiers** (a per-port pool of :data:`N_MODIFIERS`, registers ``pN.mod{j}.*``): unit j
  with ``mode`` != off and ``stream`` == s writes its current 32-bit value ``v``, big-endian,
  into bytes ``offset .. offset + 3`` under ``mask``: ``byte = (tmpl & ~mask) | (v & mask)``;
  ``offset`` is even. Values (``idx`` counts the unit's advances since CLEAR):
  increment: ``base + (idx % count) * step``; decrement: ``base - (idx % count) * step``;
  random: ``base + r * step`` with ``r`` uniform in ``[0, count)`` drawn by :func:`draw`
  from the unit's own xorshift32 generator (seeded ``seed_for(pN.gen.seed, j)``), and
  ``step`` a power of two. All modulo 2**32. A unit with ``chain`` = 1 advances only on
  frames where unit j - 1 wraps (``idx % count`` returns to 0; a random unit wraps on every
  frame), so two chained units walk ``count0 * count1`` combinations; otherwise it advances
  on every frame of its stream. The value is used before the unit advances, so frame 0
  carries ``base``.
* **lengths**: if ``len1_en``, bytes ``len1_off, +1`` = ``L - len1_adj`` (IPv4 total length
  or IPv6 payload length); if ``len2_en``, bytes ``len2_off, +1`` = ``L - len2_adj`` (UDP
  length).
* **IPv4 header checksum**: if ``ipcsum_en``, bytes ``ipcsum_off, +1`` =
  ``~fold(ipcsum_base + len1 + sum of the 16-bit halves of (v & mask) of every applied
  modifier with csum bit 0)``; ``ipcsum_base`` is the ones' complement sum of the template's
  IPv4 header words with the checksum, the length and every masked modifier bit zero.
* **UDP checksum**: if ``udpcsum_en``, bytes ``udpcsum_off, +1`` = ``~fold(udpcsum_base +
  2 * len2 + sum of the halves of (v & mask) of every applied modifier with csum bit 1 +
  sig)``, 0xFFFF when that is 0 (RFC 768); ``sig`` is the ones' complement sum of the 8
  signature words, byte-swapped when the signature starts an odd number of bytes after the
  checksum field (``(L ^ udpcsum_off) & 1``). ``udpcsum_base`` sums the pseudo-header
  (addresses, protocol 17; not the length) and the UDP header (ports) with the length, the
  checksum and every masked modifier bit zero, as the template holds them.

The template bytes under every modifier mask and in the length and checksum fields must be
zero (the host's compiler makes them so): then ``(tmpl & ~mask) | (v & mask)`` adds exactly
``v & mask`` to the sums.

Frame sizes (``size_mode``): fixed ``size_a``; increment ``size_a``, ``+ size_step``, ...
while ``<= size_b``, then ``size_a`` again; random ``size_a + draw(size_b - size_a + 1)``
from the port's size generator (seeded ``seed_for(pN.gen.seed, N_MODIFIERS)``, one draw per
frame of any random-size stream, in the port's frame order); sequence
``pN.gen.sizes[size_table_base + k % size_table_len]`` (an RFC 6985 IMIX genome expanded by
the host).

Scheduling: stream s's frame k is due ``k * period`` clock cycles (Q32.32) after the trial's
first frame was ready to leave (about 21 cycles after START);
the generator sends the earliest-due enabled stream next (ties: the lowest stream), when
its time has come and the line is free, so a late frame never shifts later ones. Trial end
(``pN.gen.mode``): 0 duration (a stream sends frame k only if it is due before
``pN.gen.duration`` cycles), 1 count (the port sends ``pN.gen.count`` frames in all). Rate
phase switch (RFC 2544 26.5, RFC 6201): with ``pN.gen.phase_at`` != 0 (cycles, the clock of
``duration``, below 2**48), a stream whose bit is clear in ``pN.gen.phase2`` sends frame k
only if it is also due before ``phase_at`` (``k * period < phase_at``); a stream whose bit is
set has frame k due at ``phase_at + k * period`` (its first frame exactly at ``phase_at``)
and sends while the trial end allows; ``phase_at`` = 0 turns the switch off (``phase2`` is
then ignored). With
``pN.gen.burst_len`` > 0 due times only order the streams: frames leave back to back in
bursts of ``burst_len``, and a burst starts ``burst_gap`` cycles or more after the previous
burst's last frame has left the generator.
"""

from .regmap import pack_fields, unpack_fields

N_STREAMS = 16
TEMPLATE_BYTES = 128
N_MODIFIERS = 8
SIZE_TABLE = 1024
MAX_FRAME = 9018
#: signature (16) and FCS (4) follow the template.
TRAILER = 20

SIZE_FIXED, SIZE_INCREMENT, SIZE_RANDOM, SIZE_SEQUENCE = 0, 1, 2, 3
MOD_OFF, MOD_INCREMENT, MOD_DECREMENT, MOD_RANDOM = 0, 1, 2, 3
#: bits of ``pN.mod{j}.csum``
CSUM_IPV4, CSUM_UDP = 1, 2

#: (name, bits) of a descriptor, least significant first.
DESC_FIELDS = [
    ("enable", 1),
    ("size_mode", 2),
    ("hdr_len", 7),
    ("stream_id", 16),
    ("size_a", 14),
    ("size_b", 14),
    ("size_step", 14),
    ("size_table_base", 10),
    ("size_table_len", 11),
    ("period", 64),
    ("len1_en", 1), ("len1_off", 7), ("len1_adj", 14),
    ("len2_en", 1), ("len2_off", 7), ("len2_adj", 14),
    ("ipcsum_en", 1), ("ipcsum_off", 7), ("ipcsum_base", 16),
    ("udpcsum_en", 1), ("udpcsum_off", 7), ("udpcsum_base", 16),
]
DESC_BITS = 256
assert sum(bits for _, bits in DESC_FIELDS) <= DESC_BITS

#: (name, bits, doc) of the registers of one modifier unit, ``pN.mod{j}.<name>``.
MOD_FIELDS = [
    ("mode", 2, "0 off, 1 increment, 2 decrement, 3 random"),
    ("stream", 4, "stream whose frames this unit modifies"),
    ("chain", 1, "1: advance only when unit j-1 wraps (nested walks)"),
    ("offset", 7, "first of the 4 frame bytes written (even)"),
    ("mask", 32, "bits of those 4 bytes (big-endian) that the unit writes"),
    ("base", 32, "first value"),
    ("step", 32, "value step (a power of two for random)"),
    ("count", 32, "values before wrapping (random: values drawn from), 1..2**32-1"),
    ("csum", 2, "bit0: the field is in the IPv4 header checksum, bit1: in the UDP checksum"),
]


def pack_descriptor(**fields) -> int:
    """The 256-bit descriptor entry; missing fields are 0. Raises ValueError naming a field
    that does not fit."""
    return pack_fields(DESC_FIELDS, fields, "descriptor")


def unpack_descriptor(value: int) -> dict[str, int]:
    return unpack_fields(DESC_FIELDS, value)


def xorshift32(x: int) -> int:
    """One step of Marsaglia's xorshift32 (13, 17, 5); never 0 from a non-zero state."""
    x ^= (x << 13) & 0xFFFFFFFF
    x ^= x >> 17
    x ^= (x << 5) & 0xFFFFFFFF
    return x


def seed_for(seed: int, unit: int) -> int:
    """Starting state of generator ``unit`` (modifier j, or N_MODIFIERS for frame sizes) of a
    port whose ``pN.gen.seed`` is ``seed``: never 0."""
    x = (seed ^ ((unit + 1) * 0x9E3779B9)) & 0xFFFFFFFF
    return x or 0x6D2B79F5


def draw(state: int, span: int) -> tuple[int, int]:
    """Uniform integer in ``[0, span)`` by rejection: step the generator, keep the low
    ``span.bit_length()`` bits of ``span - 1``... until below ``span``. Returns ``(value,
    new_state)``; ``span`` is 1..2**32-1 (1 always gives 0 and does not step)."""
    if span <= 1:
        return 0, state
    mask = (1 << (span - 1).bit_length()) - 1
    while True:
        state = xorshift32(state)
        if state & mask < span:
            return state & mask, state
