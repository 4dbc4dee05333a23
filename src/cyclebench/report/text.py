"""Data as text: what a benchmark, the runner, a file or the database says is printed as
it is, never read as rich markup, and with its control characters made visible.

A crash reason ending in ``[/dev/cpu/0/msr-nope]``, a benchmark named ``[/x]`` or an
imported run whose command holds ``[/oops]`` would otherwise end the command in a
MarkupError (the first of these once crashed `run`); ``[i]x[/i]`` would turn into italics,
and an ESC or OSC sequence (``\\x1b]0;title\\x07``) would reach the terminal. Every data
string a table shows goes through :func:`safe_text`.
"""

from __future__ import annotations

import re

from rich.style import StyleType
from rich.text import Text

__all__ = ["safe_text", "visible"]


def _escape(ch: str) -> str:
    o = ord(ch)
    if o < 0x100:
        return f"\\x{o:02x}"
    if o < 0x10000:
        return f"\\u{o:04x}"
    return f"\\U{o:08x}"


def visible(s: str, multiline: bool = True) -> str:
    """``s`` with every character a terminal would act on instead of print written as a
    Python escape: C0/C1 controls (ESC → ``\\x1b``, BEL → ``\\x07``, a lone CR → ``\\x0d``),
    DEL, format characters such as bidi overrides (``\\u202e``), private-use and
    unassigned code points. Tabs stay (rich expands them); ``\\r\\n`` and ``\\n`` stay line
    breaks when ``multiline`` (else ``\\x0a``). Spaces of any width are kept."""
    s = s.replace("\r\n", "\n")
    if s.isprintable():
        return s
    # the controls by a regular expression, then what is left by str methods, line by line, so only
    # a line that needs it goes character by character: all in C but for the rare character. A 10 MB
    # reason of short lines took 0.9–1.3 s character by character, 0.09 s so; of lines each with an
    # escape sequence, 0.8 s, and 0.35 s so
    s = (_CONTROLS if multiline else _CONTROLS_AND_BREAKS).sub(_escaped, s)
    if not multiline or "\n" not in s:
        return s if _printable(s) else _each(s)
    if _printable(s.replace("\n", " ")):
        return s
    return "\n".join(line if _printable(line) else _each(line) for line in s.split("\n"))


_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but tab and line feed, DEL, C1: all escaped
_CONTROLS_AND_BREAKS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def _escaped(m: re.Match[str]) -> str:
    return _escape(m.group())


def _printable(s: str) -> bool:
    """Nothing in ``s`` to escape (tabs stay), found by str.isprintable, which runs in C."""
    return s.isprintable() or ("\t" in s and s.replace("\t", " ").isprintable())


def _each(s: str) -> str:
    """``s`` (no line break kept in it) with each character that needs it escaped."""
    out = []
    for ch in s:
        if ch.isprintable() or ch == "\t":
            out.append(ch)
        elif ch.isspace() and ch not in "\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029":
            out.append(ch)  # a space separator (no-break, thin, ideographic): printable in effect
        else:
            out.append(_escape(ch))
    return "".join(out)


def safe_text(s: object, style: StyleType = "", multiline: bool = True) -> Text:
    """A data value as a rich Text: printed literally (no markup, no emoji codes), its
    control characters made visible (see :func:`visible`). ``None`` gives empty text;
    a Text is returned as it is (it was built by the report, not parsed)."""
    if isinstance(s, Text):
        return s
    return Text(visible("" if s is None else str(s), multiline), style=style)
