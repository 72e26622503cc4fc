"""The ``wirespeed`` command line: a thin face over the library (options into a plan, events
onto the terminal), one module per command; each registers its commands on :data:`app` when
imported, in the order the help lists them."""

from . import rfc2544, calibrate, reports, regmap, capture, board, dut_models, serve  # noqa: F401, I001
from .app import app, main
from .common import InputError

__all__ = ["app", "main", "InputError"]
