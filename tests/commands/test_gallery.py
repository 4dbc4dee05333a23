"""docs/gallery.md is what bench/gallery.py writes from the lab fixture today (approval testing:
every change to what a command prints is a reviewed diff of that file)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import gallery


def test_the_gallery_is_current() -> None:
    new = gallery.render()
    old = gallery.GALLERY.read_text() if gallery.GALLERY.exists() else ""
    assert old == new, (f"docs/gallery.md differs from what the code prints now; review the diff below, then "
                        f"regenerate it: {gallery.REGENERATE}\n{gallery.diff(old, new)[:20000]}")


def test_the_gallery_says_nothing_of_the_machine_that_made_it() -> None:
    """Normalised: the copy's path and the fixture's private directory, never this checkout's."""
    text = gallery.GALLERY.read_text()
    assert "/tmp/cyclebench-lab-" not in text and "cyclebench-gallery-" not in text
    assert str(Path(__file__).resolve().parents[2]) not in text
