"""``wirespeed dut-models``: every simulated DUT model's parameters, from the tables --dut is
checked against, as a table at 80 columns and as JSON."""

import json

import pytest

from wirespeed.cli import main
from wirespeed.sim.dut import MODELS, PROFILES, parse_dut
from wirespeed.sim.dut_catalog import MEANINGS, catalog


def test_every_parameter_has_a_meaning_and_no_meaning_is_left_over():
    listed = {("any" if p["every_model"] else m["name"], p["name"])
              for m in catalog()["models"] for p in m["parameters"]}
    assert listed == set(MEANINGS)


REQUIRED = {"tap": "netns=/proc/self/ns/net"}      # the parameters a model has no default for


@pytest.mark.parametrize("model", list(MODELS))
def test_defaults_are_what_parse_dut_gives(model):
    """Each default shown, given back as text, is the model's own default (the listing copies
    nothing: it reads the spec's fields)."""
    entry = next(m for m in catalog()["models"] if m["name"] == model)
    given = [f"{p['name']}={p['default']}" for p in entry["parameters"] if p["default"] != "off"]
    required = [REQUIRED[model]] if model in REQUIRED else []
    assert parse_dut(f"{model}:{','.join(given + required)}") == parse_dut(":".join([model, *required]))


def test_json_lists_models_and_profiles(capsys):
    assert main(["dut-models", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in listing["models"]] == list(MODELS)
    assert [p["name"] for p in listing["profiles"]] == list(PROFILES)
    router = next(m for m in listing["models"] if m["name"] == "router")
    rate = next(p for p in router["parameters"] if p["name"] == "rate")
    assert rate["unit"] == "frames/s" and rate["default"] == "1M" and "1..125000000" in rate["allowed"]


def test_table_fits_80_columns(capsys):
    assert main(["dut-models"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    for word in ("loopback", "router", "switch", "collapse", "bsdrp-306m", "reboot"):
        assert word in out
