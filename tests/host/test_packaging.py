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


def test_the_report_templates_are_package_data():
    """report.html is rendered from files beside the code: the wheel must carry every one."""
    from fnmatch import fnmatch

    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    folder = ROOT / "sw" / "wirespeed" / "report"
    files = [p.relative_to(folder).as_posix() for p in (folder / "templates").iterdir()]
    assert len(files) >= 2
    for name in files:
        assert any(fnmatch(name, g) for g in globs["wirespeed.report"]), name
