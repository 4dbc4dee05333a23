"""docs/gallery.md is what bench/gallery.py writes from the lab fixture today (approval testing:
every change to what a command prints is a reviewed diff of that file)."""

from __future__ import annotations

import shlex
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


# modes of a command that print what its plain form does not (each needs an entry of its own)
MODES = [("run", "--list"), ("compare", "--allocator"), ("variants", "--allocator"), ("compare", "--by", "host"),
         ("selftest", "--check")]


def _blocks(text: str) -> list[tuple[list[str], str]]:
    """Each console block of the gallery: (its `$ cyclebench` line as argv, what follows it)."""
    out = []
    for block in text.split("```console\n")[1:]:
        first, _, body = block.split("\n```", 1)[0].partition("\n")
        assert first.startswith("$ cyclebench "), first
        out.append((shlex.split(first.removeprefix("$ cyclebench ")), body))
    return out


def _made_by(text: str) -> list[list[str]]:
    """The commands of the gallery's "Made by:" blocks (a stored run's, shown by `show N` as the
    command printed it), but those left out."""
    out = []
    for block in text.split("Made by:\n\n```\n")[1:]:
        lines = block.split("\n```", 1)[0].splitlines()
        if not any(line.startswith("(left out") for line in lines):
            out += [shlex.split(line.removeprefix("cyclebench ")) for line in lines if line.startswith("cyclebench ")]
    return out


def test_the_gallery_shows_every_command_and_mode() -> None:
    """Every command of `cyclebench --help` (cli.COMMANDS), every subcommand of a group (counters
    list, fleet status, …) and every mode of MODES has a `$ cyclebench …` block in docs/gallery.md
    or made a run a `show` block prints (its "Made by:"), or is said to be left out of the capture
    with its reason (manifest.json): a new command without a gallery entry fails here. `compare
    --by host` is shown for real, not only as the one-host error."""
    import click

    from cyclebench import cli

    text = gallery.GALLERY.read_text()
    shown = [argv for argv, _ in _blocks(text)] + _made_by(text)
    left = [c["argv"] for c in gallery.captures() if "left out" in c]
    ctx = click.Context(cli.main)
    wanted: list[tuple[str, ...]] = [(name,) for name in cli.COMMANDS]
    for name in cli.COMMANDS:
        cmd = cli.main.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            wanted += [(name, sub) for sub in cmd.list_commands(ctx) if not cmd.commands[sub].hidden]
    missing = [" ".join(w) for w in wanted if not any(tuple(a[:len(w)]) == w for a in shown)
               and not any(tuple(a[:len(w)]) == w for a in left)]
    missing += [" ".join(m) for m in MODES if not any(a[0] == m[0] and " ".join(m[1:]) in " ".join(a[1:])
                                                      for a in shown)]
    assert not missing, f"no entry in docs/gallery.md (bench/gallery.py, bench/lab_fixture.py) for: {missing}"
    by_host = [body for argv, body in _blocks(text) if argv[:3] == ["compare", "--by", "host"]]
    assert any("[exit" not in body for body in by_host), "compare --by host only as an error"
