"""The docs that are generated from code are current."""

from pathlib import Path

from wirespeed.gateware.port import PIPELINE_NS, RX_PIPELINE_NS, TX_PIPELINE_NS
from wirespeed.gateware.top import build_register_map

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_register_doc_matches_the_gateware():
    assert (DOCS / "registers.md").read_text() == build_register_map().to_markdown(), \
        "docs/registers.md is stale: run `wirespeed regmap --markdown --out docs/registers.md`"


def test_pipeline_delay_is_documented():
    text = (DOCS / "performance.md").read_text()
    for figure in (f"{TX_PIPELINE_NS} ns", f"{RX_PIPELINE_NS} ns", f"{PIPELINE_NS} ns"):
        assert figure in text
