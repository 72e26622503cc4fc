"""Size points of the RFC 2544 tests (wirespeed.sizes): fixed sizes and IMIX labels, their line
rates, and the --sizes list with mixes that hold commas."""

from fractions import Fraction

import pytest

from wirespeed import sizes
from wirespeed.ethernet import line_rate_fps, throughput_mbps
from wirespeed.traffic import StreamSpec, flow_stream, rate_to_period


def test_fixed_and_mixed_points():
    assert sizes.parse_point(64) == 64 and sizes.parse_point(" 1518 ") == 1518
    assert sizes.parse_point("IMIX:aaaaaaag") == "imix:aaaaaaag"
    assert sizes.sizes_of("imix:aaaaaaag") == (64,) * 7 + (1518,)
    assert sizes.mean_len("imix:aaaaaaag") == Fraction(983, 4)
    assert sizes.sizes_of("imix:aaz,z=1500") == (64, 64, 1500)
    assert sizes.sizes_of("imix:64:7,576:4,1518:1").count(576) == 4


def test_line_rate_of_a_mix_is_that_of_its_mean_size():
    # RFC 6985: 7 x 64 + 1 x 1518 = 1966 bytes + 8 x 20 of preamble and gap per pass of 8 frames
    assert line_rate_fps("imix:aaaaaaag") == pytest.approx(8 * 1e9 / 8 / (1966 + 160))
    assert line_rate_fps(64) == pytest.approx(1_488_095.238, abs=1e-3)
    assert throughput_mbps("imix:aaaaaaag", 100_000) == pytest.approx(245.75 * 8 * 0.1)
    assert throughput_mbps(64, 100_000) == pytest.approx(51.2)


def test_list_keeps_commas_inside_a_mix():
    assert sizes.parse_list("64,imix:aaz,z=1500,128") == [64, "imix:aaz,z=1500", 128]
    assert sizes.parse_list("imix:64:7,576:4,1518:1,1518") == ["imix:64:7,576:4,1518:1", 1518]
    assert sizes.parse_list([64, "imix:ag"]) == [64, "imix:ag"]
    assert sizes.distinct_sizes([64, "imix:aaaaaaag", "imix:aaz,z=1500"]) == [64, 1500, 1518]
    assert sizes.smallest([1518, "imix:aaaaaaag", 128]) == 128
    assert sizes.smallest([1518, "imix:aaaaaaag"]) == "imix:aaaaaaag"


@pytest.mark.parametrize("text, message", [
    ("64,64", "frame size 64 is given twice"),
    ("imix:ag,imix:ag", "frame size 'imix:ag' is given twice"),
    ("imix:ag,imix:1518:1,64:1", "is given twice (as 'imix:ag')"),
    ("imix:aq", "'q' at position 1 is not a genome letter"),
    ("imix:aaz", "'z' is the MTU-sized frame"),
    ("63", "frame size 63: the tester sends 64..9018 bytes"),
    ("9019", "frame size 9019: the tester sends 64..9018 bytes"),
    ("big", "frame size 'big': give bytes 64..9018 or imix:GENOME"),
    ("", "frame size '': give bytes"),
])
def test_bad_lists_are_one_line_errors(text, message):
    with pytest.raises(ValueError) as info:
        sizes.parse_list(text)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_flow_stream_of_a_mix():
    spec = flow_stream(0, 1, "imix:aaaaaaag")
    assert spec.point == "imix:aaaaaaag" and spec.sizes[0] == 64 and spec.sizes[-1] == 1518
    assert spec.size.mode == "sequence" and spec.size.sequence == spec.sizes
    again = StreamSpec.model_validate_json(spec.model_dump_json())
    assert again == spec and again.point == spec.point
    assert flow_stream(0, 1, 128).point == 128 and flow_stream(0, 1, 128).size.mode == "fixed"
    with pytest.raises(ValueError):
        flow_stream(0, 1, "imix:64")


def test_period_at_the_line_rate_of_a_mix():
    # 100 % of a mix's line rate: one frame every mean(L) + 20 = 265.75 cycles at 125 MHz
    period = rate_to_period(line_rate_fps("imix:aaaaaaag"), "imix:aaaaaaag", 125_000_000)
    assert period == 265.75 * 2**32
    with pytest.raises(ValueError, match="above the line rate of imix:aaaaaaag frames"):
        rate_to_period(line_rate_fps("imix:aaaaaaag") * 1.01, "imix:aaaaaaag", 125_000_000)


def test_jumbo_frames_are_test_sizes():
    """The generator and analyzer carry frames up to 9018 bytes, so the tests take them, alone
    or in a mix, with their line rate (9018 + 20 bytes a frame on the wire)."""
    assert sizes.parse_list("64,1518,9018") == [64, 1518, 9018]
    assert sizes.sizes_of(sizes.parse_point("imix:aaz,z=9018")) == (64, 64, 9018)
    assert line_rate_fps(9018) == pytest.approx(1e9 / 8 / 9038)
