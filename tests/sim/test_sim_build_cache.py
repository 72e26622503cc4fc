"""The simulation cache verifies its entries and rebuilds a broken one, saying so in one line;
a build tells its progress in stages and heartbeats, as plain lines when stderr is not a
terminal. The Verilator build itself is replaced by a stand-in that writes a small script as
the binary (the real build is proven by every system test)."""

import io
import time
from pathlib import Path

import pytest
from rich.console import Console

from wirespeed.progress import build_progress
from wirespeed.sim import build


@pytest.fixture
def fake_build(tmp_path, monkeypatch):
    """Builds that take a moment and make a script that answers --help; counts them."""
    monkeypatch.setenv("WIRESPEED_CACHE", str(tmp_path / "cache"))
    builds = []

    def build_harness(verilog, out_dir, quiet=True, *, top=build.TOP_MODULE, cpp=None, stages=None, train=None):
        builds.append(out_dir)
        compiled = 0
        for line in ("%Warning-UNUSED: x.v:1:1: Signal is not used", "make: Entering directory 'obj_dir'",
                     "c++ -O2 -I. -MMD -c -o a.o a.cpp", "c++ -O2 -I. -MMD -c -o b.o b.cpp",
                     "c++    a.o b.o -pthread -o wirespeed-sim"):
            stage, compiled = build._stage_of(line, compiled)
            if stages is not None and stage is not None:
                stages.set(stage)
        time.sleep(0.3)
        binary = Path(out_dir) / build.BINARY_NAME
        binary.write_text("#!/bin/sh\necho usage\nexit 0\n")
        binary.chmod(0o755)
        return binary

    def write_sources(folder):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "top.v").write_text("module wirespeed_sim_top(); endmodule\n")
        return [folder / "top.v"]

    monkeypatch.setattr(build, "build_harness", build_harness)
    return builds, write_sources


def test_a_corrupted_entry_is_rebuilt_with_one_line(fake_build, capsys):
    builds, write_sources = fake_build
    binary = build.ensure_binary("k1", write_sources)
    assert len(builds) == 1 and (binary.parent / build.MANIFEST_NAME).is_file()
    assert build.ensure_binary("k1", write_sources) == binary and len(builds) == 1     # a good entry: used
    binary.write_bytes(b"\x7fELF garbage cut short")            # a damaged entry
    notes = []
    assert build.ensure_binary("k1", write_sources, progress=lambda t, note=False: notes.append((t, note))) == binary
    assert len(builds) == 2 and binary.read_text().startswith("#!/bin/sh")
    broken = [t for t, note in notes if note]
    assert len(broken) == 1 and "is broken (its binary changed since it was built" in broken[0]
    assert "rebuilding it" in broken[0] and str(binary.parent) in broken[0]
    # without a progress callable the note goes to stderr, one line
    binary.unlink()
    build.ensure_binary("k1", write_sources)
    err = capsys.readouterr().err.splitlines()
    assert len(builds) == 3 and len(err) == 1 and err[0].startswith("wirespeed: the cached simulation")
    assert "no wirespeed-sim in it" in err[0]


def test_an_entry_without_manifest_gets_a_test_start(fake_build):
    builds, write_sources = fake_build
    binary = build.ensure_binary("k2", write_sources)
    (binary.parent / build.MANIFEST_NAME).unlink()          # an entry from before manifests
    assert build.ensure_binary("k2", write_sources) == binary and len(builds) == 1
    assert (binary.parent / build.MANIFEST_NAME).is_file()  # it started: adopted
    (binary.parent / build.MANIFEST_NAME).unlink()
    binary.write_bytes(b"not a program")                    # one that cannot start
    binary.chmod(0o755)
    notes = []
    build.ensure_binary("k2", write_sources, progress=lambda t, note=False: notes.append((t, note)))
    assert len(builds) == 2 and any(note and "it does not start" in t for t, note in notes)


def test_build_progress_stages_and_heartbeat(fake_build, monkeypatch):
    builds, write_sources = fake_build
    monkeypatch.setattr(build, "HEARTBEAT_S", 0.1)
    lines = []
    build.ensure_binary("k3", write_sources, progress=lambda t, note=False: lines.append(t))
    assert lines[0].startswith("building the simulation k3") and lines[1] == "generating Verilog from the gateware"
    assert "compiling C++ (1 files so far)" in lines and "linking" in lines
    assert any(t.startswith("still building (linking)") for t in lines)
    assert lines[-1].startswith("built in 0m0")


def test_progress_is_plain_lines_without_a_terminal_and_spinner_text_on_one():
    plain = io.StringIO()
    progress = build_progress(Console(file=plain, force_terminal=False, width=200))
    progress("generating Verilog from the gateware")
    progress("the cached simulation /x is broken (...): rebuilding it", note=True)
    assert plain.getvalue().splitlines() == ["wirespeed: generating Verilog from the gateware",
                                             "wirespeed: note: the cached simulation /x is broken (...): rebuilding it"]

    class Status:
        text = ""

        def update(self, text):
            self.text = text

    status, tty = Status(), io.StringIO()
    progress = build_progress(Console(file=tty, force_terminal=True, width=200), status, "starting")
    progress("linking")
    assert status.text == "starting: linking" and tty.getvalue() == ""


def test_stages_from_a_real_verilator_log():
    log = ["%Warning-WIDTH: ...", "make: Entering directory '/x/obj_dir'",
           "c++  -I.  -MMD -I/v/include -DVERILATOR=1 -c -o etherbone.o /h/etherbone.cpp",
           "ccache g++ -O2 -I. -c -o Vtop__ALL.o Vtop__ALL.cpp",
           "c++    dut.o main.o verilated.o Vtop__ALL.a    -pthread -lpthread -latomic   -o wirespeed-sim",
           "- V e r i l a t i o n   R e p o r t: rev 5"]
    compiled, stages = 0, []
    for line in log:
        stage, compiled = build._stage_of(line, compiled)
        if stage:
            stages.append(stage)
    assert stages == ["compiling C++ (1 files so far)", "compiling C++ (2 files so far)", "linking"]
    # a profile-guided build names its pass
    assert build._stage_of(log[3], 0, ", with the profile") == ("compiling C++, with the profile (1 files so far)", 1)
