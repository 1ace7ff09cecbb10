"""Text from runs is untrusted: it is shown literally. Rich markup is never parsed (only
``Text`` objects are built, never markup strings), and terminal control sequences are replaced
by visible escapes so they cannot move the cursor, change colours or clear the screen."""

from __future__ import annotations

import re

from rich.text import Text

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    return "␛" if char == "\x1b" else f"\\x{ord(char):02x}"


def clean(text: str) -> str:
    """``text`` with control characters (ESC, BEL, backspace, carriage return...) shown as
    escapes; tabs become spaces; newlines stay."""
    return _CONTROL.sub(_visible, text.replace("\t", "    "))


def literal(text: str, style: str = "") -> Text:
    """A rich Text that shows ``text`` exactly as written, markup and escapes included."""
    return Text(clean(text), style=style)


def one_line(text: str, width: int) -> str:
    flat = " ".join(clean(text).split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)] + "…"
