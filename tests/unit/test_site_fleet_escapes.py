"""fleet.html (report.site.pages.fleet_page): host names are data, and in its column headers and
caption, as in every cell, a character a terminal or a browser's bidi algorithm acts on (the
right-to-left override U+202E, ESC) is written as its escape (report.text.visible)."""

from __future__ import annotations

from pathlib import Path

from cyclebench.report import hosts
from cyclebench.report.site import Site
from cyclebench.report.site.pages import Fleet, fleet_page

EVIL = "lab\u202ex86\x1b[31m"


def test_fleet_html_escapes_host_names_in_headers_and_caption(tmp_path: Path) -> None:
    rows = [hosts.HostRow("syscall/getpid", None, "", {EVIL: hosts.HostCell(352.5, 2.1, "cycles~", 3),
                                                        "lab-b": hosts.HostCell(379.2, 9.9, "cycles~", 3)})]
    site = Site(tmp_path / "site", "sqlite:///lab.db")
    fleet_page(site, Fleet(sides=((EVIL, (1,)), ("lab-b", (2,))), rows=rows, cpu={EVIL: "cpu\u202e"}))
    page = (tmp_path / "site" / "fleet.html").read_text()
    assert "\u202e" not in page and "\x1b" not in page
    assert "lab\\u202ex86" in page  # said, not dropped
