"""A user's own Verilog module as the device under test (``wirespeed rfc2544 --dut-rtl FILE``).

The module sits between the tester's two ports, like the two-port boxes of the seed labs:

    tester port 0 TX -> a_rx   [ your DUT ]   b_tx -> tester port 1 RX
    tester port 0 RX <- a_tx   [          ]   b_rx <- tester port 1 TX

Its ports (docs/dut-rtl.md), GMII style: one byte per clock of ``clk`` (125 MHz, 8 ns),
frames start with 7 bytes 0x55 and the SFD 0xD5 and end with the FCS, ``*_en``/``*_dv`` high
for the whole frame; ``rst`` is synchronous and high for the first cycles::

    module my_dut (
        input clk, input rst,
        input a_rx_dv, input a_rx_er, input [7:0] a_rxd,     // from tester port 0
        output a_tx_en, output a_tx_er, output [7:0] a_txd,  // to tester port 0
        input b_rx_dv, input b_rx_er, input [7:0] b_rxd,     // from tester port 1
        output b_tx_en, output b_tx_er, output [7:0] b_txd   // to tester port 1
    );

The simulation is built (Verilator, cached by the content of the file) from the tester,
renamed ``wirespeed_tester``, the user's file, and a generated top that wires them; the C++
DUT models of the harness then see idle wires. Nothing generated goes into the repository.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import ConfigDict, field_validator

from .build import TOP_MODULE, ensure_binary, harness_key
from .dut import DutSpec

__all__ = ["RtlDutSpec", "RTL_PORTS", "TESTER_MODULE", "find_modules"]

TESTER_MODULE = "wirespeed_tester"
#: the DUT's ports: name -> (direction, width)
RTL_PORTS: dict[str, tuple[str, int]] = {
    "clk": ("input", 1), "rst": ("input", 1),
    "a_rx_dv": ("input", 1), "a_rx_er": ("input", 1), "a_rxd": ("input", 8),
    "a_tx_en": ("output", 1), "a_tx_er": ("output", 1), "a_txd": ("output", 8),
    "b_rx_dv": ("input", 1), "b_rx_er": ("input", 1), "b_rxd": ("input", 8),
    "b_tx_en": ("output", 1), "b_tx_er": ("output", 1), "b_txd": ("output", 8),
}
_MODULE_RE = re.compile(r"^\s*module\s+([A-Za-z_][A-Za-z0-9_$]*)", re.MULTILINE)
_RESERVED = {TOP_MODULE, TESTER_MODULE}


def find_modules(text: str) -> list[str]:
    """Module names declared in Verilog ``text`` (comments stripped)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    text = re.sub(r"//[^\n]*", "", text)
    return _MODULE_RE.findall(text)


class RtlDutSpec(DutSpec):
    """A Verilog module of the user's as the DUT. ``top``: the module (default: the only one
    in the file, or the last one)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: Literal["rtl"] = "rtl"
    path: Path
    top: str | None = None
    PARAMS: ClassVar[dict[str, tuple[str, str, str]]] = {}

    @field_validator("path")
    @classmethod
    def _check_path(cls, v: Path) -> Path:
        v = Path(v).expanduser().resolve()
        if not v.is_file():
            raise ValueError(f"--dut-rtl: no such file {v}")
        return v

    def model_post_init(self, _context) -> None:
        text = self.path.read_text(errors="replace")
        modules = find_modules(text)
        if not modules:
            raise ValueError(f"--dut-rtl: {self.path} declares no Verilog module")
        if self.top is not None and self.top not in modules:
            raise ValueError(f"--dut-rtl-top: no module {self.top!r} in {self.path}, it declares: "
                             f"{', '.join(modules)}")
        clash = _RESERVED & set(modules)
        if clash:
            raise ValueError(f"--dut-rtl: {self.path} declares {sorted(clash)[0]!r}, a name the tester uses")
        top = self.top or modules[-1]
        missing = [p for p in RTL_PORTS if not re.search(rf"\b{p}\b", text)]
        if missing:
            raise ValueError(f"--dut-rtl: module {top} lacks the DUT ports {', '.join(missing)} "
                             "(interface in docs/dut-rtl.md)")
        object.__setattr__(self, "top", top)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()

    def harness_args(self) -> list[str]:
        # the C++ models see idle wires: the DUT is inside the Verilated top
        return ["--dut", "loopback", "--dut-param", "delay_ns=0"]

    def describe(self) -> dict:
        return {"model": "rtl", "spec": str(self), "path": str(self.path), "top": self.top,
                "sha256": self.sha256}

    def __str__(self) -> str:
        return f"rtl:{self.path}:{self.top}"

    def binary(self, quiet: bool = True) -> Path:
        """The simulation with this DUT inside, built once per content of the file."""
        h = hashlib.sha256(f"rtl\0{harness_key()}\0{self.top}\0".encode())
        h.update(self.path.read_bytes())
        return ensure_binary(h.hexdigest()[:32], self.write_sources, quiet=quiet)

    def write_sources(self, outdir: Path) -> list[Path]:
        from wirespeed.gateware.build import write_sim_sources

        outdir = Path(outdir)
        tester = write_sim_sources(outdir, name=TESTER_MODULE)
        wrapper = outdir / f"{TOP_MODULE}.v"
        wrapper.write_text(_wrapper(self.top))
        dut = outdir / "user_dut.v"
        dut.write_bytes(self.path.read_bytes())
        return [wrapper, *tester, dut]


def _wrapper(dut_top: str) -> str:
    """The simulation top: the harness's ports, the tester and the DUT wired port to port."""
    return f"""// generated by wirespeed.sim.dut_rtl: tester ports 0/1 <-> DUT ports a/b
module {TOP_MODULE} (
  input clk, input rst,
  input [15:0] csr_addr, input csr_r_stb, output [31:0] csr_r_data, input csr_w_stb, input [31:0] csr_w_data,
  output p0_gmii_tx_en, output p0_gmii_tx_er, output [7:0] p0_gmii_txd,
  input p0_gmii_rx_dv, input p0_gmii_rx_er, input [7:0] p0_gmii_rxd,
  output p1_gmii_tx_en, output p1_gmii_tx_er, output [7:0] p1_gmii_txd,
  input p1_gmii_rx_dv, input p1_gmii_rx_er, input [7:0] p1_gmii_rxd
);
  wire t0_tx_en, t0_tx_er, t1_tx_en, t1_tx_er, d_a_tx_en, d_a_tx_er, d_b_tx_en, d_b_tx_er;
  wire [7:0] t0_txd, t1_txd, d_a_txd, d_b_txd;
  {TESTER_MODULE} tester (
    .clk(clk), .rst(rst),
    .csr_addr(csr_addr), .csr_r_stb(csr_r_stb), .csr_r_data(csr_r_data),
    .csr_w_stb(csr_w_stb), .csr_w_data(csr_w_data),
    .p0_gmii_tx_en(t0_tx_en), .p0_gmii_tx_er(t0_tx_er), .p0_gmii_txd(t0_txd),
    .p0_gmii_rx_dv(d_a_tx_en), .p0_gmii_rx_er(d_a_tx_er), .p0_gmii_rxd(d_a_txd),
    .p1_gmii_tx_en(t1_tx_en), .p1_gmii_tx_er(t1_tx_er), .p1_gmii_txd(t1_txd),
    .p1_gmii_rx_dv(d_b_tx_en), .p1_gmii_rx_er(d_b_tx_er), .p1_gmii_rxd(d_b_txd)
  );
  {dut_top} dut (
    .clk(clk), .rst(rst),
    .a_rx_dv(t0_tx_en), .a_rx_er(t0_tx_er), .a_rxd(t0_txd),
    .a_tx_en(d_a_tx_en), .a_tx_er(d_a_tx_er), .a_txd(d_a_txd),
    .b_rx_dv(t1_tx_en), .b_rx_er(t1_tx_er), .b_rxd(t1_txd),
    .b_tx_en(d_b_tx_en), .b_tx_er(d_b_tx_er), .b_txd(d_b_txd)
  );
  // the harness's C++ models see idle wires
  assign p0_gmii_tx_en = 1'b0; assign p0_gmii_tx_er = 1'b0; assign p0_gmii_txd = 8'd0;
  assign p1_gmii_tx_en = 1'b0; assign p1_gmii_tx_er = 1'b0; assign p1_gmii_txd = 8'd0;
  wire unused = &{{1'b0, p0_gmii_rx_dv, p0_gmii_rx_er, p0_gmii_rxd, p1_gmii_rx_dv, p1_gmii_rx_er, p1_gmii_rxd}};
endmodule
"""
