"""Help: every key of the screen below it, read from that screen's own bindings (so the help
can never list a key that does nothing)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen, Screen
from textual.widgets import Static


def keys_of(screen: Screen) -> list[tuple[str, str]]:
    """(keys, description) for every binding of ``screen`` and of the app."""
    seen, rows = set(), []
    for source in (screen, screen.app):
        for binding in getattr(source, "BINDINGS", []):
            if not isinstance(binding, Binding) or binding.description in seen:
                continue
            seen.add(binding.description)
            keys = ", ".join(
                screen.app.get_key_display(Binding(k, "")) for k in binding.key.split(",")
            )
            rows.append((keys, binding.description))
    return rows


class HelpScreen(ModalScreen):
    """The keys of the screen it was opened from."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, below: Screen) -> None:
        super().__init__()
        self.below = below

    def compose(self) -> ComposeResult:
        table = Table(
            title=f"keys: {type(self.below).__name__.removesuffix('Screen')}",
            show_edge=False,
            expand=False,
        )
        table.add_column("key", style="bold")
        table.add_column("does")
        for keys, what in keys_of(self.below):
            table.add_row(Text(keys), Text(what))
        yield Static(table, id="help")
