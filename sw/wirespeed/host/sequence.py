"""Frame loss from the analyzers' sequence tracking (docs/analyzer.md, "Sequence definitions").

A trial's loss is counted per stream from its sent frames and the receiving port's stream
entry (``pN.ana.streams``), never as frames sent - frames received: a DUT that duplicates
frames would otherwise hide as many lost ones (and show negative loss).

* **lost** = sent - unique arrivals (in sequence, reordered or late): the sequence numbers
  below the stream's next expected one never received (``lost``), plus the tail sent after
  the last number received (``tx_frames - next_seq``), less the late frames (older than the
  history window, so counted as lost by the gateware although they arrived); never negative.
  A late frame is taken as a delayed one: a duplicate that late would count as an arrival.
* **duplicate**, **out_of_order**, **late**: the gateware's counts (RFC 4689 3.3 terms), shown
  beside the loss; each fails a zero-loss trial.

A frame with a bad FCS never arrived intact: its sequence number stays lost, and it counts in
``fcs_errors`` too.

A build without per-stream statistics (``Device.counts_sequence_errors`` false, a board
preset) has only the port counters: loss is then sent - received, at least 0; more frames
received than sent (duplicates it cannot tell apart) fails the trial.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["SEQ_MOD", "STREAM_FIELDS", "tracked", "tail_loss", "stream_lost", "lost_frames", "count",
           "failure_reasons"]

SEQ_MOD = 1 << 32
_U64 = 1 << 64
#: what a trial keeps of each stream (``TrialResult.streams``) for its loss
STREAM_FIELDS = ("tx_frames", "rx_frames", "in_order", "lost", "duplicate", "out_of_order", "late", "fcs_errors",
                 "next_seq")


def tracked(stream: Mapping[str, int]) -> bool:
    """Whether ``stream`` holds the sequence counters :func:`stream_lost` needs."""
    return all(k in stream for k in ("tx_frames", "rx_frames", "lost", "late", "next_seq", "duplicate"))


def tail_loss(tx_frames: int, entry: Mapping[str, int]) -> int:
    """Frames sent after the last sequence number received: ``tx_frames - next_seq`` when
    positive. ``next_seq`` is 32 bits: it is taken as the number closest below or at
    ``tx_frames`` with the same low 32 bits (serial number arithmetic, RFC 1982)."""
    if not (entry["rx_frames"] or entry["next_seq"]):
        return tx_frames      # nothing received since CLEAR: every frame sent is lost
    ahead = (tx_frames - entry["next_seq"]) % SEQ_MOD
    return ahead if ahead < SEQ_MOD // 2 else 0


def _signed64(value: int) -> int:
    # the gateware's lost counter goes down for each reordered frame: read as two's complement
    return value - _U64 if value >= _U64 // 2 else value


def stream_lost(stream: Mapping[str, int]) -> int:
    """Frames of one stream that never arrived (the module doc), at least 0."""
    lost = _signed64(stream["lost"]) + tail_loss(stream["tx_frames"], stream) - stream["late"]
    return max(0, lost)


def lost_frames(streams: Iterable[Mapping[str, int]]) -> int:
    return sum(stream_lost(s) for s in streams)


def count(streams: Iterable[Mapping[str, int]], field: str) -> int:
    return sum(s[field] for s in streams)


def failure_reasons(*, tx_frames: int, rx_frames: int, lost: int, fcs_errors: int, seq_errors: int,
                    duplicate: int | None, out_of_order: int | None, late: int | None) -> list[str]:
    """Why a trial is not loss free, in words (empty: it is). ``duplicate``, ``out_of_order``
    and ``late`` are None for a build without sequence tracking."""
    if tx_frames <= 0:
        return ["no frame sent"]
    reasons = []
    if lost:
        reasons.append(f"{lost} lost")
    for n, what in ((duplicate, "duplicated"), (out_of_order, "out of order"), (late, "late")):
        if n:
            reasons.append(f"{n} {what}")
    if fcs_errors:
        reasons.append(f"{fcs_errors} FCS error{'s' if fcs_errors != 1 else ''}")
    # more (unique) frames than were sent: strays, or (untracked) duplicates
    excess = rx_frames - (duplicate or 0) - tx_frames
    if excess > 0:
        reasons.append(f"{excess} more received than sent" + (" (duplicates?)" if duplicate is None else ""))
    if seq_errors and not reasons:
        reasons.append(f"{seq_errors} sequence error{'s' if seq_errors != 1 else ''}")
    return reasons
