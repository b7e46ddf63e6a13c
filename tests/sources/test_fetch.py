"""A round not bundled, fetched by name (``gpuscale.sources.fetch``) from a repository this
test makes and serves locally (a bare git repository over ``file://``, as GitHub serves a
partial clone), never the internet: fetched once with only its systems and results, read
from the cache afterwards, resumed after an interruption, a corrupt download refused."""

from __future__ import annotations

import json
import subprocess
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.mlperf.bundled import bundled_rounds
from gpuscale.mlperf.load import RoundNamesError, named_rounds, published_rounds
from gpuscale.sources import fetch
from gpuscale.sources.fetch import CACHE_ENV, URL_ENV, FetchError, cached, fetch_round
from gpuscale.tables.commands import quoted_path

from ..mlperf.synthetic_rounds import HARDWARE, ruleset_round

pytestmark = pytest.mark.skipif(
    subprocess.run(["git", "--version"], capture_output=True).returncode != 0,
    reason="no git here: fetching a round needs it",
)
# The newest round MLCommons published that gpuscale does not bundle and the synthetic
# rounds cover: one of its benchmarks, and the code beside the results (never fetched)
ROUND = [r for r in published_rounds() if r not in bundled_rounds() and f"{r[1:]}.0" in HARDWARE][
    -1
]
BENCHMARK = "llama2_70b_lora"
CODE = "Acme/benchmarks/llama2_70b_lora/implementations/weights.bin"


def _git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


def serve(parent: Path, name: str = f"training_results_{ROUND}") -> tuple[Path, dict[str, bytes]]:
    """A bare repository ``parent/NAME.git`` of a synthetic round (with code beside its
    results), partial clones allowed as GitHub allows them; and its files."""
    built = ruleset_round(f"{ROUND[1:]}.0", [BENCHMARK]).raw(CODE, b"\0" * 200_000)
    tree = built.write_dir(parent)  # parent/training_results_vX.Y
    _git("init", "-q", "-b", "main", cwd=tree)
    _git("add", "-A", cwd=tree)
    _git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "round", cwd=tree)
    bare = parent / f"{name}.git"
    _git("clone", "-q", "--bare", "--no-local", str(tree), str(bare), cwd=parent)
    for key in ("uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"):
        _git("config", key, "true", cwd=bare)
    return bare, built.files


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The served round's files; the cache (a folder with a space in its name) and the
    URL pattern point at this test's."""
    _, files = serve(tmp_path / "server")
    monkeypatch.setenv(URL_ENV, f"file://{tmp_path}/server/training_results_{{round}}.git")
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "my cache"))
    return files


def _fetched_files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and p.name != fetch.MANIFEST
    }


def test_a_round_is_fetched_reported_and_then_read_from_the_cache(
    served: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    out = tmp_path / "the report"
    first = runner.invoke(app, ["report", "--round", ROUND, "-b", BENCHMARK, "--out", str(out)])
    assert first.exit_code == 0, first.output
    folder = tmp_path / "my cache" / f"training_results_{ROUND}"
    assert f"note: round {ROUND} fetched from file://" in first.stderr
    assert f"into '{folder}'; read from there from now on" in first.stderr
    assert (out / "index.html").is_file()
    wanted = {k: v for k, v in served.items() if k != CODE}
    assert _fetched_files(folder) == wanted  # the systems and results, not the code
    manifest = json.loads((folder / fetch.MANIFEST).read_text())
    assert (
        manifest["commit"]
        == _git("rev-parse", "HEAD", cwd=tmp_path / "server" / f"training_results_{ROUND}").strip()
    )
    # run again with the repository gone: read from the cache, said so
    monkeypatch.setenv(URL_ENV, f"file://{tmp_path}/nowhere/training_results_{{round}}.git")
    again = runner.invoke(app, ["report", "--round", ROUND, "-b", BENCHMARK, "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert f"note: round {ROUND} read from the cache: '{folder}' (from file://" in again.stderr
    assert first.stdout.splitlines()[1:] == again.stdout.splitlines()[1:]  # the same answer
    offline = runner.invoke(app, ["scores", "--round", ROUND, "--offline", "-f", "json"])
    assert offline.exit_code == 0, offline.output
    assert {r["round"] for r in json.loads(offline.stdout)} == {ROUND}


def test_an_interrupted_fetch_goes_on_from_what_it_kept(
    served: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        fetch, "_sources", lambda: {"folders": ["systems", "results"], "batch_files": 10}
    )
    cache = tmp_path / "my cache"
    seen: list[tuple[int, int]] = []

    def stop_after_two_batches(done: int, total: int, unit: str) -> None:
        seen.append((done, total))
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fetch_round(ROUND, cache=cache, progress=stop_after_two_batches)
    assert cached(ROUND, cache) is None  # nothing half-written is read
    with pytest.raises(RoundNamesError, match="nor in the cache"):
        named_rounds([ROUND], offline=True)
    kept = seen[-1][0]
    assert 0 < kept < seen[-1][1]
    resumed: list[int] = []
    got = fetch_round(ROUND, cache=cache, progress=lambda done, total, unit: resumed.append(done))
    assert resumed[0] == kept  # the batches fetched before are not fetched again
    assert got.fetched_now and _fetched_files(got.path) == {
        k: v for k, v in served.items() if k != CODE
    }


def _corrupt(bare: Path, path: str) -> None:
    """Replace the object of ``path`` in ``bare`` by another file's content, kept under the
    first one's id (what a damaged disk or a lying server sends)."""
    oid = _git("rev-parse", f"HEAD:{path}", cwd=bare).strip()
    for pack in (bare / "objects" / "pack").glob("*.pack"):  # loose objects, one a file
        moved = pack.with_suffix(".moved")
        pack.rename(moved)
        (pack.with_suffix(".idx")).unlink()
        subprocess.run(
            ["git", "unpack-objects", "-q"], cwd=bare, stdin=moved.open("rb"), check=True
        )
        moved.unlink()
    loose = bare / "objects" / oid[:2] / oid[2:]
    body = b"not the result file\n"
    loose.chmod(0o644)
    loose.write_bytes(zlib.compress(b"blob %d\0" % len(body) + body))


def test_a_corrupt_download_is_refused_and_nothing_of_it_read(
    served: dict[str, bytes], tmp_path: Path
) -> None:
    result = next(k for k in served if k.endswith("result_0.txt"))
    _corrupt(tmp_path / "server" / f"training_results_{ROUND}.git", result)
    done = CliRunner().invoke(app, ["scores", "--round", ROUND])
    assert done.exit_code == 2
    assert done.stderr.startswith(f"error: refused round {ROUND} from file://")
    assert "does not match the ids of the round's files" in done.stderr
    assert cached(ROUND, tmp_path / "my cache") is None
    assert not (tmp_path / "my cache" / f"training_results_{ROUND}").exists()


def test_a_round_that_is_none_is_refused_before_any_fetch(served, tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["scores", "--round", f"{ROUND}1"])
    assert done.exit_code == 2
    said = f"not bundled, nor a round gpuscale fetches by name (did you mean '{ROUND}'?)"
    assert said in done.stderr
    assert not (tmp_path / "my cache").exists()


def test_offline_never_fetches(served, tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["analyze", "--round", ROUND, "--offline"])
    assert done.exit_code == 2
    assert "--offline fetches nothing" in done.stderr
    assert "offline=" not in done.stderr  # Python's keyword, not the command line's
    assert f"training_results_{ROUND}.git" in done.stderr  # where it would come from
    assert not (tmp_path / "my cache").exists()


def test_no_repository_there_is_said_with_what_was_kept(tmp_path: Path) -> None:
    url = f"file://{tmp_path}/none/training_results_{ROUND}.git"
    with pytest.raises(FetchError, match=rf"cannot fetch round {ROUND} from {url} \(git: ") as no:
        fetch_round(ROUND, cache=tmp_path / "cache", url=url)
    assert cached(ROUND, tmp_path / "cache") is None
    # the way out where the network or the repository cannot be reached (it said none)
    assert str(no.value).endswith(
        "a clone or download of the repository, made where it can be reached, is read as a path"
    )


def test_a_cache_that_cannot_be_made_says_why_and_what_to_set(tmp_path: Path) -> None:
    """A cache folder under a file (or on a read-only disk) is said in words a user can
    act on, with the variable that moves it; it said the system's bare "Not a directory"."""
    (tmp_path / "notes.txt").write_text("mine")
    cache = tmp_path / "notes.txt" / "rounds"
    with pytest.raises(FetchError) as refused:
        fetch_round(ROUND, cache=cache, url="file:///nowhere")
    said = str(refused.value)
    assert f"{quoted_path(tmp_path / 'notes.txt')} is a file, not a folder" in said
    assert f"set {CACHE_ENV} to a folder where you can write" in said
    assert "Not a directory" not in said


def test_without_git_the_message_says_what_to_do(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(fetch.shutil, "which", lambda name: None)
    with pytest.raises(FetchError, match="fetching it needs git: install git, or download"):
        fetch_round(ROUND, cache=tmp_path, url="file:///nowhere")


def test_load_round_in_python_fetches_a_round_as_the_cli_does(
    served: dict[str, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``gpuscale.load_round(name)`` reads a round not bundled as ``--round`` does (the
    CLI's own function, ``named_rounds``): fetched into the cache once, read from there
    afterwards (``offline=True`` too), printing nothing; offline, a round not in the cache
    is refused as the CLI refuses it."""
    import gpuscale

    tables = gpuscale.load_round(ROUND)
    assert set(tables.scores["round"]) == {ROUND} and BENCHMARK in set(tables.scores["workload"])
    assert cached(ROUND, tmp_path / "my cache") is not None
    again = gpuscale.load_round(ROUND.upper(), offline=True)  # from the cache, as typed
    assert again.scores.equals(tables.scores)
    both = gpuscale.load_round(ROUND, bundled_rounds()[-1], offline=True)
    assert set(both.scores["round"]) == {ROUND, bundled_rounds()[-1]}
    assert capsys.readouterr() == ("", "")  # a library prints nothing
    missing = next(r for r in published_rounds() if r not in bundled_rounds() and r != ROUND)
    with pytest.raises(RoundNamesError, match=r"and offline=True fetches nothing"):
        gpuscale.load_round(missing, offline=True)
    with pytest.raises(TypeError, match="rounds must be round names"):
        gpuscale.load_round(None)  # type: ignore[arg-type]
