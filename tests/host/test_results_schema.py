"""results.json has a published JSON Schema (docs/results.schema.json), generated from the
record's models, and every record the writer makes is valid against it."""

import json
from pathlib import Path

import jsonschema
import pytest
from test_report import write_run

from wirespeed.results import json_schema

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "results.schema.json"


def test_published_schema_is_the_models():
    assert json.loads(SCHEMA.read_text()) == json_schema(), \
        "docs/results.schema.json is stale: run `wirespeed schema --out docs/results.schema.json`"


@pytest.mark.parametrize("tests", [("throughput", "frame-loss", "back-to-back"), ("back-to-back",)])
def test_written_records_are_valid(tmp_path, tests):
    folder = write_run(tmp_path / "run", tests=tests)
    record = json.loads((folder / "results.json").read_text())
    jsonschema.validate(record, json.loads(SCHEMA.read_text()))


def test_a_broken_record_is_not(tmp_path):
    record = json.loads((write_run(tmp_path / "run", tests=("throughput",)) / "results.json").read_text())
    record["tests"][0]["results"][0]["throughput_fps"] = "fast"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(record, json.loads(SCHEMA.read_text()))
