"""Codes shared by every table: string enums stored as their values."""

from __future__ import annotations

from enum import Enum


class Code(str, Enum):
    """A string enum: members compare equal to (and are stored in tables as) their value."""

    def __str__(self) -> str:
        return str(self.value)
