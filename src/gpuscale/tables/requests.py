"""JSON for the frozen request dataclasses (``AdviceRequest``, ``BenchConfig``,
``PlanRequest``): written with sorted keys, read back with unknown fields an error (a
runner and a worker of different versions must not silently drop a setting). Pure
Python: the CLI imports the requests at start."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from typing import Any, ClassVar, TypeVar

from gpuscale.tables import json_depth

Request = TypeVar("Request", bound="JsonRequest")


class FieldError(ValueError):
    """A request's field with a value its rule refuses: ``field`` (the Python name),
    ``value`` (as given) and ``rule`` (what it must be). Reads ``invalid steps -5: must be
    a whole number from 1 to 10,000,000``; the CLI says the option instead of the field
    (``--steps -5: must be ...``), one line, never the option's whole help."""

    def __init__(
        self,
        field: str,
        value: object,
        rule: str,
        *,
        more: tuple[tuple[str, object, str], ...] = (),
    ) -> None:
        self.field, self.value, self.rule = field, value, rule
        self.problems = ((field, value, rule), *more)  # every field refused, first first
        super().__init__("; ".join(f"invalid {f} {shown(v)}: {r}" for f, v, r in self.problems))


def shown(value: object) -> str:
    """A value as a person typed it: ``-5``, not ``-5.0``; text as itself."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


class JsonRequest:
    """Mixin of a dataclass: :meth:`to_json` and :meth:`from_json`; ``json_name`` names
    the kind in the error message (``"bench config"``)."""

    __slots__ = ()
    json_name: ClassVar[str] = "request"

    def to_json(self) -> str:
        """The fields as a JSON object (tuples as lists), keys sorted."""
        return json.dumps(asdict(self), sort_keys=True)  # type: ignore[call-overload]

    @classmethod
    def from_json(cls: type[Request], text: str) -> Request:
        """The object :meth:`to_json` wrote; unknown fields are a ``ValueError``."""
        data: dict[str, Any] = json_depth.loads(text)
        unknown = set(data) - {f.name for f in fields(cls)}  # type: ignore[arg-type]
        if unknown:
            raise ValueError(f"unknown {cls.json_name} field(s): {', '.join(sorted(unknown))}")
        return cls(**data)
