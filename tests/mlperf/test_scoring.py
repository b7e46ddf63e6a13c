"""Olympic scoring, table-driven against hand-computed values."""

from __future__ import annotations

import pytest

from gpuscale.mlperf.scores import olympic_score


@pytest.mark.parametrize(
    "times, dropped, max_dropped, factor, expected, kept",
    [
        # 5 runs, none dropped: mean of the middle three
        ([5.0, 1.0, 3.0, 2.0, 4.0], 0, 1, 1.0, 3.0, (3, 2, 4)),
        # one run failed: it is the dropped slow run, so only the fastest counted one goes
        ([5.0, 1.0, 3.0, 2.0], 1, 1, 1.0, (2.0 + 3.0 + 5.0) / 3, (3, 2, 0)),
        # scaling factor multiplies the mean
        ([1.0, 2.0, 3.0], 0, 1, 1.5, 3.0, (1,)),
        # too many failures: no score
        ([1.0, 2.0, 3.0], 2, 1, 1.0, None, ()),
        # unet3d-style: drop 4 at each end
        ([float(i) for i in range(1, 41)], 0, 4, 1.0, sum(range(5, 37)) / 32, None),
        # ties keep input order among equals
        ([2.0, 2.0, 2.0], 0, 1, 1.0, 2.0, (1,)),
        # a single run cannot be olympic-averaged
        ([7.0], 0, 1, 1.0, None, ()),
    ],
)
def test_olympic(times, dropped, max_dropped, factor, expected, kept) -> None:
    result = olympic_score(times, dropped, max_dropped_runs=max_dropped, scaling_factor=factor)
    if expected is None:
        assert result.time_to_train_min is None and result.reason
    else:
        assert result.time_to_train_min == pytest.approx(expected, rel=1e-12)
        assert result.reason == ""
    if kept is not None:
        assert result.kept == kept


@pytest.mark.parametrize(
    "values, max_failed, expected",
    [
        ([1.0, 2.0, 3.0, 4.0, 5.0], 1, 3.0),  # drop lowest and highest
        ([1.0, 2.0, 3.0, 4.0, None], 1, 3.0),  # the failed run is the dropped highest
        ([1.0, float("nan"), 3.0, 4.0, 5.0], 1, 4.0),  # NaN cells count as failed
        ([1.0, None, None, 4.0, 5.0], 1, None),  # too many failures
        ([1.0, None, None, 4.0, 5.0], 4, 4.5),  # unet3d-style: converged runs, lowest dropped
        ([1.0, 2.0], 1, None),  # fewer than three runs
    ],
)
def test_olympic_samples(values, max_failed, expected) -> None:
    from gpuscale.mlperf.rcp import olympic_samples

    assert olympic_samples(values, max_failed) == expected


def test_a_score_from_fewer_files_than_required_says_so(tmp_path, golden) -> None:
    """Four of BERT's ten result files: scored as the official tool scores it, with the
    counts and a reason in the row (the official tool is silent)."""
    from gpuscale.mlperf.ingest import read_round

    from .logbuilder import RoundBuilder

    rb = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [10, 11, 12, 13])
    rb.system("Acme", "full").runs("Acme", "full", "bert", [10, 11, 12, 13, 14] * 2)
    tables = read_round(rb.write_dir(tmp_path))
    scores = tables.scores.set_index("system_id")
    short = scores.loc["box"]
    assert short["time_to_train_min"] == short["time_to_train_min"]  # scored
    assert (short["runs"], short["runs_required"]) == (4, 10)
    assert "4 of the 10" in short["score_reason"]
    golden.check(
        "mlperf/score_reasons", "scored from fewer files than required", short["score_reason"]
    )
    assert not scores.loc["full", "score_reason"]
    # its problem is no "no score": the result is scored
    said = tables.problems[tables.problems["path"].str.contains("/box/")]
    assert said["kind"].tolist() == ["fewer runs"], said
    # as the reference of an analysis, its reason is said with it
    from gpuscale.analysis import AnalysisOptions, analyze
    from gpuscale.analysis.terminal import references_text

    (result,) = analyze(tables, ["bert"], AnalysisOptions(reference="Acme/box"))
    assert [r.score_reason for r in result.references] == [short["score_reason"]]
    assert short["score_reason"] in references_text(result)
