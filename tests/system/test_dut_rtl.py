"""A user's Verilog module as the DUT (--dut-rtl): the tester and tests/sim/rtl/pipe_dut.v
(a DELAY-cycle register pipeline each way) built into one simulation, driven by the same host
code. Latency must be the tester's pipeline delay plus exactly DELAY clocks, every frame
forwarded at line rate, both directions."""

import contextlib
from pathlib import Path

import pytest

from wirespeed.ethernet import line_rate_fps
from wirespeed.gateware.port import PIPELINE_NS
from wirespeed.gateware.top import build_register_map
from wirespeed.host.device import Device
from wirespeed.sim.dut_rtl import RtlDutSpec
from wirespeed.sim.launcher import SimProcess
from wirespeed.traffic import Flow, flow_stream
from wirespeed.transport import EtherboneTransport

pytestmark = pytest.mark.slow

RTL = Path(__file__).resolve().parents[1] / "sim" / "rtl"
PIPE = RTL / "pipe_dut.v"
DELAY = 12          # PIPE_DELAY of include/pipe_dut.vh, pipe_dut's default DELAY


def test_user_rtl_dut_forwards_at_line_rate_with_its_own_delay():
    """A design of three files: two sources and a header from an include folder."""
    spec = RtlDutSpec(sources=(RTL / "pipe_line.v", PIPE), include_dirs=(RTL / "include",))
    assert spec.top == "pipe_dut" and spec.describe()["sha256"]
    assert set(spec.describe()["files"]) == {str(RTL / "pipe_line.v"), str(PIPE), str(RTL / "include" / "pipe_dut.vh")}
    with contextlib.ExitStack() as stack:
        sim = stack.enter_context(SimProcess(spec, ready_timeout=60))
        transport = stack.enter_context(contextlib.closing(EtherboneTransport(sim.host, sim.port)))
        dev = Device(transport, build_register_map())
        dev.connect()
        for size in (64, 1518):
            flows = [Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, size)),
                     Flow(tx_port=1, rx_port=0, spec=flow_stream(1, 0, size))]
            r = dev.run_trial(flows, line_rate_fps(size), duration_ns=1_000_000, wait_ns=50_000)
            for port in (0, 1):
                c = r.counters[port]
                assert r.counters[1 - port].tx_frames == c.rx_frames > 0, (size, port)
                assert c.seq_errors == c.fcs_errors == c.other_frames == 0
                assert c.lat_min == c.lat_max == PIPELINE_NS + 8 * DELAY, (size, port, c.lat_min, c.lat_max)
                # frames arrive back to back at line rate: L + 20 bytes apart
                assert c.last_rx_ns - c.first_rx_ns == (c.rx_frames - 1) * (size + 20) * 8


@pytest.mark.parametrize("text,message", [
    ("module x(input clk); endmodule", "lacks the DUT ports"),
    ("// nothing here\n", "declares no Verilog module"),
    ("module wirespeed_tester(); endmodule", "a name the tester uses"),
])
def test_bad_rtl_files_are_refused_before_any_build(tmp_path, text, message):
    f = tmp_path / "dut.v"
    f.write_text(text)
    with pytest.raises(ValueError, match=message):
        RtlDutSpec(path=f)
    with pytest.raises(ValueError, match="no such file"):
        RtlDutSpec(path=tmp_path / "missing.v")
    with pytest.raises(ValueError, match="no module 'nope'"):
        RtlDutSpec(sources=(RTL / "pipe_line.v", PIPE), include_dirs=(RTL / "include",), top="nope")


@pytest.fixture
def design(tmp_path):
    """A copy of the example design to edit."""
    import shutil

    shutil.copytree(RTL, tmp_path / "rtl", ignore=shutil.ignore_patterns("*.f"))
    return tmp_path / "rtl"


def test_the_cache_key_covers_every_included_file(design):
    """The key (and the recorded sha256) follow an included header: a changed header is a new
    simulation, never a stale one. (No build here: the key is all that matters.)"""
    spec = RtlDutSpec(sources=(design / "pipe_line.v", design / "pipe_dut.v"), include_dirs=(design / "include",))
    key, digest = spec.cache_key(), spec.sha256
    header = design / "include" / "pipe_dut.vh"
    assert spec.describe()["files"][str(header)]
    header.write_text(header.read_text().replace("12", "13"))
    again = RtlDutSpec(sources=(design / "pipe_line.v", design / "pipe_dut.v"), include_dirs=(design / "include",))
    assert again.cache_key() != key and again.sha256 != digest
    assert "module pipe_line" in again._text and "13" in again._text


def test_a_verilator_file_list_and_the_sources_own_folder(design, tmp_path):
    """A -f file list (+incdir+, files, comments) gives the same design; an include next to
    the source is found without --dut-rtl-include."""
    flist = tmp_path / "design.f"
    flist.write_text(f"// the example\n+incdir+{design / 'include'}\n{design / 'pipe_line.v'}\n"
                     f"{design / 'pipe_dut.v'}\n")
    by_list = RtlDutSpec(file_lists=(flist,))
    by_args = RtlDutSpec(sources=(design / "pipe_line.v", design / "pipe_dut.v"), include_dirs=(design / "include",))
    assert by_list.top == "pipe_dut" and by_list.sha256 == by_args.sha256
    assert str(flist) in by_list.describe()["files"]
    (design / "include" / "pipe_dut.vh").rename(design / "pipe_dut.vh")
    beside = RtlDutSpec(sources=(design / "pipe_line.v", design / "pipe_dut.v"))
    assert str(design / "pipe_dut.vh") in beside.describe()["files"]


def test_a_missing_include_is_one_line_before_any_build(design):
    with pytest.raises(ValueError, match=r"--dut-rtl: Verilator's preprocessor: .*Cannot find include file: "
                                         r"'pipe_dut.vh'"):
        RtlDutSpec(sources=(design / "pipe_line.v", design / "pipe_dut.v"))
    with pytest.raises(ValueError, match="--dut-rtl-include: no such folder"):
        RtlDutSpec(sources=(design / "pipe_dut.v",), include_dirs=(design / "nowhere",))


def test_the_command_line_takes_several_files_include_folders_and_lists(capsys, design, monkeypatch):
    from wirespeed import cli
    from wirespeed.cli import rfc2544

    monkeypatch.setattr(rfc2544, "claim_folder", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    seen = []
    real = rfc2544.sim_dut_spec
    monkeypatch.setattr(rfc2544, "sim_dut_spec",
                        lambda dut, addresses=None: seen.append(real(dut, addresses)) or seen[-1])
    code = cli.main(["rfc2544", "--dut-rtl", str(design / "pipe_line.v"), "--dut-rtl", str(design / "pipe_dut.v"),
                     "--dut-rtl-include", str(design / "include"), "--out", "unused"])
    assert code == 130 and seen[0].top == "pipe_dut" and len(seen[0].describe()["files"]) == 3
    code = cli.main(["rfc2544", "--dut-rtl", str(design / "pipe_dut.v"), "--out", "unused"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and len(err) == 1 and "Cannot find include file" in err[0]
    assert err[0].startswith("wirespeed: error: --dut-rtl: Verilator's preprocessor:")
