"""A user's own Verilog design as the device under test (``wirespeed rfc2544 --dut-rtl FILE``).

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

A design is any number of source files, include directories and Verilator file lists
(``-f``: files, ``+incdir+``/``-I``, ``+define+``, comments; relative paths from the folder the
run started in, as Verilator reads them). It is run through Verilator's preprocessor once
(``verilator -E``: includes resolved from the include directories, then each source's own
folder), which gives the exact text built and every file it came from: the simulation is
built from that text (a copy, so an edit during the build cannot mix versions) with the
tester, renamed ``wirespeed_tester``, and a generated top that wires them, and cached by its
SHA-256, which covers every included file. The C++ DUT models of the harness then see idle
wires. Nothing generated goes into the repository.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import ConfigDict, PrivateAttr, field_validator, model_validator

from . import pgo
from .build import TOP_MODULE, ensure_binary, harness_key
from .dut import DutSpec
from .toolchain import verilator_bin_dir, verilator_env
from .verilog_cache import write_tester_verilog

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
_LINE_RE = re.compile(r'^`line\s+\d+\s+"([^"]+)"\s+\d+\s*$', re.MULTILINE)
_RESERVED = {TOP_MODULE, TESTER_MODULE}
_PREPROCESS_TIMEOUT_S = 120


def find_modules(text: str) -> list[str]:
    """Module names declared in Verilog ``text`` (comments stripped)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    text = re.sub(r"//[^\n]*", "", text)
    return _MODULE_RE.findall(text)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class RtlDutSpec(DutSpec):
    """A Verilog design of the user's as the DUT: ``sources`` (``path``: one source, as a
    shorthand), ``include_dirs``, ``file_lists`` (Verilator ``-f``) read from ``cwd``;
    ``top``: the module (default: the last one declared). Refused with one line (ValueError
    starting with the option at fault) when a file is missing, Verilator's preprocessor
    fails, or the module lacks the DUT ports."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: Literal["rtl"] = "rtl"
    sources: tuple[Path, ...] = ()
    include_dirs: tuple[Path, ...] = ()
    file_lists: tuple[Path, ...] = ()
    top: str | None = None
    cwd: Path | None = None
    PARAMS: ClassVar[dict[str, tuple[str, str, str]]] = {}
    _text: str = PrivateAttr("")
    _inputs: dict[str, str] = PrivateAttr(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _path_shorthand(cls, data):
        if isinstance(data, dict) and "path" in data:
            data = dict(data)
            path = data.pop("path")
            data["sources"] = (path, *data.get("sources", ()))
        return data

    @field_validator("sources", "file_lists")
    @classmethod
    def _files(cls, values: tuple[Path, ...], info) -> tuple[Path, ...]:
        option = "--dut-rtl" if info.field_name == "sources" else "--dut-rtl-filelist"
        out = []
        for v in values:
            v = Path(v).expanduser().resolve()
            if not v.is_file():
                raise ValueError(f"{option}: no such file {v}")
            out.append(v)
        return tuple(out)

    @field_validator("include_dirs")
    @classmethod
    def _dirs(cls, values: tuple[Path, ...]) -> tuple[Path, ...]:
        out = []
        for v in values:
            v = Path(v).expanduser().resolve()
            if not v.is_dir():
                raise ValueError(f"--dut-rtl-include: no such folder {v}")
            out.append(v)
        return tuple(out)

    @property
    def path(self) -> Path:
        """The first source (the design's main file)."""
        return self.sources[0] if self.sources else self.file_lists[0]

    def model_post_init(self, _context) -> None:
        if not self.sources and not self.file_lists:
            raise ValueError("--dut-rtl: give at least one Verilog file (or --dut-rtl-filelist)")
        if self.cwd is None:
            object.__setattr__(self, "cwd", Path.cwd())
        text = self._preprocess()
        modules = find_modules(text)
        where = ", ".join(str(p) for p in (*self.sources, *self.file_lists))
        if not modules:
            raise ValueError(f"--dut-rtl: {where} declares no Verilog module")
        if self.top is not None and self.top not in modules:
            raise ValueError(f"--dut-rtl-top: no module {self.top!r} in {where}, it declares: {', '.join(modules)}")
        clash = _RESERVED & set(modules)
        if clash:
            raise ValueError(f"--dut-rtl: {where} declares {sorted(clash)[0]!r}, a name the tester uses")
        top = self.top or modules[-1]
        missing = [p for p in RTL_PORTS if not re.search(rf"\b{p}\b", text)]
        if missing:
            raise ValueError(f"--dut-rtl: module {top} lacks the DUT ports {', '.join(missing)} "
                             "(interface in docs/dut-rtl.md)")
        object.__setattr__(self, "top", top)

    def verilator_args(self) -> list[str]:
        """The include directories (given ones first, then each source's folder), file lists
        and sources, as Verilator takes them."""
        dirs = list(dict.fromkeys([*self.include_dirs, *(p.parent for p in self.sources)]))
        return ([f"-I{d}" for d in dirs] + [a for fl in self.file_lists for a in ("-f", str(fl))]
                + [str(p) for p in self.sources])

    def _preprocess(self) -> str:
        """Run ``verilator -E`` over the design: the text built, and every input file with
        its SHA-256 (from the ``line directives)."""
        cmd = [str(verilator_bin_dir() / "verilator"), "-E", *self.verilator_args()]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=verilator_env(),
                                  cwd=self.cwd, timeout=_PREPROCESS_TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ValueError(f"--dut-rtl: cannot run Verilator's preprocessor: {exc}") from None
        if done.returncode != 0:
            errors = [line for line in done.stderr.splitlines() if line.startswith("%Error")]
            first = errors[0] if errors else (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[0]
            raise ValueError(f"--dut-rtl: Verilator's preprocessor: {first.removeprefix('%Error: ')}")
        inputs = {}
        for name in dict.fromkeys(_LINE_RE.findall(done.stdout)):
            path = Path(name) if Path(name).is_absolute() else Path(self.cwd) / name
            try:
                inputs[str(path.resolve())] = _sha256(path.read_bytes())
            except OSError:
                pass        # "<command-line>" and the like
        for fl in self.file_lists:
            inputs[str(fl)] = _sha256(fl.read_bytes())
        object.__setattr__(self, "_text", done.stdout)
        object.__setattr__(self, "_inputs", inputs)
        return done.stdout

    @property
    def sha256(self) -> str:
        """Of the preprocessed design: every file it includes, as built."""
        return _sha256(self._text.encode())

    def harness_args(self) -> list[str]:
        # the C++ models see idle wires: the DUT is inside the Verilated top
        return ["--dut", "loopback", "--dut-param", "delay_ns=0"]

    def describe(self) -> dict:
        return {"model": "rtl", "spec": str(self), "path": str(self.path), "top": self.top, "sha256": self.sha256,
                "sources": [str(p) for p in self.sources], "include_dirs": [str(p) for p in self.include_dirs],
                "file_lists": [str(p) for p in self.file_lists], "cwd": str(self.cwd), "files": dict(self._inputs)}

    def __str__(self) -> str:
        return f"rtl:{self.path}:{self.top}"

    def cache_key(self) -> str:
        """The simulation's cache key: the tester's, the top and the preprocessed design."""
        h = hashlib.sha256(f"rtl\0{harness_key()}\0{self.top}\0".encode())
        h.update(self._text.encode())
        return h.hexdigest()[:32]

    def binary(self, quiet: bool = True, progress=None) -> Path:
        """The simulation with this DUT inside, built once per preprocessed design."""
        return ensure_binary(self.cache_key(), self.write_sources, quiet=quiet, progress=progress,
                             train=pgo.training_run(self.harness_args()))

    def write_sources(self, outdir: Path) -> list[Path]:
        outdir = Path(outdir)
        tester = write_tester_verilog(outdir, TESTER_MODULE)
        wrapper = outdir / f"{TOP_MODULE}.v"
        wrapper.write_text(_wrapper(self.top))
        dut = outdir / "user_dut.v"         # the preprocessed design: no include left to find
        dut.write_text(self._text)
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
