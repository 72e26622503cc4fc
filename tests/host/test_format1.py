"""Results folders of format 1 (wirespeed-results/1, written before the test registry) are read:
``report`` regenerates every column their CSV tables had, value for value (columns added since
are blank where the old record did not measure them; a latency definition, once written as
prose, is now its key), and the record is converted to format 2."""

import csv
import shutil
from pathlib import Path

from test_report import run

from wirespeed.latency import DEFINITION_NAMES
from wirespeed.results import load_record

FOLDER = Path(__file__).resolve().parent / "golden" / "format1"
KEY_OF_NAME = {name: key for key, name in DEFINITION_NAMES.items()}
CSVS = sorted(p.name for p in FOLDER.glob("*.csv"))


def test_a_format_1_record_is_read_as_format_2():
    record = load_record(FOLDER)
    assert record.format == "wirespeed-results/2"
    assert record.test_names == ["throughput", "frame-loss", "back-to-back"]
    assert [r.frame_size for r in record.results_of("throughput")] == [64, 1518]
    assert record.parameters_of("back-to-back").repetitions == 3
    flow = record.trials[0].flows[0]
    assert (flow.tx_port, flow.rx_port, flow.spec.point, flow.spec.stream_id) == (0, 1, 64, 0)


def test_report_on_a_format_1_folder_gives_the_same_tables(capsys, tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(FOLDER, folder)
    for name in CSVS:
        (folder / name).unlink()
    code, _, err = run(capsys, "report", str(folder))
    assert code == 0, err
    for name in CSVS:
        old, new = _rows(FOLDER / name), _rows(folder / name)
        assert len(new) == len(old) and set(old[0]) <= set(new[0]), name
        assert [{k: row[k] for k in old[0]} for row in new] == old, name
    assert (folder / "report.html").is_file()


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return [{k: KEY_OF_NAME.get(v, v) if k == "definition" else v for k, v in row.items()}
                for row in csv.DictReader(f)]
