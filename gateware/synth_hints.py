"""What synthesis should know about the design that Amaranth cannot say: yosys commands the
board build (and the benchmarks) run right after reading the design, :data:`YOSYS_AFTER_READ`.

* Register replicas (:mod:`.replica`): copies of a register that yosys must not merge.
* Memories whose read ports never read a word on the clock a write port writes it
  (:func:`no_collision_name`: the memory's own name, or the name of a submodule all of
  whose memories are such, e.g. Amaranth's ``SyncFIFOBuffered``: it reads a word only once
  the word is in, and writes none while full). Amaranth's read ports either see the write
  (transparent) or the old word; an ECP5 block RAM guarantees neither between its two
  ports, so yosys adds logic (a LUT) behind the block RAM's data out for either, where its
  5.8 ns clock-to-out leaves no room at 125 MHz. Told that such a collision reads undefined
  data (``COLLISION_X_MASK``), it adds nothing. The design must keep its promise: simulation
  still reads the old word, a board would read garbage.
"""

from .replica import YOSYS_KEEP_REPLICAS

__all__ = ["NO_COLLISION_PREFIX", "no_collision_name", "YOSYS_NO_COLLISION", "YOSYS_AFTER_READ"]

#: the submodule name of a memory that never reads a word on the clock it is written starts so
NO_COLLISION_PREFIX = "nocollide_"
#: yosys: collisions of those memories' (non-transparent, one write port) read ports read
#: undefined data. The second command covers the memories of modules so named (and below).
YOSYS_NO_COLLISION = (f"setparam -set COLLISION_X_MASK 1'1 t:$memrd_v2 r:MEMID=\\{NO_COLLISION_PREFIX}* %i; "
                      f"setparam -set COLLISION_X_MASK 1'1 *.{NO_COLLISION_PREFIX}*/t:$memrd_v2")
#: every command, in order, for ``script_after_read``
YOSYS_AFTER_READ = f"{YOSYS_KEEP_REPLICAS}; {YOSYS_NO_COLLISION}"


def no_collision_name(name: str) -> str:
    """The submodule name for memory ``name`` whose ports never collide (one write port, read
    ports not transparent), or for a submodule all of whose memories are such."""
    return NO_COLLISION_PREFIX + name
