"""What ``pip install`` (not only an editable install) puts in place: every package of the
source tree is listed in pyproject.toml, under the folder its package-dir says."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_is_listed():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = tool["package-dir"]
    found = set()
    for package, folder in dirs.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            parts = init.parent.relative_to(base).parts
            found.add(".".join((package, *parts)))
    assert sorted(found) == sorted(tool["packages"])
