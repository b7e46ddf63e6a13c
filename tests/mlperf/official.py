"""Runs MLCommons' own result summarizer (mlperf-logging) over a round, for parity tests.

The official tool is slow (minutes per round), so its output is cached under
``~/.cache/gpuscale-tests`` keyed by the archive's SHA-256 and the mlperf-logging
version; delete the folder (or set GPUSCALE_NO_TEST_CACHE=1) to recompute.
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

CACHE_DIR = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "gpuscale-tests"
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
    return CACHE_DIR / f"official-v3-{archive.name}-{digest}-{version}.pkl"


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
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(pickle.dumps(result))
    return result
