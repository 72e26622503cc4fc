"""docs/api.md's example runs as written, and writes the same CSVs as the command line given the
same plan."""

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
CSVS = ("Throughput.csv", "Latency.csv", "Latency_Trials.csv", "Latency_Histograms.csv", "Trials.csv")


def example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert blocks, "docs/api.md has no python example"
    return blocks[0]


def test_the_api_example_runs_and_matches_the_command_line(tmp_path, monkeypatch, capsys, reference_run):
    monkeypatch.chdir(tmp_path)
    exec(compile(example(), str(DOC), "exec"), {})
    printed = capsys.readouterr().out
    assert re.search(r"^64 B: [\d,.]+ frames/s", printed, re.M) and "1518 B:" in printed
    api = tmp_path / "api-results"
    assert (api / "results.json").is_file()
    for name in CSVS:
        assert (api / name).read_text() == (reference_run / name).read_text(), name
