"""The MCP tools' structured arguments: plan entries, commands and files (the outputs' schemas
are the result types' own: core/shape.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class NewPlanEntry(BaseModel):
    item: str
    status: Literal["pending", "in_progress", "done", "blocked"] = "pending"

    def as_item(self):
        """The plan item the service takes."""
        from gitckpt.engine.notes import PlanItem

        return PlanItem(self.item, self.status or "pending")


class PlanEntry(NewPlanEntry):
    item: str = Field(description="Its text.")
    add: bool = Field(False, description="New (else the text must match).")


class CommandIn(BaseModel):
    command: str
    exit_code: int
    note: str | None = None
    duration_s: float | None = None


class FileIn(BaseModel):
    path: str
    note: str = ""
