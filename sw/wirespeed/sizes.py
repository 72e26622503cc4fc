"""Size points of the RFC 2544 tests: what one row of Throughput.csv (and of every other table)
is measured at.

A size point is either a fixed frame size, an ``int`` (bytes from destination MAC to FCS
inclusive), or a mix of sizes written as its label, a ``str`` starting ``imix:``: an RFC 6985
genome (``imix:aaaaaaag``, ``imix:aaz,z=1500``) or a weighted mix (``imix:64:7,576:4,1518:1``),
expanded by :mod:`wirespeed.imix` into the repeating size sequence the generator sends.

A mix is measured like a size: its line rate is ``1e9 / 8 / (mean(L) + 20)`` frames/s (RFC
6985 section 4: the frame sizes share the link, each with its 20 bytes of preamble and gap),
rates and percentages of line rate refer to it, and its throughput in Mb/s counts the mean
frame. The label is what the tables print in their ``frame_size_B`` column.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import TypeGuard

from wirespeed.gateware.frame import MIN_FRAME

# the largest frame the tests send is the generator's (and analyzer's) own limit: jumbo frames
# of up to 9018 bytes, which every build handles
from wirespeed.gateware.streamdesc import MAX_FRAME

from . import imix

__all__ = ["SizePoint", "IMIX_PREFIX", "parse_point", "parse_list", "split_list", "sizes_of", "mean_len",
           "is_mix", "text", "sort_key", "smallest", "distinct_sizes",
           "LIST_SYNTAX"]

SizePoint = int | str
IMIX_PREFIX = "imix:"
LIST_SYNTAX = (f"comma-separated frame sizes {MIN_FRAME}..{MAX_FRAME} bytes and IMIX mixes "
               "(imix:GENOME, imix:GENOME,z=MTU or imix:SIZE:WEIGHT,...), each once, e.g. 64,128,1518,imix:aaaaaaag")


@lru_cache(maxsize=256)
def _expand(label: str) -> tuple[int, ...]:
    return tuple(imix.parse_mix(label[len(IMIX_PREFIX):]))


def parse_point(value: SizePoint) -> SizePoint:
    """The size point ``value`` stands for: an int (a fixed size, also from text like ``"64"``)
    or the label of a mix, ``imix:`` in lower case followed by the mix as written. Raises
    ValueError (one line) for anything else."""
    if isinstance(value, bool):
        raise ValueError(f"a frame size is a number of bytes or imix:..., not {value!r}")
    if isinstance(value, int):
        size = value
    else:
        raw = str(value).strip()
        if raw.lower().startswith(IMIX_PREFIX):
            label = IMIX_PREFIX + raw[len(IMIX_PREFIX):].strip()
            try:
                expanded = _expand(label)
            except ValueError as exc:
                raise ValueError(f"frame size {raw!r}: {exc}") from None
            # the tests' frame sizes, mixed or not, are the tester's standard Ethernet frames
            big = [size for size in expanded if not MIN_FRAME <= size <= MAX_FRAME]
            if big:
                raise ValueError(f"frame size {raw!r}: its {big[0]}-byte frames are outside the {MIN_FRAME}.."
                                 f"{MAX_FRAME} bytes (FCS included) the tests send")
            return label
        try:
            size = int(raw)
        except ValueError:
            raise ValueError(f"frame size {raw!r}: give bytes {MIN_FRAME}..{MAX_FRAME} or imix:GENOME "
                             "(RFC 6985, e.g. imix:aaaaaaag) or imix:SIZE:WEIGHT,...") from None
    if not MIN_FRAME <= size <= MAX_FRAME:
        raise ValueError(f"frame size {size}: the tester sends {MIN_FRAME}..{MAX_FRAME} bytes (FCS included)")
    return size


def split_list(text: str) -> list[str]:
    """Split a comma-separated list of size points. A mix may itself hold commas
    (``imix:aaz,z=1500``, ``imix:64:7,576:4``): an item with ``:`` or ``=`` that does not start
    a new ``imix:`` belongs to the mix before it."""
    items: list[str] = []
    for part in str(text).split(","):
        piece = part.strip()
        continues = (items and items[-1].lower().startswith(IMIX_PREFIX)
                     and not piece.lower().startswith(IMIX_PREFIX) and (":" in piece or "=" in piece))
        if continues:
            items[-1] += "," + piece
        else:
            items.append(piece)
    return items


def parse_list(text_or_items) -> list[SizePoint]:
    """The size points of a list (text as :func:`split_list` reads it, or a sequence of ints and
    labels), each once. Raises ValueError (one line)."""
    items = split_list(text_or_items) if isinstance(text_or_items, str) else list(text_or_items)
    if not items:
        raise ValueError("no frame size given")
    points = [parse_point(item) for item in items]
    seen: dict[tuple[int | str, ...], SizePoint] = {}
    for point in points:
        seq = sizes_of(point)       # a mix repeats: rotations of its sequence are the same traffic
        key = (point,) if isinstance(point, int) else ("mix",) + min(seq[i:] + seq[:i] for i in range(len(seq)))
        if key in seen:
            raise ValueError(f"frame size {point!r} is given twice" + ("" if seen[key] == point
                                                                       else f" (as {seen[key]!r})"))
        seen[key] = point
    return points


def is_mix(point: SizePoint) -> TypeGuard[str]:
    return isinstance(point, str)


def sizes_of(point: SizePoint) -> tuple[int, ...]:
    """The repeating sequence of frame sizes the point sends: ``(L,)`` for a fixed size."""
    return _expand(point) if isinstance(point, str) else (int(point),)


def mean_len(point: SizePoint) -> Fraction:
    """Mean frame size of the point, exact (bytes, FCS included)."""
    sizes = sizes_of(point)
    return Fraction(sum(sizes), len(sizes))


def text(point: SizePoint) -> str:
    """``"64 B"`` or the mix's label, for messages and progress lines."""
    return point if isinstance(point, str) else f"{point} B"


def sort_key(point: SizePoint) -> tuple[float, str]:
    """Orders points by mean frame size, fixed sizes before a mix of the same mean."""
    return (float(mean_len(point)), "" if isinstance(point, int) else point)


def smallest(points) -> SizePoint:
    """The point with the smallest mean frame size."""
    return min(points, key=sort_key)


def distinct_sizes(points) -> list[int]:
    """Every frame size the points send, once each, in ascending order (calibration needs them)."""
    return sorted({size for point in points for size in sizes_of(point)})
