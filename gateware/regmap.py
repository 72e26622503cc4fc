"""The register map as data: the one description that gateware, host driver, simulation
bridge and docs share.

The gateware declares its registers (see :mod:`wirespeed.gateware.registers`); the declaration
is turned into a :class:`RegisterMap`, which is exported as JSON. This module is plain
Python (no Amaranth import) so the host can load a map without the HDL toolchain.

Bus conventions (the CSR bus of the tester):

* 32-bit data words, byte addresses; a register of W bits occupies ceil(W/32) consecutive
  words, least significant word first (little-endian word order).
* Access ``r`` (read only), ``rw`` (read/write storage) or ``w`` (write strobe: writing
  pulses the bits for one clock cycle, reads return 0).
* A register with ``depth`` > 1 is a memory window (``r``, or ``rw`` for tables the host
  writes): ``depth`` entries of ``width`` bits, entry i at ``offset + 4 * words * i``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

__all__ = ["Register", "RegisterMap", "MAGIC", "DATA_WIDTH", "pack_fields", "unpack_fields",
           "CMD_START", "CMD_STOP", "CMD_CLEAR", "CMD_SNAPSHOT"]

#: Value of ``id.magic``: ASCII "WSPD".
MAGIC = 0x57535044
#: Bits of the ``ctrl.cmd`` strobe register.
CMD_START, CMD_STOP, CMD_CLEAR, CMD_SNAPSHOT = 1, 2, 4, 8
DATA_WIDTH = 32
ACCESS = ("r", "rw", "w")


def pack_fields(fields, values, what) -> int:
    """Pack ``values`` (name -> int; missing ones 0) into one integer laid out as ``fields``,
    a list of (name, bits), least significant first. Raises ValueError naming ``what`` and
    the field for an unknown name or a value that does not fit."""
    known = dict(fields)
    for name in values:
        if name not in known:
            raise ValueError(f"{what} has no field {name!r}")
    value, at = 0, 0
    for name, bits in fields:
        v = int(values.get(name, 0))
        if not 0 <= v < (1 << bits):
            raise ValueError(f"{what} field {name}: {v} does not fit in {bits} bits")
        value |= v << at
        at += bits
    return value


def unpack_fields(fields, value: int) -> dict[str, int]:
    """The inverse of :func:`pack_fields`."""
    out, at = {}, 0
    for name, bits in fields:
        out[name] = (value >> at) & ((1 << bits) - 1)
        at += bits
    return out


@dataclass(frozen=True)
class Register:
    name: str
    offset: int  # byte address of the least significant word
    width: int  # bits
    access: str  # "r", "rw" or "w"
    reset: int = 0
    doc: str = ""
    depth: int = 1  # entries; > 1 for a memory window

    def __post_init__(self):
        if self.access not in ACCESS:
            raise ValueError(f"register {self.name}: access must be one of {ACCESS}, not {self.access!r}")
        if not 1 <= self.width <= 1024:
            raise ValueError(f"register {self.name}: width must be 1..1024, not {self.width}")
        if self.offset % 4:
            raise ValueError(f"register {self.name}: offset {self.offset:#x} is not word aligned")
        if self.depth < 1 or (self.depth > 1 and self.access == "w"):
            raise ValueError(f"register {self.name}: a memory window (depth {self.depth}) is r or rw")

    @property
    def words(self) -> int:
        return (self.width + DATA_WIDTH - 1) // DATA_WIDTH

    @property
    def word_offsets(self) -> list[int]:
        """Byte addresses of every word (of every entry, for a memory window)."""
        return [self.offset + 4 * i for i in range(self.words * self.depth)]

    def entries(self, words: list[int]) -> list[int]:
        """The entries of a memory window from all its words (see :attr:`word_offsets`)."""
        n = self.words
        return [self.join(words[i:i + n]) for i in range(0, len(words), n)]

    def split(self, value: int) -> list[int]:
        """A value as the list of 32-bit words to write, least significant first."""
        if not 0 <= value < (1 << self.width):
            raise ValueError(f"{self.name}: value {value} does not fit in {self.width} bits")
        return [(value >> (32 * i)) & 0xFFFFFFFF for i in range(self.words)]

    def join(self, words: list[int]) -> int:
        value = 0
        for i, w in enumerate(words):
            value |= (w & 0xFFFFFFFF) << (32 * i)
        return value & ((1 << self.width) - 1)


@dataclass
class RegisterMap:
    name: str
    version: str
    clk_hz: int
    n_ports: int
    registers: list[Register] = field(default_factory=list)

    def __post_init__(self):
        self._by_name = {}
        used = {}
        for reg in self.registers:
            if reg.name in self._by_name:
                raise ValueError(f"register {reg.name} declared twice")
            self._by_name[reg.name] = reg
            for off in reg.word_offsets:
                if off in used:
                    raise ValueError(f"register {reg.name} overlaps {used[off]} at {off:#x}")
                used[off] = reg.name

    def __getitem__(self, name: str) -> Register:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no register named {name!r} in the wirespeed register map") from None

    def __contains__(self, name: str) -> bool:
        return name in self._by_name

    def __iter__(self):
        return iter(self.registers)

    @property
    def size(self) -> int:
        """Bytes of address space used."""
        return max((r.offset + 4 * r.words * r.depth for r in self.registers), default=0)

    def _content(self) -> dict:
        return {
            "name": self.name,
            "version": self.version,
            "clk_hz": self.clk_hz,
            "n_ports": self.n_ports,
            "data_width": DATA_WIDTH,
            "registers": [{k: v for k, v in asdict(r).items() if k != "depth" or v != 1}
                          for r in self.registers],
        }

    @property
    def hash(self) -> int:
        """32-bit content hash of the map (names, offsets, widths, access, resets); the
        gateware reports it in ``id.map_hash`` so the host can refuse a mismatching bitstream.
        Docs do not count, so rewording a doc string does not break a built bitstream."""
        content = self._content()
        for r in content["registers"]:
            r.pop("doc")
        blob = json.dumps(content, sort_keys=True, separators=(",", ":")).encode()
        return int.from_bytes(hashlib.sha256(blob).digest()[:4], "big")

    def to_json(self) -> str:
        content = self._content()
        content["hash"] = f"{self.hash:#010x}"
        return json.dumps(content, indent=2)

    @classmethod
    def from_json(cls, text: str) -> "RegisterMap":
        try:
            data = json.loads(text)
            regs = [Register(**r) for r in data["registers"]]
            rmap = cls(data["name"], data["version"], data["clk_hz"], data["n_ports"], regs)
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"malformed register map: {exc}") from None
        if "hash" in data and int(data["hash"], 16) != rmap.hash:
            raise ValueError(f"register map hash {data['hash']} does not match its content ({rmap.hash:#010x})")
        return rmap

    def to_markdown(self) -> str:
        lines = [
            f"# Register map ({self.name} {self.version})",
            "",
            f"Generated from the gateware declaration; map hash `{self.hash:#010x}`, "
            f"{self.n_ports} ports, {self.clk_hz / 1e6:g} MHz. 32-bit words, byte addresses, "
            "wide registers least significant word first.",
            "",
            "| offset | name | bits | access | reset | description |",
            "|---|---|---|---|---|---|",
        ]
        for r in self.registers:
            doc = r.doc.replace("|", "\\|")
            bits = f"{r.width} x {r.depth}" if r.depth > 1 else f"{r.width}"
            lines.append(f"| `{r.offset:#06x}` | `{r.name}` | {bits} | {r.access} | {r.reset:#x} | {doc} |")
        return "\n".join(lines) + "\n"
