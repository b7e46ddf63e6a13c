"""A count withheld, in words: the assumed term whose range moves it (``UNGIVEN``: why it
is not known), what settles it (``SETTLE``: the option to give or the measurement to
make) and the term's value at one end of its range (``value_text``); the answer's lines
and the caveats say them alike."""

from __future__ import annotations

from gpuscale.advice.types import Reading
from gpuscale.quantities import format_count, format_ms, number

# Each term that can withhold a count, and why it is not known.
UNGIVEN = {
    "flops_per_sample": "the FLOPs per sample, not given",
    "fixed_cost": "the fixed per-step cost, not measured",
    "link": "the link, not given",
}
# What settles each term, as the option to give or the measurement to make.
SETTLE = {
    "flops_per_sample": "give --flops-per-sample (count it with "
    "torch.utils.flop_counter.FlopCounterMode over one forward and backward, / batch)",
    "fixed_cost": "measure the fixed cost: a second step time (--step-ms T --batch B at "
    "another batch), or gpuscale bench --model FILE.py:FACTORY --nproc 1",
    "link": "give --interconnect (or run gpuscale topo / collectives on the host)",
}


def value_text(r: Reading) -> str:
    """The term's value at one end, with what it is."""
    if r.unit == "ms":
        return f"a fixed cost of {format_ms(r.value)}"
    if r.unit == "FLOPs":
        return f"{format_count(r.value)} FLOPs per sample (6 x parameters, a token's)"
    return f"a link of {number(r.value)} GB/s"
