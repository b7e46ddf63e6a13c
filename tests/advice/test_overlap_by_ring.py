"""The overlap assumed per count where a node's first GPUs ring over a faster link than the
whole node's (a 4-GPU matrix where only GPU0-GPU1 share NVLink): 2 devices take NVLink's
prior (1), 4 PHB's (0.5, gradients through host memory); the record says each count's."""

from __future__ import annotations

from pathlib import Path

import gpuscale
from gpuscale.advice.types import TermId

from ..interconnect.test_ring_link import PAIR_01, V100


def test_the_overlap_is_each_counts_where_the_rings_differ(tmp_path: Path) -> None:
    (tmp_path / "topo.txt").write_text(PAIR_01)
    advice = gpuscale.advise(
        params=350e6, step_ms=120, batch=16, topo=str(tmp_path / "topo.txt"), device_name=V100
    )
    (overlap,) = [a for a in advice.assumptions if a.term == TermId.OVERLAP]
    assert overlap.quantity.value == 0.5 and dict(overlap.quantity.at) == {1: 0.5, 2: 1.0, 4: 0.5}
    said = overlap.value
    assert (said["case"], said["ring_counts"], said["ring_overlaps"]) == ("rings", (2,), (1.0,))
    rows = advice.table.set_index("accelerators")
    # 2 devices hide all but the last bucket (NVLink's 1); 4 hide half (PHB's 0.5)
    assert rows.loc[2, "exposed_comm_ms"] < 0.2 * rows.loc[2, "comm_ms"]
    assert rows.loc[4, "exposed_comm_ms"] > 0.4 * rows.loc[4, "comm_ms"]
