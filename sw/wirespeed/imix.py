"""Mixed frame sizes: RFC 6985 IMIX genomes and weighted mixes, expanded into the repeating
sequence of frame sizes that the generator's size table (:data:`SIZE_TABLE` entries) holds.

RFC 6985 section 4 names frame sizes (bytes, FCS included) with one letter each:

====== ===== ====== ===== ====== ===== ====== ======
letter size  letter size  letter size  letter size
====== ===== ====== ===== ====== ===== ====== ======
a      64    d      512   g      1518  j      16000
b      128   e      1024  h      2112  z      MTU
c      256   f      1280  i      9000
====== ===== ====== ===== ====== ===== ====== ======

A genome such as ``aaaaaaag`` is the exact repeating order of sizes (seven 64-byte frames,
then one 1518-byte frame, again and again). ``z`` stands for the MTU-sized frame of the
test, which the caller gives (``mtu=``; in text, ``aaz,z=1500``). ``j`` (16000) is longer than
the tester's largest frame (9018) and is refused.

A weighted mix ``64:7,576:4,1518:1`` (size:weight, integer weights) becomes a sequence of
``sum(weights) / gcd(weights)`` sizes in which every size appears ``weight / gcd`` times,
spread evenly by smooth weighted round robin: at each position every size earns its weight
in credit, the size with the most credit (the first listed on a tie) is chosen and pays the
total weight. So ``64:7,576:4,1518:1`` gives
``64 576 64 64 576 64 1518 64 576 64 576 64`` rather than seven 64s in a row.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from wirespeed.gateware.frame import MIN_FRAME
from wirespeed.gateware.streamdesc import MAX_FRAME, SIZE_TABLE

__all__ = ["GENOME_SIZES", "parse_genome", "parse_weighted", "parse_mix", "mean_size",
           "genome_of", "SIZE_TABLE"]

#: RFC 6985 section 4: genome letter -> frame size (bytes, FCS included); ``z`` is the MTU.
GENOME_SIZES: dict[str, int | None] = {
    "a": 64, "b": 128, "c": 256, "d": 512, "e": 1024, "f": 1280, "g": 1518,
    "h": 2112, "i": 9000, "j": 16000, "z": None,
}
_LETTERS = "a-j, z"


def _check_size(size: int, what: str) -> int:
    if not MIN_FRAME <= size <= MAX_FRAME:
        raise ValueError(f"{what}: {size} bytes is outside the tester's frame sizes "
                         f"{MIN_FRAME}..{MAX_FRAME} (FCS included)")
    return size


def _check_len(n: int, what: str) -> None:
    if n > SIZE_TABLE:
        raise ValueError(f"{what} expands to {n} frame sizes; the size table holds {SIZE_TABLE}")


def parse_genome(genome: str, *, mtu: int | None = None) -> list[int]:
    """The frame sizes of an RFC 6985 genome (``"aaaaaaag"``), in order. ``mtu`` is the size
    of ``z`` frames. Raises ValueError (one line) for an unknown letter, a missing MTU, a size
    the tester cannot send or a genome longer than the size table."""
    genome = genome.strip()
    if not genome:
        raise ValueError(f"empty IMIX genome: give letters {_LETTERS} (RFC 6985), e.g. aaaaaaag")
    sizes = []
    for pos, letter in enumerate(genome):
        if letter not in GENOME_SIZES:
            raise ValueError(f"IMIX genome {genome!r}: {letter!r} at position {pos} is not a "
                             f"genome letter ({_LETTERS}, RFC 6985)")
        size = GENOME_SIZES[letter]
        if size is None:
            if mtu is None:
                raise ValueError(f"IMIX genome {genome!r}: 'z' is the MTU-sized frame; give its "
                                 f"size (e.g. imix:{genome},z=1518)")
            size = mtu
        sizes.append(_check_size(size, f"IMIX genome {genome!r}, letter {letter!r}"))
    _check_len(len(sizes), f"IMIX genome {genome!r}")
    return sizes


def _interleave(pairs: Sequence[tuple[int, int]]) -> list[int]:
    """Smooth weighted round robin over (size, weight) pairs (see the module doc)."""
    total = sum(w for _, w in pairs)
    credit = [0] * len(pairs)
    out = []
    for _ in range(total):
        for i, (_, w) in enumerate(pairs):
            credit[i] += w
        best = max(range(len(pairs)), key=lambda i: (credit[i], -i))
        credit[best] -= total
        out.append(pairs[best][0])
    return out


def parse_weighted(text: str) -> list[int]:
    """The size sequence of a weighted mix ``"64:7,576:4,1518:1"`` (see the module doc)."""
    pairs: list[tuple[int, int]] = []
    for item in text.split(","):
        parts = item.strip().split(":")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f"weighted mix {text!r}: {item.strip()!r} is not size:weight "
                             "(integers, e.g. 64:7,576:4,1518:1)")
        size, weight = int(parts[0]), int(parts[1])
        _check_size(size, f"weighted mix {text!r}")
        if weight < 1:
            raise ValueError(f"weighted mix {text!r}: the weight of {size} must be >= 1, not {weight}")
        if any(s == size for s, _ in pairs):
            raise ValueError(f"weighted mix {text!r}: size {size} is listed twice")
        pairs.append((size, weight))
    g = math.gcd(*(w for _, w in pairs))
    pairs = [(s, w // g) for s, w in pairs]
    _check_len(sum(w for _, w in pairs), f"weighted mix {text!r}")
    return _interleave(pairs)


def parse_mix(text: str) -> list[int]:
    """A genome (``aaaaaaag``, ``aaz,z=1500``) or a weighted mix (``64:7,576:4,1518:1``)."""
    text = text.strip()
    if ":" in text:
        return parse_weighted(text)
    genome, _, rest = text.partition(",")
    mtu = None
    if rest:
        key, _, value = rest.partition("=")
        if key.strip() != "z" or not value.strip().isdigit():
            raise ValueError(f"IMIX {text!r}: after the genome only z=<MTU size> may follow, "
                             f"not {rest!r}")
        mtu = int(value)
    return parse_genome(genome, mtu=mtu)


def genome_of(sizes: Sequence[int]) -> str | None:
    """The RFC 6985 genome that spells ``sizes``, or None when a size has no letter."""
    letters = {v: k for k, v in GENOME_SIZES.items() if v is not None}
    try:
        return "".join(letters[s] for s in sizes)
    except KeyError:
        return None


def mean_size(sizes: Sequence[int]) -> float:
    """Mean frame size of a sequence (bytes, FCS included)."""
    if not sizes:
        raise ValueError("an empty size sequence has no mean size")
    return sum(sizes) / len(sizes)
