"""`cyclebench report`'s static site (docs/site.md): HTML pages from Jinja2 templates
(``templates/``, autoescape on: every string from a benchmark, a file or the database is
text, never markup), interactive plots drawn by plotly.js — the copy the ``plotly`` Python
package ships (``package_data/plotly.min.js``), written once into the site's ``static/`` —
and a small script of its own that sorts tables and draws the plots (``static/site.js``). No
page loads anything from the network: the site opens from ``file://`` and from any web server.

The pages are what the terminal shows, laid out for a browser: each table is built by the
function that builds it for the terminal (report.console, report.variants, report.hosts,
report.plots, report.history) and turned into HTML by :mod:`.tables` with every column.

:class:`Site` writes a site into a directory; :mod:`.pages` lays out each page from the records
experiments/site/ gathers from the database.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import re
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from cyclebench import __version__
from cyclebench.report.fit import FitTable
from cyclebench.report.site.tables import HtmlTable, html_table

__all__ = ["MARK", "Block", "Capture", "Site", "SiteError", "blocks_of", "foreign", "history_slug"]

# In the root of every site: its first line says what made it, the next ones are its manifest,
# every path the build wrote ("/"-separated, a directory's ending in "/"). A new build may
# replace a directory holding it, and only what the manifest lists (never a file put there).
MARK = ".cyclebench-site"
_PAGE_SUFFIXES = (".html", ".js", ".css", ".json")  # a site written before manifests: its files
NAV = (("index.html", "Lab"), ("runs.html", "Runs"), ("history/index.html", "Benchmarks"),
       ("comparisons.html", "Comparisons"), ("variants.html", "Variants"), ("scale.html", "Scale"),
       ("revisions.html", "Revisions"), ("fleet.html", "Fleet"))


class SiteError(Exception):
    """The site cannot be written: Jinja2 or plotly missing (pip install 'cyclebench[site]')."""


def plotly_js() -> Path:
    """plotly.js as the plotly Python package ships it. SiteError without the package."""
    try:
        import plotly
    except ImportError:
        raise SiteError("cyclebench report needs the plotly package: pip install 'cyclebench[site]'") from None
    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise SiteError(f"the plotly package has no plotly.min.js ({path}): reinstall it (pip install -U plotly)")
    return path


def history_slug(bench: str, param: int | None, variant: str) -> str:
    """The file name (no directory) of a benchmark's history page: its name in safe characters,
    then 10 hex digits of a hash of (bench, param, variant), so names that read alike differ."""
    name = bench + ("" if param is None else f"-{param}") + (f"-{variant}" if variant else "")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:60] or "bench"
    digest = hashlib.sha1(json.dumps([bench, param, variant]).encode()).hexdigest()[:10]
    return f"{safe}-{digest}.html"


class Capture:
    """A stand-in for a rich Console that keeps what is printed, in order: show's recipe
    (commands/show.print_run) prints a stored run into it, and the run's page shows it."""

    width = 200

    def __init__(self) -> None:
        self.items: list[Any] = []

    def print(self, *objects: Any, **_kw: Any) -> None:
        self.items.extend(objects)

    def rule(self, title: Any = "", **_kw: Any) -> None:
        self.items.append(("rule", title))


@dataclass(frozen=True)
class Block:
    """A piece of a run's page: a table, a line of text, a rule with a title, or preformatted
    text (a rich renderable that is not a FitTable, e.g. a disassembly)."""

    kind: str  # table | text | rule | pre
    table: HtmlTable | None = None
    text: str = ""


def _plain(obj: Any) -> str:
    if isinstance(obj, Text):
        return obj.plain
    if isinstance(obj, str):
        return obj
    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None, force_terminal=False, soft_wrap=True, emoji=False).print(obj)
    return buf.getvalue().rstrip("\n")


def blocks_of(items: Iterable[Any], link: Callable[[list[str]], str | None] | None = None) -> list[Block]:
    """What a Capture holds, as blocks: FitTables as HTML tables (``link``: html_table's), text as
    lines, rules as headings, any other renderable as its plain text."""
    out = []
    for it in items:
        if isinstance(it, FitTable):
            out.append(Block("table", html_table(it, link)))
        elif isinstance(it, tuple) and len(it) == 2 and it[0] == "rule":
            out.append(Block("rule", text=_plain(it[1])))
        elif isinstance(it, (str, Text)):
            out.append(Block("text", text=_plain(it)))
        else:
            out.append(Block("pre", text=_plain(it)))
    return out


@dataclass(frozen=True)
class Written:
    """What a build wrote: each page's size in bytes, by its path in the site."""

    pages: dict[str, int] = field(default_factory=dict)

    @property
    def largest(self) -> tuple[str, int]:
        return max(self.pages.items(), key=lambda kv: kv[1]) if self.pages else ("", 0)


class Site:
    """A site being written into ``root`` (a new, empty directory). ``source``: the database it
    shows (its URL without password), said in every page's footer."""

    def __init__(self, root: Path, source: str, filters: str = "") -> None:
        try:
            import jinja2
        except ImportError:
            raise SiteError("cyclebench report needs the jinja2 package: pip install 'cyclebench[site]'") from None
        self.root = root
        self.pages: dict[str, int] = {}  # each page written so far: its size in bytes, by its path (working state)
        self.env = jinja2.Environment(loader=jinja2.PackageLoader("cyclebench.report.site", "templates"),
                                      autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                                      lstrip_blocks=True)
        self.env.filters["jsonscript"] = _json_script
        self.common = {"version": __version__, "source": source, "filters": filters,
                       "made_at": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "nav": NAV}
        static = root / "static"
        static.mkdir(parents=True)
        shutil.copyfile(plotly_js(), static / "plotly.min.js")
        for name in ("site.css", "site.js"):
            (static / name).write_bytes(resources.files(__name__).joinpath("static", name).read_bytes())
        (root / MARK).write_text(f"cyclebench {__version__} report\n")

    def page(self, rel: str, template: str, **ctx: Any) -> None:
        """Render ``template`` with ``ctx`` into ``rel`` (a path inside the site, "/"-separated)."""
        html = self.env.get_template(template).render(root="../" * rel.count("/"), here=rel, **self.common, **ctx)
        data = html.encode()
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.pages[rel] = len(data)

    def seal(self) -> None:
        """Write the manifest (MARK): every path under the root, all written by this build."""
        paths = sorted(_walk(self.root))
        (self.root / MARK).write_text(f"cyclebench {__version__} report\n" + "".join(f"{p}\n" for p in paths))

    @property
    def written(self) -> Written:
        """The pages written so far, as a record (a copy: later pages do not change it)."""
        return Written(dict(self.pages))


def _walk(root: Path) -> Iterable[str]:
    """Every path under ``root`` ("/"-separated, a directory's ending in "/"), in sorted order,
    links not followed."""
    import os

    for top, dirs, files in os.walk(root):
        dirs.sort()
        rel = Path(top).relative_to(root).as_posix()
        base = "" if rel == "." else rel + "/"
        yield from sorted([*(base + d + "/" for d in dirs), *(base + f for f in files)])


def foreign(root: Path) -> str | None:
    """The first path under the directory ``root`` that no site build wrote there: anything
    when it holds no MARK, else anything its manifest does not list (a site made before
    manifests: anything but its pages, scripts and directories); None when there is none."""
    try:
        lines: set[str] | None = set((root / MARK).read_text(errors="replace").splitlines()[1:])
    except OSError:
        lines = None
    for path in _walk(root):
        if lines is None or (path not in lines and path != MARK and (lines or not (
                path.endswith("/") or path.endswith(_PAGE_SUFFIXES)))):
            return path
    return None


def _json_script(value: Any) -> str:
    """``value`` as JSON for a <script type="application/json"> element: <, >, & and ' as
    \\u escapes, so no string in it can end the element (as Jinja2's tojson)."""
    from markupsafe import Markup

    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace("'", "\\u0027")
    return Markup(text)


def table_of(table: FitTable, link: Callable[[list[str]], str | None] | None = None) -> HtmlTable:
    """report.site.tables.html_table, re-exported for the pages' callers."""
    return html_table(table, link)


def labels_text(labels: Any) -> str:
    if not isinstance(labels, Mapping) or not labels:
        return ""
    return ", ".join(f"{k}={v}" for k, v in labels.items())


def argv_text(command: Any) -> str:
    """A stored command line as one line (its arguments quoted as a shell would need)."""
    import shlex

    if isinstance(command, Sequence) and not isinstance(command, str):
        return " ".join(shlex.quote(str(a)) for a in command)
    return "" if command is None else str(command)
