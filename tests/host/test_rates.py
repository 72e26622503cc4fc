"""Line rates, rate -> Q32.32 period, durations -> cycles, duration strings."""

import pytest

from wirespeed.ethernet import line_rate_fps, throughput_mbps, wire_mbps
from wirespeed.traffic import ns_to_cycles, period_to_rate, rate_to_period
from wirespeed.units import format_duration, parse_duration

CLK = 125_000_000
SIZES = [64, 65, 127, 128, 256, 512, 1024, 1280, 1518]


@pytest.mark.parametrize("size, fps", [  # the table in the RFC 2544 notes (Appendix B, at 1 Gb/s)
    (64, 1_488_095.24), (128, 844_594.59), (256, 452_898.55), (512, 234_962.41),
    (1024, 119_731.80), (1280, 96_153.85), (1518, 81_274.38),
    (9018, 13_830.49),      # a jumbo frame: 9018 + 20 bytes on the wire
])
def test_line_rate_table(size, fps):
    assert line_rate_fps(size) == pytest.approx(fps, abs=0.006)


def test_throughput_mbps_counts_frame_bits_only():
    assert throughput_mbps(64, line_rate_fps(64)) == pytest.approx(761.904762)
    assert throughput_mbps(1518, line_rate_fps(1518)) == pytest.approx(986.996099)
    assert throughput_mbps(9018, line_rate_fps(9018)) == pytest.approx(997.787121)


@pytest.mark.parametrize("size", [64, 1518, 9018, "imix:aaaaaaag"])
def test_wire_mbps_counts_preamble_and_gap(size):
    # layer 1: line rate is the link's 1000 Mb/s at every size, half of it at half the rate
    assert wire_mbps(size, line_rate_fps(size)) == pytest.approx(1000.0)
    assert wire_mbps(size, line_rate_fps(size) / 2) == pytest.approx(500.0)


@pytest.mark.parametrize("size", SIZES)
def test_period_is_exact_at_line_rate(size):
    assert rate_to_period(line_rate_fps(size), size, CLK) == (size + 20) << 32


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("fraction", [0.5, 0.25, 0.1])
def test_period_at_a_fraction_of_line_rate(size, fraction):
    period = rate_to_period(line_rate_fps(size) * fraction, size, CLK)
    assert period == pytest.approx(((size + 20) << 32) / fraction, abs=1)


@pytest.mark.parametrize("size", SIZES)
def test_period_never_below_line_rate(size):
    """A rate a rounding error above line rate still programs L + 20 cycles."""
    rate = line_rate_fps(size) * (1 + 1e-12)
    assert rate_to_period(rate, size, CLK) == (size + 20) << 32


def test_rate_above_line_rate_is_refused():
    with pytest.raises(ValueError, match="above the line rate"):
        rate_to_period(line_rate_fps(64) * 1.001, 64, CLK)


@pytest.mark.parametrize("rate", [0, -1.0])
def test_rate_must_be_positive(rate):
    with pytest.raises(ValueError, match="> 0"):
        rate_to_period(rate, 64, CLK)


def test_period_round_trips_to_rate():
    period = rate_to_period(400_000, 64, CLK)
    assert period == round(312.5 * 2**32)
    assert period_to_rate(period, CLK) == 400_000


@pytest.mark.parametrize("ns, cycles", [(0, 0), (8, 1), (9, 2), (10_000_000, 1_250_000),
                                        (60_000_000_000, 7_500_000_000)])
def test_ns_to_cycles(ns, cycles):
    assert ns_to_cycles(ns, CLK) == cycles


@pytest.mark.parametrize("text, ns", [
    ("10ms", 10_000_000), ("1 ms", 1_000_000), ("1.5s", 1_500_000_000), ("250us", 250_000),
    ("8ns", 8), (".5ms", 500_000), ("60s", 60_000_000_000),
])
def test_parse_duration(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize("text", ["10", "ms", "10 parsecs", "-1ms", "1e3ms", "0.5ns", "1,5s", ""])
def test_parse_duration_rejects(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("ns, text", [(10_000_000, "10 ms"), (1_500, "1.5 us"), (60_000_000_000, "60 s"), (8, "8 ns")])
def test_format_duration(ns, text):
    assert format_duration(ns) == text
