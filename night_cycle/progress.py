"""Progress per stage: a rich bar on stderr when it is a terminal, nothing otherwise."""

from __future__ import annotations

from typing import Any, Protocol


class Progress(Protocol):
    def stage(self, number: int, name: str, total: int | None) -> None: ...

    def advance(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


class NullProgress:
    def stage(self, number: int, name: str, total: int | None) -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None

    def close(self) -> None:
        return None


class RichProgress:
    """One bar per stage, on stderr (stdout stays free for --json)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as Bars

        self.bars: Any = Bars(TextColumn("{task.description}"), BarColumn(),
                              MofNCompleteColumn(), TimeElapsedColumn(),
                              console=Console(stderr=True))
        self.bars.start()
        self.task: Any = None

    def stage(self, number: int, name: str, total: int | None) -> None:
        if self.task is not None:
            self.bars.update(self.task, completed=self.bars.tasks[-1].total or 0)
        self.task = self.bars.add_task(f"stage {number} {name}", total=total or 1)

    def advance(self, n: int = 1) -> None:
        if self.task is not None:
            self.bars.advance(self.task, n)

    def close(self) -> None:
        self.bars.stop()
