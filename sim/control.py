"""The simulation's DUT control window: reset the simulated DUT and read its own counters
through the same Etherbone transport as the tester's registers (simulation only; on a lab
bench a reset is the user's hook command).

Layout (byte addresses from :data:`DUT_BASE`, 32-bit words, 64-bit values low word first),
mirrored from sim/harness/dut_window.h:

* ``+0x00`` write: reset the DUT now (both directions; the model needs ``reboot=``); read: 1
  if the last reset command was taken;
* ``+0x08`` the harness's cycle counter (64 bits, 8 ns per cycle);
* ``+0x40 + 0x40*d`` direction d (0: port 0 -> port 1, 1: port 1 -> port 0): frames_in,
  frames_out, dropped, errored, resets, reset_lost, reset_at and up_at (cycles), 64 bits each;
* ``+0xC0 + 0x40*d`` direction d: the impairment stage's lost, duplicated, reordered, corrupted
  and blackout frames, the router's collapses, and what a receiver cannot see of the
  impairments: corrupt_dups (corrupted frames also duplicated) and reorder_hidden (reordered
  frames that arrive in sequence order all the same), 64 bits each (sim/harness/dut_model.h;
  zero for a model without them).
"""

from __future__ import annotations

from pydantic import BaseModel

from wirespeed.gateware.config import NS_PER_CYCLE

__all__ = ["DUT_BASE", "DutControl", "DutDirectionCounters", "DIRECTIONS"]

DUT_BASE = 0x0010_0000
_FIELDS = ("frames_in", "frames_out", "dropped", "errored", "resets", "reset_lost", "reset_at", "up_at")
_IMPAIR_FIELDS = ("lost", "duplicated", "reordered", "corrupted", "blackout", "collapses", "corrupt_dups",
                  "reorder_hidden")
#: direction d of the window by the tester ports it joins
DIRECTIONS = ("0->1", "1->0")
_STAMPS = ("reset_at", "up_at")       # cycles, not counts


class DutDirectionCounters(BaseModel):
    """One direction of the simulated DUT, as the model counted it (cycles of the harness)."""

    frames_in: int
    frames_out: int
    dropped: int
    errored: int
    resets: int
    reset_lost: int
    reset_at: int
    up_at: int
    lost: int = 0
    duplicated: int = 0
    reordered: int = 0
    corrupted: int = 0
    blackout: int = 0
    collapses: int = 0
    corrupt_dups: int = 0
    reorder_hidden: int = 0

    @property
    def down_ns(self) -> int | None:
        """How long the last reset kept the device down, ns (None before any reset)."""
        return (self.up_at - self.reset_at) * NS_PER_CYCLE if self.resets and self.up_at else None


class DutControl:
    """The DUT control window of a simulation reached by ``transport``
    (:class:`wirespeed.transport.Transport`)."""

    def __init__(self, transport):
        self.transport = transport

    def _read64(self, offsets: list[int]) -> list[int]:
        addrs = [DUT_BASE + off + k for off in offsets for k in (0, 4)]
        words = self.transport.transact([], addrs)
        return [words[i] | words[i + 1] << 32 for i in range(0, len(words), 2)]

    def reset(self) -> bool:
        """Reset the DUT now; True if it took the reset (False: the model has no ``reboot``
        parameter, or it is still down from a previous reset)."""
        return bool(self.transport.transact([(DUT_BASE, 1)], [DUT_BASE])[0])

    def cycles(self) -> int:
        return self._read64([0x08])[0]

    def counters(self) -> dict[int, DutDirectionCounters]:
        """Both directions' counters, read in one transaction."""
        offsets = ([0x40 + 0x40 * d + 8 * k for d in (0, 1) for k in range(len(_FIELDS))]
                   + [0xC0 + 0x40 * d + 8 * k for d in (0, 1) for k in range(len(_IMPAIR_FIELDS))])
        values = self._read64(offsets)
        n, m = len(_FIELDS), len(_IMPAIR_FIELDS)
        impair = values[2 * n:]
        return {d: DutDirectionCounters(**dict(zip(_FIELDS, values[d * n:(d + 1) * n])),
                                        **dict(zip(_IMPAIR_FIELDS, impair[d * m:(d + 1) * m]))) for d in (0, 1)}

    def counts(self) -> dict[str, dict[str, int]]:
        """The model's frame counts (no cycle stamps) by direction (:data:`DIRECTIONS`), JSON
        ready: what a trial records of the simulated DUT."""
        return {DIRECTIONS[d]: c.model_dump(exclude=set(_STAMPS)) for d, c in self.counters().items()}
