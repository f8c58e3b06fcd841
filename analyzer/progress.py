"""Progress on stderr, only when stderr is a terminal and not --quiet."""

from __future__ import annotations

import sys
from typing import Iterable, Iterator, TextIO, TypeVar

T = TypeVar("T")


class Progress:
    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.enabled = (not quiet) and bool(isatty())

    def iter(self, items: Iterable[T], label: str, total: int | None = None) -> Iterator[T]:
        items = list(items) if total is None else items
        n = len(items) if total is None else total  # type: ignore[arg-type]
        for i, item in enumerate(items, 1):
            if self.enabled:
                width = 24
                done = int(width * i / max(n, 1))
                self.stream.write(f"\r{label} [{'#' * done}{'.' * (width - done)}] {i}/{n}")
                self.stream.flush()
            yield item
        if self.enabled:
            self.stream.write("\r" + " " * (len(label) + 40) + "\r")
            self.stream.flush()

    def note(self, message: str) -> None:
        if self.enabled:
            self.stream.write(f"\r{message}\x1b[K")
            self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


NULL = Progress(quiet=True)


_VERDICT_COLOURS = {"SAFE": "32", "UNSAFE": "31", "ERROR": "33"}


def use_colour(stream: TextIO, mode: str = "auto") -> bool:
    """--color: 'always', 'never', or 'auto' (only on a terminal, and not with NO_COLOR set)."""
    import os

    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def colour_verdicts(line: str, enabled: bool) -> str:
    """Colour the verdict word (SAFE green, UNSAFE red, ERROR yellow) of a summary line."""
    if not enabled:
        return line
    import re

    return re.sub(r"\b(UNSAFE|SAFE|ERROR)\b",
                  lambda m: f"\x1b[1;{_VERDICT_COLOURS[m.group(1)]}m{m.group(1)}\x1b[0m", line, count=1)
