"""MLCommons' own result summarizer (mlperf-logging) over a round, for parity tests.

The tests never run the official tool. Its scores are stored in ``../shared/mlperf/official/``
(``official_scores_vX.Y.csv``: each score's time to train only); the detailed summary the
global batch, samples-to-converge and energy comparisons need comes from, in this order:

1. ``official_detail_vX.Y.csv`` in that folder (``submitter, system_id, benchmark, gbs,
   samples, energy``; ``# note:`` lines for what the tool needed help with), where someone
   wrote it (``python -m tests.mlperf.official ARCHIVE --csv DIR``);
2. the cache ``official_scores`` keeps under ``$XDG_CACHE_HOME/gpuscale-tests`` (the user's,
   never the test session's temporary one), keyed by the archive's SHA-256 and the
   mlperf-logging version (``python -m tests.mlperf.official ARCHIVE`` fills it: the tool on
   a temporary copy, minutes per round; GPUSCALE_NO_TEST_CACHE=1 ignores it).

Without either the detail tests skip, saying so.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import multiprocessing
import os
import pickle
import tarfile
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

SHARED_OFFICIAL = Path(__file__).resolve().parents[3] / "shared" / "mlperf" / "official"
# tests/conftest.py moves XDG_CACHE_HOME to a temporary folder for the session (what
# gpuscale caches); this cache outlives sessions, so the user's is kept aside for it.
USER_CACHE_HOME = "GPUSCALE_TESTS_CACHE_HOME"
DETAIL = ("gbs", "samples", "energy")  # the detailed summary's columns the tests compare


def cache_dir() -> Path:
    """Where the official tool's detailed output is cached: the user's cache folder."""
    home = os.environ.get(USER_CACHE_HOME) or os.environ.get("XDG_CACHE_HOME")
    return Path(home or Path.home() / ".cache") / "gpuscale-tests"


_SYSTEM_COLUMNS = {
    "division",
    "availability",
    "submitter",
    "system",
    "number_of_nodes",
    "host_processor_model_name",
    "host_processors_count",
    "accelerator_model_name",
    "accelerators_count",
    "framework",
    "notes",
    "private_id",
    "details_url",
    "code_url",
}


def _summarize_org(task: tuple[str, str]) -> tuple[str, list[dict[str, Any]], str]:
    """Official rows of one organisation folder, and a note when the tool had to be helped."""
    from mlperf_logging.result_summarizer import result_summarizer as rs

    org_folder, ruleset = task
    note = ""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            strong, _, detailed, _ = rs.summarize_results(org_folder, "training", ruleset)
        except ZeroDivisionError as exc:
            # The tool crashes computing energy on some power submissions (issue noted in
            # the README); time-to-train does not depend on power, so score without it.
            note = f"official summarizer crashed computing power ({exc!r}); rerun without power"
            original = rs._has_power
            rs._has_power = lambda folder: False
            try:
                strong, _, detailed, _ = rs.summarize_results(org_folder, "training", ruleset)
            finally:
                rs._has_power = original
    rows = []
    detailed_by_url = (
        {r["details_url"]: r for r in detailed.to_dict("records")} if len(detailed) else {}
    )
    for row in strong.to_dict("records"):
        row["_detailed"] = detailed_by_url.get(row["details_url"], {})
        rows.append(row)
    return org_folder, rows, note


def _cache_path(archive: Path) -> Path:
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    version = metadata.version("mlperf-logging")
    return cache_dir() / f"official-v3-{archive.name}-{digest}-{version}.pkl"


def stored_detail(round_name: str, folder: Path = SHARED_OFFICIAL) -> Any:
    """The official detailed summary of a round as ``official_detail_vX.Y.csv`` in
    ``folder`` holds it (the shape of :func:`official_scores`), or None without one."""
    import pandas as pd

    path = folder / f"official_detail_{round_name}.csv"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8").splitlines()
    notes = [line.removeprefix("# note: ") for line in text if line.startswith("# note: ")]
    frame = pd.read_csv(path, comment="#", dtype={"submitter": str, "system_id": str})
    scores = {
        (r["submitter"], r["system_id"], r["benchmark"]): {
            name: None if pd.isna(r[name]) else float(r[name]) for name in DETAIL
        }
        for r in frame.to_dict("records")
    }
    return scores, notes


def write_detail(round_name: str, archive: Path, folder: Path) -> Path:
    """Write :func:`official_scores` of ``archive`` as ``folder/official_detail_vX.Y.csv``
    (runs the official tool unless cached)."""
    import pandas as pd

    scores, notes = official_scores(archive)
    rows = [
        {"submitter": org, "system_id": system_id, "benchmark": benchmark}
        | {n: value.get(n) for n in DETAIL}
        for (org, system_id, benchmark), value in sorted(scores.items())
    ]
    path = folder / f"official_detail_{round_name}.csv"
    with path.open("w", encoding="utf-8") as handle:
        handle.writelines(f"# note: {note}\n" for note in notes)
        pd.DataFrame(rows).to_csv(handle, index=False, float_format="%.17g")
    return path


def cached_official_scores(archive: Path) -> Any:
    """What :func:`official_scores` computed before for this archive, or None (the tool is
    never run by the tests themselves)."""
    cache = _cache_path(archive)
    if cache.exists() and not os.environ.get("GPUSCALE_NO_TEST_CACHE"):
        return pickle.loads(cache.read_bytes())
    return None


def official_scores(archive: Path) -> tuple[dict[tuple[str, str, str], dict[str, Any]], list[str]]:
    """{(org, system_id, benchmark): {"score", "gbs", "samples"}} from the official tool."""
    cache = _cache_path(archive)
    if cache.exists() and not os.environ.get("GPUSCALE_NO_TEST_CACHE"):
        return pickle.loads(cache.read_bytes())
    ruleset = archive.name.split("_v")[1].split(".tar")[0] + ".0"
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        root = next(Path(tmp).iterdir())
        orgs = sorted(
            str(p) for p in root.iterdir() if (p / "systems").is_dir() and (p / "results").is_dir()
        )
        with multiprocessing.get_context("fork").Pool(2) as pool:
            results = pool.map(_summarize_org, [(o, ruleset) for o in orgs], chunksize=1)
    scores: dict[tuple[str, str, str], dict[str, Any]] = {}
    notes = []
    for org_folder, rows, note in results:
        org = Path(org_folder).name
        if note:
            notes.append(f"{org}: {note}")
        for row in rows:
            system_id = row["details_url"].rsplit("/", 1)[1][: -len(".json")]
            for column, value in row.items():
                if column in _SYSTEM_COLUMNS or column == "_detailed":
                    continue
                detailed = row["_detailed"]
                scores[(org, system_id, column)] = {
                    "score": value,
                    "gbs": detailed.get(f"{column}:GBS"),
                    "samples": detailed.get(f"{column}:samples_to_converge"),
                    "energy": detailed.get(f"{column}:Energy"),
                }
    result = (scores, notes)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(pickle.dumps(result))
    return result


def main(argv: list[str] | None = None) -> None:
    """``python -m tests.mlperf.official ARCHIVE... [--csv DIR]``: run the official tool
    over each round archive once (a temporary copy), caching its detailed summary, and with
    ``--csv`` write ``official_detail_vX.Y.csv`` into DIR too."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.mlperf.official")
    parser.add_argument("archives", nargs="+", type=Path)
    parser.add_argument("--csv", type=Path, default=None)
    args = parser.parse_args(argv)
    for archive in args.archives:
        round_name = "v" + archive.name.split("_v")[1].split(".tar")[0]
        if args.csv:
            print(write_detail(round_name, archive, args.csv))
        else:
            official_scores(archive)
            print(f"{round_name}: cached in {_cache_path(archive)}")


if __name__ == "__main__":
    main()
