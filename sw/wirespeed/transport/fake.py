"""An in-memory register file as a transport, for unit tests of the driver."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .base import WORD_MASK, Transport

if TYPE_CHECKING:
    from wirespeed.gateware.regmap import RegisterMap

__all__ = ["FakeTransport"]


class FakeTransport(Transport):
    """A register file in memory, for unit tests of driver code paths only (it models no
    tester behaviour). It follows the bus conventions of :mod:`wirespeed.gateware.regmap`:
    ``rw`` registers store what is written, ``r`` registers hold what a test puts there with
    :meth:`set`, ``w`` registers read 0 and every write to one is logged in ``strobes`` and
    passed to the ``on_strobe`` callbacks. ``time.ns`` advances by ``ns_per_transaction`` at
    the start of every transaction. Writes to unknown addresses or ``r`` registers are
    ignored and unknown addresses read 0, as on the real bus."""

    url = "fake://"

    def __init__(self, regmap: RegisterMap, ns_per_transaction: int = 1_000) -> None:
        self.regmap = regmap
        self.ns_per_transaction = ns_per_transaction
        self.transactions = 0
        self.strobes: list[tuple[str, int]] = []
        self.on_strobe: list[Callable[[str, int], None]] = []
        self._words: dict[int, int] = {}
        self._where = {off: (reg, i) for reg in regmap for i, off in enumerate(reg.word_offsets)}
        for reg in regmap:
            self.set(reg.name, reg.reset)

    def set(self, name: str, value: int) -> None:
        reg = self.regmap[name]
        self._words.update(zip(reg.word_offsets, reg.split(value)))

    def set_entry(self, name: str, index: int, value: int) -> None:
        """Entry ``index`` of a memory window."""
        reg = self.regmap[name]
        offsets = reg.word_offsets[index * reg.words:(index + 1) * reg.words]
        self._words.update(zip(offsets, reg.split(value)))

    def get(self, name: str) -> int:
        reg = self.regmap[name]
        value: int = reg.join([self._words[off] for off in reg.word_offsets])
        return value

    def get_entry(self, name: str, index: int) -> int:
        """Entry ``index`` of a memory window (0 where never written)."""
        reg = self.regmap[name]
        offsets = reg.word_offsets[index * reg.words:(index + 1) * reg.words]
        value: int = reg.join([self._words.get(off, 0) for off in offsets])
        return value

    def close(self) -> None:
        """Nothing to release: the registers are in memory."""

    def transact(self, writes: Sequence[tuple[int, int]] = (), reads: Sequence[int] = ()) -> list[int]:
        self.transactions += 1
        if "time.ns" in self.regmap:
            self.set("time.ns", self.get("time.ns") + self.ns_per_transaction)
        for addr, word in writes:
            self._write(addr, word & WORD_MASK)
        return [self._read(addr) for addr in reads]

    def _write(self, addr: int, word: int) -> None:
        reg, _ = self._where.get(addr, (None, 0))
        if reg is None or reg.access == "r":
            return
        if reg.access == "w":
            self.strobes.append((reg.name, word))
            for callback in self.on_strobe:
                callback(reg.name, word)
            return
        self._words[addr] = word

    def _read(self, addr: int) -> int:
        reg, _ = self._where.get(addr, (None, 0))
        if reg is None or reg.access == "w":
            return 0
        return self._words.get(addr, 0)
