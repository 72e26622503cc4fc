"""Generate the Verilog of the simulated tester into a build folder (never into git)."""

from pathlib import Path

from amaranth.back import verilog

from .config import SIM
from .liteeth_mac import MAC_MODULE, mac_verilog
from .top import SimTop

__all__ = ["write_sim_sources", "SIM_TOP"]

SIM_TOP = "wirespeed_sim_top"


def write_sim_sources(outdir, name=SIM_TOP, config=SIM) -> list[Path]:
    """Write the tester built with ``config`` (a :class:`~.config.TesterConfig`: the full
    simulated tester, or a board's preset) as Verilog module ``name`` (file ``<name>.v``) and
    the LiteEth MAC into ``outdir``; return the paths."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    top = SimTop(config=config)
    paths = [outdir / f"{name}.v", outdir / f"{MAC_MODULE}.v"]
    paths[0].write_text(verilog.convert(top, name=name, emit_src=False))
    paths[1].write_text(mac_verilog())
    return paths
