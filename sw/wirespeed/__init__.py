"""wirespeed: FPGA gigabit Ethernet RFC 2544 tester, host software.

The library in five lines (docs/api.md)::

    import wirespeed
    with wirespeed.connect("sim", dut="router:rate=400k,queue=256,latency=20us") as tester:
        run = wirespeed.Run(wirespeed.Plan(tests=["throughput"], sizes=[64, 1518]), tester, out="results")
        record = run.execute()
    print(record.results_of("throughput")[0].throughput_fps)
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# The entry points, imported on first use: the package's modules import __version__ from here.
_API = {"connect": ("wirespeed.host.tester", "connect"), "Tester": ("wirespeed.host.tester", "Tester"),
        "Plan": ("wirespeed.rfc2544.plan", "Plan"), "Run": ("wirespeed.run", "Run"),
        "StopToken": ("wirespeed.rfc2544.context", "StopToken"), "events": ("wirespeed.rfc2544.events", None),
        "load_record": ("wirespeed.results.resume", "load_record")}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'wirespeed' has no attribute {name!r}")
    import importlib

    module, attr = _API[name]
    value = importlib.import_module(module)
    return value if attr is None else getattr(value, attr)
