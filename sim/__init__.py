"""wirespeed.sim: the Verilator simulation of the tester.

* :mod:`.dut` -- DUT model specifications (``parse_dut("router:rate=400k")``).
* :mod:`.build` -- Verilator build of the C++ harness, cached by content.
* :mod:`.launcher` -- :class:`SimProcess`, running the harness as a subprocess that serves
  the tester's CSR bus over Etherbone/UDP on 127.0.0.1.
"""

from .build import ensure_harness
from .dut import DutSpec, LoopbackSpec, RouterSpec, parse_dut
from .launcher import SimProcess

__all__ = ["DutSpec", "LoopbackSpec", "RouterSpec", "SimProcess", "ensure_harness", "parse_dut"]
