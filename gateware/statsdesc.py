"""The per-stream receive statistics' table as the host reads it (:mod:`.stream_stats` is the
gateware): the fields of an entry and how to unpack one. Plain Python, no Amaranth, so the
host needs no HDL toolchain to read a tester."""

from __future__ import annotations

from .regmap import unpack_fields

__all__ = ["STATS_FIELDS", "ENTRY_BITS", "ENTRY_WORDS", "READ_WORDS", "LAT_MIN_INIT", "empty_entry", "unpack_entry"]

#: (name, bits) of a table entry as the host reads it, least significant first. Every field
#: lies within one 64-bit word of the block RAM but ``lat_sq_sum``, whose top 32 bits share a
#: word with ``next_seq``.
STATS_FIELDS = [
    ("rx_frames", 64),
    ("rx_bytes", 64),
    ("fcs_errors", 64),
    ("in_order", 64),
    ("lost", 64),
    ("duplicate", 64),
    ("out_of_order", 64),
    ("late", 64),
    ("first_rx_ns", 64),
    ("last_rx_ns", 64),
    ("lat_min", 32),
    ("lat_max", 32),
    ("lat_sum", 64),
    ("lat_sq_sum", 96),
    ("next_seq", 32),
    ("jitter_sum", 64),
    ("last_lat", 32),
]
ENTRY_BITS = sum(bits for _, bits in STATS_FIELDS)
#: 64-bit block RAM words of an entry
ENTRY_WORDS = 16
#: 32-bit words of an entry as the host reads it (``read_addr = entry * READ_WORDS + word``)
READ_WORDS = 2 * ENTRY_WORDS
assert ENTRY_BITS <= 64 * ENTRY_WORDS
LAT_MIN_INIT = (1 << 32) - 1


def empty_entry() -> dict[str, int]:
    """An entry after CLEAR: all zero but ``lat_min``."""
    return {name: LAT_MIN_INIT if name == "lat_min" else 0 for name, _ in STATS_FIELDS}


def unpack_entry(value: int) -> dict[str, int]:
    """The fields of an entry read as one integer (its 32-bit words, least significant first)."""
    return unpack_fields(STATS_FIELDS, value)
