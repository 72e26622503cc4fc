"""Objects shared between Verilated builds (wirespeed.sim.objcache) and the cached netlist
(wirespeed.sim.verilog_cache): any change of what goes into an object changes its key, a
file that includes something outside the shared folders is never shared, and a netlist is
renamed only where its name occurs once. A small makefile in Verilator's shape stands in for
a Verilated build (the real builds are proven by every system test)."""

import shutil
from pathlib import Path

import pytest

from wirespeed.sim import objcache, verilog_cache

MAKEFILE = """\
include Vt_classes.mk
%.o: %.cpp
\t$(CXX) $(OPT) -c -o $@ $<
"""
CLASSES = """\
VM_GLOBAL_FAST += \\
  runtime \\

VM_GLOBAL_SLOW += \\

"""


@pytest.fixture
def build(tmp_path):
    """A build folder with a makefile, a runtime source, a harness folder with a model-free file
    and one that includes the model; ``make(*args)`` the shared objects of one build."""
    if shutil.which("make") is None or shutil.which("c++") is None:
        pytest.skip("needs make and a C++ compiler")
    harness = tmp_path / "harness"
    harness.mkdir()
    (harness / "free.h").write_text("int free_fn();\n")
    (harness / "free.cpp").write_text('#include "free.h"\nint free_fn() { return 1; }\n')
    (harness / "main.cpp").write_text('#include "free.h"\n#include "Vt.h"\nint main() { return free_fn(); }\n')
    obj = tmp_path / "b" / "obj_dir"
    obj.mkdir(parents=True)
    (obj / "Vt.mk").write_text(MAKEFILE + f"vpath %.cpp {harness}\n")
    (obj / "Vt_classes.mk").write_text(CLASSES)
    (obj / "runtime.cpp").write_text("int runtime_fn() { return 2; }\n")
    store = tmp_path / "store"

    def make(*args):
        return objcache.SharedObjects(obj, "Vt", ["make", "-f", "Vt.mk", "OPT=-O0", *args], {"PATH": "/usr/bin:/bin"},
                                      tmp_path / "b", [harness / "free.cpp", harness / "main.cpp"], [harness], store)

    return make, obj, harness, store


def test_shared_objects_are_the_runtime_and_model_free_files_and_round_trip(build):
    make, obj, harness, store = build
    shared = make()
    assert sorted(shared.keys) == ["free.o", "runtime.o"]       # main.cpp includes the model
    assert shared.seed() == []
    for name in shared.keys:
        (obj / name).write_bytes(b"object " + name.encode())
    shared.keep()
    assert len(list(store.glob("*.o"))) == 2
    for name in shared.keys:
        (obj / name).unlink()
    again = make()
    assert again.keys == shared.keys and sorted(again.seed()) == ["free.o", "runtime.o"]
    assert (obj / "free.o").read_bytes() == b"object free.o"
    again.forget(["free.o"])                    # a build that failed with it: neither copy stays
    assert not (obj / "free.o").exists() and len(list(store.glob("*.o"))) == 1


def test_every_input_of_an_object_is_in_its_key(build):
    make, obj, harness, store = build
    keys = make().keys
    assert make("OPT=-O2").keys["free.o"] != keys["free.o"]                # a flag
    (harness / "free.h").write_text("int free_fn(); // changed\n")
    changed = make().keys
    assert changed["free.o"] != keys["free.o"]                             # a header it may include
    (obj / "runtime.cpp").write_text("int runtime_fn() { return 3; }\n")
    assert make().keys["runtime.o"] != changed["runtime.o"]                # the source


def test_a_netlist_is_renamed_where_its_name_occurs_once(tmp_path, monkeypatch):
    made = []

    def generate(outdir, name, config, rtlil_text=None):
        made.append(name)
        outdir.mkdir(parents=True, exist_ok=True)
        top = outdir / f"{name}.v"
        body = "  // wirespeed_sim_top again\n" if config == "twice" else ""
        top.write_text(f"/* yosys */\nmodule {name}(clk);\n{body}endmodule\n")
        mac = outdir / "mac.v"
        mac.write_text("module mac(); endmodule\n")
        return [top, mac]

    monkeypatch.setattr(verilog_cache, "_generate", generate)
    root = tmp_path / "cache"
    files = verilog_cache.tester_verilog(tmp_path / "a", "wirespeed_sim_top", "once", "k1", root)
    assert [f.name for f in files] == ["wirespeed_sim_top.v", "mac.v"] and made == ["wirespeed_sim_top"]
    files = verilog_cache.tester_verilog(tmp_path / "b", "tester", "once", "k1", root)
    assert made == ["wirespeed_sim_top"]                                    # from the cache
    assert [f.name for f in files] == ["tester.v", "mac.v"]
    assert files[0].read_text() == "/* yosys */\nmodule tester(clk);\nendmodule\n"
    files = verilog_cache.tester_verilog(tmp_path / "c", "tester", "twice", "k2", root)
    assert made == ["wirespeed_sim_top", "wirespeed_sim_top", "tester"]     # generated afresh
    assert Path(files[0]).read_text().startswith("/* yosys */\nmodule tester(clk);")
