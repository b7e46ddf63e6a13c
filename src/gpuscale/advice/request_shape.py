"""A transformer's shape in an advice request (``--preset``, or ``--layers``, ``--hidden``,
``--heads``, ``--seq-len`` and ``--vocab``; ``--checkpointing``): checked where the request
is made, each refusal naming what is wrong, and read as a
:class:`~gpuscale.hardware.transformer.TransformerShape` (the model outside the advice)."""

from __future__ import annotations

from typing import Protocol

from gpuscale.hardware.transformer import CHECKPOINTING, TransformerShape, of_numbers, presets
from gpuscale.quantities import joined
from gpuscale.tables.requests import NamedError, ref, settle_choice

NUMBERS = ("layers", "hidden", "heads", "seq_len")  # a shape given by its numbers


class ShapeOptions(Protocol):
    """The fields of an ``AdviceRequest`` a shape is read from (the request checks them as
    it is made, so this module cannot import it)."""

    @property
    def preset(self) -> str | None: ...
    @property
    def layers(self) -> int | None: ...
    @property
    def hidden(self) -> int | None: ...
    @property
    def heads(self) -> int | None: ...
    @property
    def seq_len(self) -> int | None: ...
    @property
    def vocab(self) -> int | None: ...
    @property
    def checkpointing(self) -> str | None: ...


def check_shape(request: ShapeOptions) -> None:
    """A transformer's shape named (``--preset``, the closest said for a name not known)
    or given whole, a hidden size its heads divide; ``--checkpointing`` only with a shape.
    Settles the preset's and the recomputation's names on ``request`` (a frozen
    dataclass)."""
    if request.preset is not None:
        if not isinstance(request.preset, str):
            raise TypeError(f"preset must be text (a name), not {request.preset!r}")
        settle_choice(request, "preset", tuple(presets()))
        given = [ref(n) for n in ("layers", "hidden", "heads", "vocab") if getattr(request, n)]
        if given:
            raise NamedError(
                f"{ref('preset', request.preset)} with {joined(given)}: the preset is the "
                f"shape; give one or the other ({ref('seq_len')} may change its sequence)"
            )
        learned = presets()[request.preset].positions  # a table of positions: no more
        if learned and request.seq_len is not None and int(request.seq_len) > learned:
            raise NamedError(
                f"{ref('seq_len', int(request.seq_len))} is longer than {request.preset}'s "
                f"{learned:,} learned positions: it has no position past them; give "
                f"{ref('seq_len', learned)} or less"
            )
    given = [n for n in (*NUMBERS, "vocab") if getattr(request, n) is not None]
    if request.preset is None and given:
        missing = [ref(n) for n in NUMBERS if getattr(request, n) is None]
        if missing:
            raise NamedError(
                f"{joined([ref(n) for n in given])} without {joined(missing)}: a "
                "transformer's shape is its layers, hidden size, heads and sequence (or a "
                f"{ref('preset')})"
            )
        hidden, heads = int(request.hidden or 0), int(request.heads or 1)
        if hidden % heads:
            raise NamedError(
                f"{ref('hidden', hidden)} does not divide into {ref('heads', heads)} "
                f"({hidden / heads:.4g} each): each head takes an equal share of the hidden "
                "size"
            )
    if request.checkpointing is not None:
        if shape_of(request) is None:
            raise NamedError(
                f"{ref('checkpointing', request.checkpointing)} without a transformer's shape "
                f"({ref('preset')} or {ref('layers')}): the activations it changes are "
                "counted from the shape"
            )
        settle_choice(request, "checkpointing", CHECKPOINTING)


def shape_of(request: ShapeOptions) -> TransformerShape | None:
    """The shape given: the preset (at ``seq_len`` where given), else the numbers'; None
    where none is."""
    if request.preset is not None:
        found = presets()[request.preset]
        return found.at(int(request.seq_len)) if request.seq_len is not None else found
    if request.layers is None:
        return None
    return of_numbers(
        layers=int(request.layers),
        hidden=int(request.hidden or 0),
        heads=int(request.heads or 0),
        seq_len=int(request.seq_len or 0),
        vocab=int(request.vocab or 0),
    )
