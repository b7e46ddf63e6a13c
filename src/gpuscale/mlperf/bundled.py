"""The rounds shipped with gpuscale, distilled by its own ingest from the raw results.

``load_round("v4.1")`` reads the compact Parquet tables in ``gpuscale/data`` (no raw
logs needed). ``python -m gpuscale.mlperf.bundled DIR`` rebuilds them from the
``training_results_v*.tar.xz`` archives in DIR (e.g. ``../shared/mlperf``).
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

import pandas as pd

from gpuscale.mlperf.ingest import RoundTables, read_rounds
from gpuscale.mlperf.sources import normalise_round

TABLES = ("systems", "runs", "scores", "problems")
DATA_DIR = Path(str(resources.files("gpuscale") / "data"))


def bundled_rounds() -> list[str]:
    """The rounds shipped with the package, oldest first."""
    path = DATA_DIR / "scores.parquet"
    if not path.exists():
        return []
    rounds = pd.read_parquet(path, columns=["round"])["round"].unique().tolist()
    return sorted(rounds, key=lambda r: tuple(int(x) for x in r[1:].split(".")))


def load_round(*rounds: str) -> RoundTables:
    """The bundled tables of the given rounds (all bundled rounds when none given).

    Raises ``KeyError`` naming the bundled rounds when one is not bundled.
    """
    available = bundled_rounds()
    wanted = [normalise_round(r) for r in rounds] or available
    missing = [r for r in wanted if r not in available]
    if missing:
        raise KeyError(
            f"round(s) {', '.join(missing)} not bundled; bundled: "
            f"{', '.join(available) or 'none'} (ingest raw results with "
            "`gpuscale ingest PATH`)"
        )
    frames = {}
    for name in TABLES:
        table = pd.read_parquet(DATA_DIR / f"{name}.parquet")
        frames[name] = table[table["round"].isin(wanted)].reset_index(drop=True)
    return RoundTables(**frames)


def write_tables(tables: RoundTables, out_dir: Path, *, csv: bool = True) -> list[Path]:
    """Write the four tables as Parquet (and CSV) files into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name in TABLES:
        frame: pd.DataFrame = getattr(tables, name)
        path = out_dir / f"{name}.parquet"
        frame.to_parquet(path, index=False, compression="zstd")
        written.append(path)
        if csv:
            frame.to_csv(out_dir / f"{name}.csv", index=False)
            written.append(out_dir / f"{name}.csv")
    return written


def rebuild(source_dir: Path, out_dir: Path = DATA_DIR) -> RoundTables:
    """Re-distil every ``training_results_v*`` archive of ``source_dir`` into ``out_dir``."""
    archives = sorted(source_dir.glob("training_results_v*.tar*"))
    if not archives:
        raise FileNotFoundError(f"no training_results_v*.tar* archives in {source_dir}")
    tables = read_rounds(archives)
    write_tables(tables, out_dir, csv=False)
    return tables


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/mlperf")
    result = rebuild(source)
    print(
        f"bundled {result.scores['round'].nunique()} rounds: {len(result.systems)} systems,"
        f" {len(result.runs)} runs, {len(result.scores)} scores into {DATA_DIR}"
    )
