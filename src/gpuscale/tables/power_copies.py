"""Node power logs of one run that are byte-for-byte copies of another node's.

v4.0's Sustainable Metal Cloud multi-node submissions hold pairs of identical
``node_*.txt`` files within a run (8 nodes, 4 distinct files; 64 nodes, 32 to 46). The
official rule sums every file, and gpuscale keeps that energy score exactly MLCommons',
but such an energy rests on fewer nodes' measurements than it counts: the ingest says so
in a ``power log`` problem per result folder, and ``gpuscale energy`` under its table.
"""

from __future__ import annotations

# How a ``power log`` problem about copied node logs ends: what finds it again
COPIES_SUMMED = "the energy sums copies"


def copies_said(copies: int, logs: int) -> str:
    """The problem's message: ``copies`` of a result folder's ``logs`` node power logs
    repeat another node's of the same run byte for byte."""
    return (
        f"{copies:,} of its {logs:,} node power logs repeat another node's of the same run "
        f"byte for byte: {COPIES_SUMMED}"
    )
