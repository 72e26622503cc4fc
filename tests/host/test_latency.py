"""Both RFC 1242 3.8 latency definitions from one measured trial, raw and calibrated."""

from fakes import make_trial

from wirespeed.host.models import LatencyHistogram, PortCounters, TrialResult
from wirespeed.latency import BIT_FORWARDING, STORE_AND_FORWARD, latency_figures
from wirespeed.rfc2544.suite.throughput import ThroughputConfig, run_throughput
from wirespeed.traffic import Flow, flow_stream


def by_definition(figures):
    return {f.definition: f for f in figures}


def test_bit_forwarding_measured_store_and_forward_derived():
    trial = make_trial(1518, 80_000.0, 800, 800, latency_ns=(20_000, 20_100, 20_200), lat_def=0)
    figs = latency_figures(trial)
    assert [f.definition for f in figs] == [BIT_FORWARDING, STORE_AND_FORWARD]
    bf, sf = figs
    assert bf.source == "measured" and sf.source == "derived" and not bf.calibrated
    assert (bf.min_ns, bf.avg_ns, bf.max_ns) == (20_000, 20_100, 20_200)
    shift = 8 * 1518
    assert (sf.min_ns, sf.avg_ns, sf.max_ns) == (20_000 - shift, 20_100 - shift, 20_200 - shift)
    assert sf.stddev_ns == bf.stddev_ns == 100 and sf.jitter_ns == bf.jitter_ns == 200
    assert all(sf.percentiles_ns[k] == v - shift for k, v in bf.percentiles_ns.items())
    assert "1518 B" in sf.how and "first bit in to first bit out" in bf.name


def test_store_and_forward_measured_bit_forwarding_derived():
    trial = make_trial(64, 80_000.0, 800, 800, latency_ns=(900, 1000, 1100), lat_def=1)
    sf, bf = latency_figures(trial)
    assert sf.definition == STORE_AND_FORWARD and sf.source == "measured" and sf.min_ns == 900
    assert bf.definition == BIT_FORWARDING and bf.source == "derived" and bf.min_ns == 900 + 512
    assert bf.avg_ns == 1000 + 512 and bf.max_ns == 1100 + 512


def test_clamped_store_and_forward_is_not_derived():
    trial = make_trial(1518, 80_000.0, 800, 800, latency_ns=(0, 50, 100), lat_def=1)
    sf, bf = latency_figures(trial)
    assert sf.available and not bf.available and bf.min_ns is None and "clamps" in bf.how


def test_calibration_shifts_both_definitions():
    trial = make_trial(64, 80_000.0, 800, 800, latency_ns=(900, 1000, 1100), lat_def=0)
    seen = []

    def pipeline(tx, rx, size):
        seen.append((tx, rx, size))
        return 200

    bf, sf = latency_figures(trial, pipeline)
    assert seen == [(0, 1, 64)]
    assert bf.calibrated and sf.calibrated and bf.pipeline_delay_ns == sf.pipeline_delay_ns == 200
    assert (bf.min_ns, bf.avg_ns, bf.max_ns) == (700, 800, 900)
    assert (sf.min_ns, sf.avg_ns, sf.max_ns) == (700 - 512, 800 - 512, 900 - 512)
    assert bf.stddev_ns == 100 and bf.percentiles_ns["p50"] == 960 - 200


def test_two_ports_with_different_pipeline_delays_are_exact():
    """Per-port shifts: statistics from the sums, exactly as if every frame were shifted."""
    lat0, lat1 = [1000, 1010], [2000, 2040]
    def rx(lats):
        return PortCounters(rx_frames=len(lats), lat_min=min(lats), lat_max=max(lats), lat_sum=sum(lats),
                            lat_sq_sum=sum(x * x for x in lats), jitter_sum=max(lats) - min(lats),
                            tx_frames=2)
    trial = TrialResult(frame_size=64, offered_fps=1.0, period_q32=0, duration_ns=1, wait_ns=0,
                        flows=[Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, 64)),
                               Flow(tx_port=1, rx_port=0, spec=flow_stream(1, 0, 64))],
                        started_ns=0, counters={0: rx(lat1), 1: rx(lat0)})
    delays = {(0, 1): 200, (1, 0): 300}
    bf, _ = latency_figures(trial, lambda tx, rx_, size: delays[tx, rx_])
    shifted = [x - 200 for x in lat0] + [x - 300 for x in lat1]
    mean = sum(shifted) / 4
    assert bf.min_ns == min(shifted) and bf.max_ns == max(shifted) and bf.avg_ns == mean
    assert abs(bf.stddev_ns - (sum((x - mean) ** 2 for x in shifted) / 4) ** 0.5) < 1e-6
    assert bf.pipeline_delay_ns is None     # no single value to report


def test_two_ports_with_histograms_and_different_pipeline_delays():
    """A bidirectional trial calibrated per direction: the percentiles come from both ports'
    histograms, each bin shifted by its own port's delay (raw: merged as they are)."""
    def rx(lats):
        return PortCounters(rx_frames=len(lats), lat_min=min(lats), lat_max=max(lats), lat_sum=sum(lats),
                            lat_sq_sum=sum(x * x for x in lats), jitter_sum=0, tx_frames=len(lats))

    def hist(lats):
        counts = {}
        for x in lats:
            counts[x // 64] = counts.get(x // 64, 0) + 1
        return LatencyHistogram(offset_ns=0, bin_ns=64, counts=counts, underflow=0, overflow=0)

    lat0, lat1 = [1000] * 90 + [1500] * 10, [2000] * 100       # into port 1, into port 0
    trial = TrialResult(frame_size=64, offered_fps=1.0, period_q32=0, duration_ns=1, wait_ns=0,
                        flows=[Flow(tx_port=0, rx_port=1, spec=flow_stream(0, 1, 64)),
                               Flow(tx_port=1, rx_port=0, spec=flow_stream(1, 0, 64))],
                        started_ns=0, counters={0: rx(lat1), 1: rx(lat0)},
                        histograms={0: hist(lat1), 1: hist(lat0)})
    raw, _ = latency_figures(trial)
    assert raw.percentiles_ns == {"p50": 1536, "p90": 2000, "p99": 2000, "p99.9": 2000}
    delays = {(0, 1): 200, (1, 0): 1100}       # port 1's frames - 200, port 0's - 1,100: 800, 1,300, 900
    bf, sf = latency_figures(trial, lambda tx, rx_, size: delays[tx, rx_])
    # shifted bin edges: 1,024 - 200 = 824 (90 frames), 1,536 - 200 = 1,336 (10), 2,048 - 1,100 = 948 (100)
    assert bf.percentiles_ns == {"p50": 948, "p90": 948, "p99": 1300, "p99.9": 1300}
    assert (bf.min_ns, bf.max_ns) == (800, 1300)
    assert sf.percentiles_ns == {k: v - 512 for k, v in bf.percentiles_ns.items()}


def test_percentiles_lie_within_the_measured_min_and_max():
    """A percentile is read off the histogram as its bin's upper edge, which can lie beyond
    every latency in the bin (the router run's 512 B p50 of 26,680 ns against a maximum of
    26,664 ns): reported, it is brought within the trial's min and max, in both definitions,
    raw and calibrated."""
    # every frame in the bin 26,624 .. 26,688 ns
    trial = make_trial(512, 80_000.0, 800, 800, latency_ns=(26_630, 26_647, 26_664))
    assert trial.histograms[1].percentile(50) == 26_688
    for pipeline in (None, lambda tx, rx, size: 200):
        for fig in latency_figures(trial, pipeline):
            assert all(fig.min_ns <= v <= fig.max_ns for v in fig.percentiles_ns.values()), fig
            assert fig.percentiles_ns["p50"] == fig.max_ns
    # both ends: 960 ns (half the frames) up to a minimum of 1,000, 1,152 down to a maximum of 1,100
    assert make_trial(64, 1.0, 10, 10, latency_ns=(900, 1000, 1100)).histograms[1].percentiles(1000, 1100) == {
        "p50": 1000, "p90": 1100, "p99": 1100, "p99.9": 1100}


def test_no_frames_no_figures():
    assert latency_figures(make_trial(64, 1.0, 10, 0)) == []


def test_throughput_run_measures_the_chosen_definition():
    from fakes import FakeTester
    tester = FakeTester(limit_pct=50)
    config = ThroughputConfig(frame_sizes=[64], trial_duration_ns=1_000_000, wait_ns=0,
                              latency_definition="store_and_forward", resolution_pct=10)
    (result,) = run_throughput(tester, config, pipeline=lambda tx, rx, size: 100)
    assert set(tester.lat_defs) == {1}
    assert [f.definition for f in result.latency] == [STORE_AND_FORWARD, BIT_FORWARDING]
    assert result.latency[0].min_ns == 900 - 100 and result.latency[0].calibrated


def test_mixed_frame_sizes_derive_nothing():
    trial = make_trial(64, 1.0, 100, 100)
    trial = trial.model_copy(update={"flows": [trial.flows[0], Flow(tx_port=1, rx_port=1,
                                                                    spec=flow_stream(1, 1, 1518))]})
    measured, other = latency_figures(trial)
    assert measured.source == "measured" and measured.min_ns == 900
    assert not other.available and other.min_ns is None and "mixes frame sizes" in other.how
