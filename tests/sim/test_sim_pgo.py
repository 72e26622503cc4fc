"""The simulation's model is compiled with the profile of its training run (wirespeed.sim.pgo):
the fast model files twice, instrumented and then with the profile, between them the
instrumented binary run to its cycle limit; nothing else compiled with profile flags, and no
profile left in the cache."""

import re

import pytest

from wirespeed.sim import pgo
from wirespeed.sim.build import LOG_NAME, ensure_harness

pytestmark = pytest.mark.verilator


def test_the_model_is_compiled_with_its_training_runs_profile():
    entry = ensure_harness().parent
    log = (entry / LOG_NAME).read_text()
    run = " ".join(pgo.training_run())
    start = log.index(f"/wirespeed-sim {run}\n")
    assert re.search(r"^WIRESPEED-SIM EXIT reason=max-cycles cycles=\d+", log[start:], re.M), log[start:start + 2000]
    before, after = log[:start], log[start:]
    compiled = re.compile(r"^(?:ccache\s+)?\S*(?:g\+\+|c\+\+)\s.*\s-c\s.*?(\S+\.cpp)$", re.M)
    generate = {m.group(1) for m in compiled.finditer(before) if "-fprofile-generate" in m.group(0)}
    use = {m.group(1) for m in compiled.finditer(after) if "-fprofile-use" in m.group(0)}
    assert generate and generate == use, (generate, use)
    assert all(re.fullmatch(r"Vwirespeed_sim_top\w*\.cpp", name) and "Slow" not in name for name in use), use
    others = {m.group(1) for m in compiled.finditer(log) if "-fprofile" not in m.group(0)}
    assert not others & use
    assert not (entry / pgo.PROFILE_DIR).exists()
