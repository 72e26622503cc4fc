"""The report's HTML (Jinja2, ``templates/``) and its PDF (WeasyPrint, from that HTML).

The HTML is one offline file: its CSS inline and every graph an inline ``<svg>`` element
(:func:`wirespeed.graphs.inline_svg`: nothing refers outside the page).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from ..graphs import inline_svg
from .view import View

__all__ = ["render_html", "inline_svg", "write_pdf", "PdfError", "PAPERS"]


class PdfError(Exception):
    """The PDF could not be made (WeasyPrint or its system libraries missing, or it failed)."""


@cache
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(loader=jinja2.PackageLoader("wirespeed.report", "templates"),
                              autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
                              trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)


def render_html(view: View, svgs: dict[str, str], captions: dict[str, str]) -> str:
    """The report page: ``svgs`` graph name -> its SVG file's text."""
    env = _environment()
    css = env.loader.get_source(env, "report.css")[0]
    graphs = {name: inline_svg(text, name) for name, text in svgs.items()}
    return env.get_template("report.html.j2").render(view=view, css=css, graphs=graphs, captions=captions)


#: paper sizes of the PDF (CSS page size names)
PAPERS = ("A4", "letter")


def write_pdf(html: str, path: Path, base: Path, paper: str = "A4") -> None:
    """``html`` printed to ``path`` on ``paper`` (one of :data:`PAPERS`)."""
    try:
        import weasyprint
    except (ImportError, OSError) as exc:      # OSError: pango or another system library is missing
        raise PdfError(f"WeasyPrint cannot be loaded ({exc}); see docs/report.md for the system packages "
                       "it needs") from None
    try:
        page = weasyprint.CSS(string=f"@page {{ size: {paper}; }}")
        weasyprint.HTML(string=html, base_url=str(base)).write_pdf(path, stylesheets=[page])
    except OSError:
        raise
    except Exception as exc:
        raise PdfError(f"WeasyPrint failed: {type(exc).__name__}: {exc}") from None
