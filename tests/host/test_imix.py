"""RFC 6985 IMIX genomes and weighted mixes."""

from collections import Counter

import pytest

from wirespeed import imix


def test_genome_letters():
    assert imix.parse_genome("abcdefghi") == [64, 128, 256, 512, 1024, 1280, 1518, 2112, 9000]
    assert imix.parse_genome("aaaaaaag") == [64] * 7 + [1518]
    assert imix.parse_genome("aaz", mtu=1500) == [64, 64, 1500]
    assert imix.genome_of([64, 64, 1518]) == "aag"
    assert imix.genome_of([64, 576]) is None


@pytest.mark.parametrize("genome, kwargs, message", [
    ("", {}, "empty IMIX genome: give letters a-j, z (RFC 6985), e.g. aaaaaaag"),
    ("aax", {}, "IMIX genome 'aax': 'x' at position 2 is not a genome letter (a-j, z, RFC 6985)"),
    ("aA", {}, "IMIX genome 'aA': 'A' at position 1 is not a genome letter (a-j, z, RFC 6985)"),
    ("aaz", {}, "IMIX genome 'aaz': 'z' is the MTU-sized frame; give its size (e.g. imix:aaz,z=1518)"),
    ("aj", {}, "IMIX genome 'aj', letter 'j': 16000 bytes is outside the tester's frame sizes 64..9018 "
               "(FCS included)"),
    ("z", {"mtu": 10000}, "IMIX genome 'z', letter 'z': 10000 bytes is outside the tester's frame sizes "
                          "64..9018 (FCS included)"),
    ("a" * 1025, {}, f"IMIX genome {'a' * 1025!r} expands to 1025 frame sizes; the size table holds 1024"),
])
def test_genome_errors(genome, kwargs, message):
    with pytest.raises(ValueError) as info:
        imix.parse_genome(genome, **kwargs)
    assert str(info.value) == message


def test_weighted_mix_interleaves_evenly():
    seq = imix.parse_weighted("64:7,576:4,1518:1")
    assert seq == [64, 576, 64, 64, 576, 64, 1518, 64, 576, 64, 576, 64]
    assert Counter(seq) == {64: 7, 576: 4, 1518: 1}
    # weights are reduced by their gcd; no size runs longer than its fair share
    seq = imix.parse_weighted("64:70,576:40,1518:10")
    assert len(seq) == 12
    seq = imix.parse_weighted("64:1,1518:1")
    assert seq == [64, 1518]
    seq = imix.parse_weighted("64:3,128:5,256:2")
    assert Counter(seq) == {64: 3, 128: 5, 256: 2}
    for size, weight in ((64, 3), (128, 5), (256, 2)):
        positions = [i for i, s in enumerate(seq) if s == size]
        gaps = [b - a for a, b in zip(positions, positions[1:] + [positions[0] + len(seq)])]
        assert max(gaps) - min(gaps) <= 1 + (len(seq) // weight) // 2


@pytest.mark.parametrize("text, message", [
    ("64:7,576", "weighted mix '64:7,576': '576' is not size:weight (integers, e.g. 64:7,576:4,1518:1)"),
    ("64:x", "weighted mix '64:x': '64:x' is not size:weight (integers, e.g. 64:7,576:4,1518:1)"),
    ("64:0,128:1", "weighted mix '64:0,128:1': the weight of 64 must be >= 1, not 0"),
    ("60:1", "weighted mix '60:1': 60 bytes is outside the tester's frame sizes 64..9018 (FCS included)"),
    ("64:1,64:2", "weighted mix '64:1,64:2': size 64 is listed twice"),
    ("64:1001,128:24", "weighted mix '64:1001,128:24' expands to 1025 frame sizes; the size table holds 1024"),
])
def test_weighted_errors(text, message):
    with pytest.raises(ValueError) as info:
        imix.parse_weighted(text)
    assert str(info.value) == message


def test_parse_mix_and_rates():
    assert imix.parse_mix("aaaaaaag") == [64] * 7 + [1518]
    assert imix.parse_mix("az,z=1500") == [64, 1500]
    assert imix.parse_mix("64:7,576:4,1518:1") == imix.parse_weighted("64:7,576:4,1518:1")
    with pytest.raises(ValueError, match=r"after the genome only z=<MTU size> may follow, not 'y=3'"):
        imix.parse_mix("az,y=3")
    seq = imix.parse_mix("64:7,576:4,1518:1")
    mean = (7 * 64 + 4 * 576 + 1518) / 12
    assert imix.mean_size(seq) == pytest.approx(mean)
    with pytest.raises(ValueError, match="empty size sequence"):
        imix.mean_size([])
