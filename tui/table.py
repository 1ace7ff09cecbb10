"""A table that renders only the rows on screen. Textual's DataTable measures every cell
before it draws, which is too slow for ten thousand runs; this one draws the header and the
visible rows, so its first paint costs the same for 10 rows or 100,000."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .text import clean


class Column:
    """A column: its row key, header label, width in cells and alignment."""

    def __init__(self, key: str, label: str, width: int, right: bool = False) -> None:
        self.key, self.label, self.width, self.right = key, label, width, right

    def cell(self, value: Any) -> str:
        if value is None:
            text = "-"
        elif isinstance(value, float):
            text = f"{value:.2f}"
        else:
            text = clean(str(value)).replace("\n", " ")
        if cell_len(text) > self.width:
            text = set_cell_size(text, self.width - 1) + "…"
        pad = " " * (self.width - cell_len(text))
        return pad + text if self.right else text + pad


class VirtualTable(ScrollView, can_focus=True):
    """Rows of dicts under a fixed header; a row cursor moved with the usual keys."""

    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "move(-20)", "Page up", show=False),
        Binding("pagedown", "move(20)", "Page down", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
        Binding("enter", "select", "Open"),
    ]
    DEFAULT_CSS = "VirtualTable { height: 1fr; }"
    cursor: reactive[int] = reactive(0)

    class Selected(Message):
        """A row was chosen with Enter."""

        def __init__(self, table: VirtualTable, row: dict[str, Any]) -> None:
            super().__init__()
            self.table, self.row = table, row

    class Highlighted(Message):
        """The cursor moved to a row."""

        def __init__(self, table: VirtualTable, row: dict[str, Any]) -> None:
            super().__init__()
            self.table, self.row = table, row

    def __init__(self, columns: Sequence[Column], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.columns = list(columns)
        self.rows: list[dict[str, Any]] = []
        self._width = sum(c.width + 1 for c in self.columns)

    def set_rows(self, rows: Sequence[dict[str, Any]], keep: str | None = None) -> None:
        """Show ``rows``; the cursor stays on the row whose ``keep`` value it was on."""
        current = self.current.get(keep) if keep and self.current else None
        self.rows = list(rows)
        self.virtual_size = Size(self._width, len(self.rows) + 1)
        found = next((i for i, r in enumerate(self.rows) if keep and r.get(keep) == current), 0)
        self.cursor = found
        self.refresh()

    @property
    def current(self) -> dict[str, Any] | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def watch_cursor(self, cursor: int) -> None:
        visible = max(self.size.height - 1, 1)
        top = self.scroll_offset.y
        if cursor < top:
            self.scroll_to(y=cursor, animate=False)
        elif cursor >= top + visible:
            self.scroll_to(y=cursor - visible + 1, animate=False)
        self.refresh()
        if self.current is not None:
            self.post_message(self.Highlighted(self, self.current))

    def action_move(self, delta: int) -> None:
        if self.rows:
            self.cursor = min(max(self.cursor + delta, 0), len(self.rows) - 1)

    def action_edge(self, end: int) -> None:
        if self.rows:
            self.cursor = len(self.rows) - 1 if end else 0

    def action_select(self) -> None:
        if self.current is not None:
            self.post_message(self.Selected(self, self.current))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        base = self.rich_style
        if y == 0:
            text = " ".join(c.label.ljust(c.width)[: c.width] for c in self.columns)
            strip = Strip([Segment(text, base + Style(bold=True, underline=True))])
        else:
            index = scroll_y + y - 1
            if index >= len(self.rows):
                return Strip.blank(self.size.width, base)
            row = self.rows[index]
            style = base + Style(reverse=True) if index == self.cursor else base
            text = " ".join(c.cell(row.get(c.key)) for c in self.columns)
            strip = Strip([Segment(text, style + row.get("_style", Style()))])
        return strip.crop_extend(scroll_x, scroll_x + self.size.width, base)
