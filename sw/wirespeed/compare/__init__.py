"""``wirespeed compare``: ministat-compatible statistics over repeated runs.

FreeBSD's ministat(1) is what the BSDRP labs use to compare repeated runs: per data set N, Min,
Max, Median, Avg and Stddev, an ASCII plot of the sets, and for each set after the first a
Student's t test of its mean against the first set's, with a pooled standard deviation and a
fixed table of t values. This module computes the same figures with the same formulas and
prints them in ministat's layout, so a wirespeed comparison reads like the labs' ones.

Two generations of ministat differ in three details, both are offered:

* ``current`` (FreeBSD ministat today, the default): the median of an even number of values is
  the mean of the two middle ones; the variance is summed around the mean (two passes); the
  "+/- %" of a difference propagates the uncertainty of both means into the ratio.
* ``classic`` (older ministat, e.g. FreeBSD 9 and 10, used for the BSDRP labs of 2013): the
  median is the upper middle value; the variance comes from running sums; the "+/- %" is the
  interval divided by the first set's mean.

For an odd N the two agree except for the "+/- %" figure.

Pure functions: :func:`load_set` reads a data set, :func:`summarize` and :func:`relative`
compute, :func:`plot_lines`, :func:`format_report` and :func:`report_json` present.
"""


from .load import load_set, parse_where
from .present import format_report, plot_lines, report_json
from .stats import (
    CONFIDENCES,
    MAX_SETS,
    STYLES,
    SYMBOLS,
    CompareError,
    DataSet,
    Relative,
    Summary,
    parse_confidence,
    relative,
    student_t,
    summarize,
)

__all__ = ["CONFIDENCES", "SYMBOLS", "MAX_SETS", "STYLES", "CompareError", "DataSet", "Summary", "Relative",
           "student_t", "summarize", "relative", "plot_lines", "format_report", "report_json", "load_set",
           "parse_where", "parse_confidence"]
