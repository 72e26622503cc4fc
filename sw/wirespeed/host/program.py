"""Loading a compiled port program (:class:`wirespeed.traffic.CompiledPort`) into a tester's
multi-stream generator: templates, size table, seed, modifier units, then descriptors
(last, so a stream is enabled only once everything it uses is in place).

Registers (:mod:`wirespeed.gateware.streamdesc`): ``pN.gen.tmpl`` (8-bit entries, stream s
byte i at entry ``s * 128 + i``), ``pN.gen.desc`` (256-bit entries, one per stream, unused
streams 0 = disabled), ``pN.gen.sizes`` (14-bit entries), ``pN.gen.seed`` and
``pN.mod{j}.{mode,stream,chain,offset,mask,base,step,count,csum}`` (unused units: all 0,
mode off).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wirespeed import regs
from wirespeed.gateware import streamdesc as sd

from ..traffic import CompiledPort

if TYPE_CHECKING:
    from wirespeed.gateware.regmap import RegisterMap

    from .device import Device

__all__ = ["write_port_program", "port_program_writes", "fit_to_build"]


def port_program_writes(port: int, compiled: CompiledPort) -> tuple[dict[str, dict[int, int]], dict[str, int]]:
    """What :func:`write_port_program` writes: ``(memories, registers)``, memory window name ->
    {entry: value} and register name -> value, in writing order."""
    gen = regs.port(port).gen
    memories = {gen.tmpl: compiled.template_entries()}
    if compiled.size_table:
        memories[gen.sizes] = dict(compiled.size_table)
    registers = {gen.seed: compiled.seed}
    for j, unit in enumerate(compiled.modifiers):
        for name, _, _ in sd.MOD_FIELDS:
            registers[getattr(regs.port(port).mod[j], name)] = unit[name]
    memories_last = {gen.desc: dict(enumerate(compiled.descriptors()))}
    return memories | memories_last, registers


def fit_to_build(regmap: RegisterMap, memories: dict[str, dict[int, int]], registers: dict[str, int]
                 ) -> tuple[dict[str, dict[int, int]], dict[str, int]]:
    """The writes of :func:`port_program_writes` that a build with register map ``regmap``
    has: a board's build has fewer streams (shallower ``desc``/``tmpl`` windows) and fewer
    modifier units. What is left out must be unused (a disabled descriptor, an empty template
    byte, a modifier unit that is off); ValueError (one line) when the program needs more than
    the build has."""
    fitted_memories = {}
    for name, entries in memories.items():
        if name not in regmap:
            raise ValueError(f"this gateware has no {name}")
        depth = regmap[name].depth
        beyond = sorted(i for i, v in entries.items() if i >= depth and v)
        if beyond:
            what = "stream" if name.endswith((".desc", ".tmpl")) else "entry"
            index = beyond[0] // (sd.TEMPLATE_BYTES if name.endswith(".tmpl") else 1)
            raise ValueError(f"the program uses {what} {index} of {name}, and this gateware has "
                             f"{depth // (sd.TEMPLATE_BYTES if name.endswith('.tmpl') else 1)}")
        fitted_memories[name] = {i: v for i, v in entries.items() if i < depth}
    fitted_registers = {}
    for name, value in registers.items():
        if name in regmap:
            fitted_registers[name] = value
        elif name.endswith(".mode") and value:
            port, unit, _ = name.split(".")
            units = len({r.name.split(".")[1] for r in regmap if r.name.startswith(f"{port}.mod")})
            raise ValueError(f"the program uses field modifier {port}.{unit}, and this gateware has "
                             f"{units} per port")
    return fitted_memories, fitted_registers


def write_port_program(device: Device, port: int, compiled: CompiledPort) -> None:
    """Write everything of ``compiled`` to port ``port`` of ``device`` (a
    :class:`wirespeed.host.device.Device`): templates, size table, seed and modifier units,
    then the descriptors of all :data:`streamdesc.N_STREAMS` streams (unused ones disabled).
    The generator should be stopped."""
    if hasattr(device, "n_ports") and not 0 <= port < device.n_ports:
        raise ValueError(f"port must be 0..{device.n_ports - 1}, not {port}")
    memories, registers = port_program_writes(port, compiled)
    if hasattr(device, "regmap"):
        memories, registers = fit_to_build(device.regmap, memories, registers)
    desc_name = regs.port(port).gen.desc
    for name, entries in memories.items():
        if name != desc_name:
            device.write_memory(name, entries)
    device.write_many(registers)
    device.write_memory(desc_name, memories[desc_name])
