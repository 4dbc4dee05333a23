"""Data as text: what a benchmark, the runner, a file or the database says is printed as
it is, never read as rich markup, and with its control characters made visible.

A crash reason ending in ``[/dev/cpu/0/msr-nope]``, a benchmark named ``[/x]`` or an
imported run whose command holds ``[/oops]`` would otherwise end the command in a
MarkupError (the first of these once crashed `run`); ``[i]x[/i]`` would turn into italics,
and an ESC or OSC sequence (``\\x1b]0;title\\x07``) would reach the terminal. Every data
string a table shows goes through :func:`safe_text`.
"""

from __future__ import annotations

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
    out = []
    for ch in s:
        if ch.isprintable() or ch == "\t" or (ch == "\n" and multiline):
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
