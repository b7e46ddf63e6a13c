"""The model ladder, user models and sizes."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpuscale.bench.models import (  # noqa: E402
    BY_NAME,
    LADDER,
    BenchModel,
    ModelError,
    first_batch,
    load_model,
    parameter_count,
    select_models,
    sort_models,
)
from gpuscale.bench.steps import count_flops  # noqa: E402

from ..golden import Golden  # noqa: E402

VIEW = "bench/model_refusals"


def test_ladder_spans_the_range_in_three_families() -> None:
    sizes = [parameter_count(s.name) for s in LADDER]
    assert {s.family for s in LADDER} == {"mlp", "transformer", "cnn"}
    assert min(sizes) <= 300_000 and max(sizes) >= 300_000_000


@pytest.mark.parametrize("name", ["mlp-0.2m", "tf-1.5m", "cnn-0.3m"])
def test_counts_are_computed_from_the_module(name: str) -> None:
    bench = load_model(name)
    assert parameter_count(name) == sum(p.numel() for p in bench.module.parameters())
    x, y = bench.make_batch(2, torch.device("cpu"))
    assert bench.forward_loss(bench.module, (x, y)).dim() == 0


def test_flops_per_parameter_differ_by_family_as_in_real_models() -> None:
    ratio, conv = {}, {}
    for name in ("mlp-1m", "tf-1.5m", "cnn-1.2m"):
        bench = load_model(name)
        flops, uncounted, conv_flops = count_flops(
            bench, bench.make_batch(2, torch.device("cpu")), 2
        )
        assert flops is not None and uncounted == ()
        ratio[name], conv[name] = flops / parameter_count(name), conv_flops / flops
    # the convolutions' share (TF32 by default on a GPU, so their peak is TF32's)
    assert conv["mlp-1m"] == conv["tf-1.5m"] == 0
    assert 0.5 < conv["cnn-1.2m"] <= 1
    # An MLP: 2 FLOPs per weight forward, 2 for its gradient and 2 for the input's
    # gradient, which the first layer does not need: 6 sum(W) - 2 W_first per sample.
    weights = [m.weight.numel() for m in load_model("mlp-1m").module if hasattr(m, "weight")]
    expected = (6 * sum(weights) - 2 * weights[0]) / parameter_count("mlp-1m")
    assert ratio["mlp-1m"] == pytest.approx(expected, rel=1e-9)
    assert ratio["cnn-1.2m"] > 100 * ratio["mlp-1m"]
    assert ratio["mlp-1m"] < ratio["tf-1.5m"] < ratio["cnn-1.2m"]


def _tiny_factory():
    module = torch.nn.Sequential(torch.nn.Linear(4, 3))

    def make_batch(size, device):
        return torch.randn(size, 4, device=device), torch.randint(0, 3, (size,), device=device)

    return module, make_batch


def test_a_user_model_from_a_factory(monkeypatch: pytest.MonkeyPatch, golden: Golden) -> None:
    package = types.ModuleType("usermodels")
    package.make = _tiny_factory
    package.bad = lambda: "not a model"
    monkeypatch.setitem(sys.modules, "usermodels", package)
    bench = load_model("usermodels:make")
    assert isinstance(bench, BenchModel) and parameter_count("usermodels:make") == 15
    assert [n for n, _ in select_models(["usermodels:make"])] == ["usermodels:make"]
    with pytest.raises(ModelError, match="BenchModel") as refused:
        load_model("usermodels:bad")
    golden.check(VIEW, "a factory returning a string", str(refused.value))
    with pytest.raises(ModelError, match="cannot import"):
        load_model("no_such_package_here:make")
    # the module alone: what to return instead, with make_batch's call
    package.alone = lambda: _tiny_factory()[0]
    with pytest.raises(ModelError) as alone:
        load_model("usermodels:alone")
    golden.check(VIEW, "a factory returning its module alone", str(alone.value))


TINY_FILE = """
import torch

def make():
    module = torch.nn.Sequential(torch.nn.Linear(4, 3))
    return module, lambda n, d: (torch.randn(n, 4), torch.randint(0, 3, (n,)))
"""


def test_a_user_model_from_the_current_directory_or_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden: Golden
) -> None:
    """As with ``python -m``: a module in the current directory imports though the
    directory is not on sys.path (the console script's); a FILE.py path, relative or
    absolute, loads that file."""
    module = "gpuscale_test_cwd_model"
    (tmp_path / f"{module}.py").write_text(TINY_FILE)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "tiny.py").write_text(TINY_FILE)
    monkeypatch.chdir(tmp_path)
    here = {"", ".", str(tmp_path)}
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in here])
    try:
        assert parameter_count(f"{module}:make") == 15
        tiny = "sub/tiny.py"
        assert parameter_count(f"{tiny}:make") == 15
        assert parameter_count(f"{tmp_path}/{tiny}:make") == 15
    finally:
        sys.modules.pop(module, None)
    with pytest.raises(ModelError, match=r"'sub/none\.py'") as missing:
        load_model("sub/none.py:make")
    said = str(missing.value)
    golden.check(VIEW, "a file that is not there", said, paths={str(tmp_path): "<tmp>"})
    # a mistyped factory names the file as typed and what it offers, never the internal
    # module name the file was loaded under
    with pytest.raises(ModelError, match="'mkae'") as typo:
        load_model("sub/tiny.py:mkae")
    assert "gpuscale_user" not in str(typo.value) and "sub/tiny.py" in str(typo.value)
    golden.check(VIEW, "a factory mistyped in a file", str(typo.value))


@pytest.mark.parametrize(
    ("package", "spec", "closest"),
    [
        ("torchvision.models", "torchvision:resnet5", "resnet50"),
        ("timm", "timm:vit_tiny", "vit_tiny_patch16_224"),
    ],
)
def test_a_packaged_model_mistyped_gets_the_closest(
    monkeypatch: pytest.MonkeyPatch, package: str, spec: str, closest: str, golden: Golden
) -> None:
    """torchvision and timm list their models (``list_models``): a name they lack is
    refused with the closest before anything is built."""
    fake = types.ModuleType(package)
    fake.list_models = lambda: ["resnet18", "resnet50", "vit_tiny_patch16_224"]
    fake.get_model = fake.create_model = lambda *a, **k: pytest.fail("built a model it lacks")
    monkeypatch.setitem(sys.modules, package, fake)
    with pytest.raises(ModelError) as refused:
        load_model(spec)
    said = str(refused.value)
    assert f"'{spec.split(':')[1]}'" in said and f"'{closest}'" in said  # typed, closest
    golden.check(VIEW, f"a packaged model mistyped: {spec}", said)


CHECKPOINT = "checkpoint /nope not found"  # the user's factory's own error


def _raises():
    raise RuntimeError(CHECKPOINT)


def test_a_broken_user_factory_is_reported_and_the_others_kept(
    monkeypatch: pytest.MonkeyPatch, golden: Golden
) -> None:
    package = types.ModuleType("usermodels")
    package.make, package.broken, package.wrong = _tiny_factory, _raises, lambda: 42
    monkeypatch.setitem(sys.modules, "usermodels", package)
    names = ["usermodels:make", "usermodels:broken", "usermodels:wrong", "nopkg_here:make"]
    chosen, broken = sort_models(names)
    assert chosen == [("usermodels:make", 15)]
    why = {name: str(error) for name, error in broken}  # ModelErrors: status and message
    assert {error.status for _, error in broken} == {"error"}
    # the factory's own error, its type and message, said whole
    assert why["usermodels:broken"].endswith(f"RuntimeError: {CHECKPOINT}")
    golden.check(VIEW, "factories that raise, return an int, do not import", str(why))
    assert "returned int" in why["usermodels:wrong"] and "cannot import" in why["nopkg_here:make"]
    with pytest.raises(ModelError, match="raised RuntimeError"):
        select_models(["usermodels:broken"])


def _needs_a_size(hidden):
    return _tiny_factory()


def _batch_of_one_argument():
    return torch.nn.Linear(4, 3), lambda size: (torch.randn(size, 4), torch.zeros(size))


def _loss_not_a_function():
    module, make_batch = _tiny_factory()
    return module, make_batch, "cross_entropy"


def _loss_as_a_module():
    module, make_batch = _tiny_factory()
    return module, make_batch, torch.nn.CrossEntropyLoss()


@pytest.mark.parametrize(
    ("factory", "named", "has"),
    [
        ("needs_a_size", "needs_a_size takes (hidden)", "FACTORY() (no arguments)"),
        ("one_argument", "its make_batch takes (size)", "make_batch(batch_size, device)"),
        ("loss_a_string", "its loss is str", "loss(output, targets)"),
    ],
)
def test_a_user_callable_of_the_wrong_signature_is_refused_before_it_runs(
    monkeypatch: pytest.MonkeyPatch, golden: Golden, factory: str, named: str, has: str
) -> None:
    """A factory that takes arguments, a make_batch or loss that cannot be called as
    gpuscale calls them: one message, before any rank starts, naming the callable, its
    parameters and the call gpuscale makes; a loss given as a module is a callable of two
    arguments and builds."""
    package = types.ModuleType("usermodels")
    package.needs_a_size, package.one_argument = _needs_a_size, _batch_of_one_argument
    package.loss_a_string, package.loss_module = _loss_not_a_function, _loss_as_a_module
    monkeypatch.setitem(sys.modules, "usermodels", package)
    with pytest.raises(ModelError) as refused:
        load_model(f"usermodels:{factory}")
    said = str(refused.value)
    assert said.startswith(f"usermodels:{factory}: {named}") and has in said
    golden.check(VIEW, f"a callable of the wrong signature: {factory}", said)
    assert isinstance(load_model("usermodels:loss_module").loss, torch.nn.CrossEntropyLoss)


def test_torchvision_only_where_installed() -> None:
    pytest.importorskip("torchvision")
    assert parameter_count("torchvision:resnet18") > 10_000_000


def test_select_models() -> None:
    chosen = select_models(max_params="2M")
    assert [n for n, _ in chosen] == ["mlp-0.2m", "cnn-0.3m", "mlp-1m", "cnn-1.2m", "tf-1.5m"]
    assert set(BY_NAME) >= {n for n, _ in chosen}
    with pytest.raises(ModelError, match="unknown model"):
        select_models(["resnet-9000"])


def test_an_unknown_ladder_name_is_refused_as_its_option_and_value() -> None:
    """`bench --models mlp-0.2` said "error: unknown model 'mlp-0.2' ...", unlike every
    other refused value ("error: --backend glooo: must be one of ...")."""
    with pytest.raises(ModelError) as refused:
        sort_models(["mlp-0.2"])
    said = str(refused.value)
    assert said.startswith("--models mlp-0.2: unknown model (did you mean 'mlp-0.2m'?); ")


def test_a_refused_model_names_the_option_it_was_given_with(tmp_path) -> None:
    """`bench --model mlp-9m` (or `--model nofile.py:make`) was refused as "--models ...",
    an option the user never typed: each name's refusal names its own option."""
    from gpuscale.bench.ladder_names import checked_names
    from gpuscale.bench.sweep_request import SweepRequest

    out = tmp_path / "results.jsonl"
    request = SweepRequest(out=out, models="mlp-0.2m,cnn-0.3m", model=("mlp-9m",))
    assert request.model_options() == ["--models", "--models", "--model"]
    with pytest.raises(ModelError) as refused:
        checked_names(request.model_names(), request.model_options())
    assert str(refused.value).startswith("--model mlp-9m: unknown model")


@pytest.mark.parametrize("typo", ["mlp-02m", "MLP-0.2m", "mlp0.2m"])
def test_a_ladder_typo_gets_the_closest_name(typo: str) -> None:
    """A typo gets the closest name; another case or punctuation is the name itself, as
    the command line reads it (``--models MLP-0.2m``; the workers get the ladder's)."""
    if typo == "mlp-02m":
        with pytest.raises(ModelError, match=r"'mlp-0\.2m'"):
            sort_models([typo])
    else:
        assert [n for n, _ in sort_models([typo])[0]] == ["mlp-0.2m"]
    with pytest.raises(ModelError, match=r"'mlp-0\.2m'"):
        load_model(typo)


@pytest.mark.parametrize(
    "spec, why",
    [
        ("mymodel.py:", "nothing after the colon"),
        (":make", "nothing before the colon"),
        ("my model:make", "neither a FILE.py nor a module"),
        ("mymodel.py:make:more", "not a Python name"),
        (".py:make", "no file name before .py"),
        ("timm:", "no timm model name"),
    ],
)
def test_a_malformed_spec_is_refused_before_anything_is_built(
    spec: str, why: str, golden: Golden
) -> None:
    with pytest.raises(ModelError) as refused:
        sort_models([spec], count=lambda name: pytest.fail(f"{name} was built"))
    said = str(refused.value)
    assert repr(spec) in said and why in said
    assert "PKG.MODULE:FACTORY" in said and "\n" not in said  # the forms expected, one line
    golden.check(VIEW, f"a malformed spec: {spec}", said)


def test_the_cli_writes_no_row_for_a_malformed_spec(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gpuscale.cli import app

    out = tmp_path / "results.jsonl"
    args = ["bench", "--backend", "gloo", "--nproc", "1", "--out", str(out)]
    for spec in ("mymodel.py:", ":make"):
        result = CliRunner().invoke(app, [*args, "--model", spec])
        assert result.exit_code == 2, result.output
        assert f"model {spec!r}" in " ".join(result.output.split())
    assert not out.exists()


@pytest.mark.parametrize(
    "made, said",
    [
        (lambda size, device: torch.randn(size, 4), "returned Tensor, not (inputs, targets)"),
        (lambda size, device: (torch.randn(size, 4),), "returned 1 value, not (inputs"),
    ],
)
def test_a_batch_that_is_no_inputs_and_targets_names_make_batch(made, said: str) -> None:
    """A bare tensor from make_batch is refused naming make_batch and the model, not as
    "too many values to unpack (expected 2)"."""
    bench = BenchModel(torch.nn.Linear(4, 2), made)
    spec = "mine.py:make"
    with pytest.raises(ModelError) as refused:
        first_batch(bench, spec, 8, torch.device("cpu"))
    # the model and make_batch named, and what it returned
    assert str(refused.value).startswith(f"{spec}: make_batch(8") and said in str(refused.value)
    good = BenchModel(*_tiny_factory())
    inputs, targets = first_batch(good, "mine.py:make", 8, torch.device("cpu"))
    assert inputs.shape == (8, 4) and targets.shape == (8,)


@pytest.mark.parametrize(
    ("typed", "offered"),
    [
        ("cnn-0.2m", "cnn-0.3m"),  # was cnn-1.2m: spelt alike, 4x the size
        ("tf-1m", "tf-1.5m"),  # was tf-100m: 100x
        ("cnn-5m", "cnn-4.7m"),  # was cnn-19m
        ("MLP-70M", "mlp-67m"),
        ("mlp-02m", "mlp-0.2m"),  # a dot left out: the same digits
    ],
)
def test_a_size_the_ladder_lacks_is_offered_its_familys_nearest(typed: str, offered: str) -> None:
    """A size of a ladder family that the ladder lacks was offered the name spelt most
    alike, whatever its size: `tf-1m` got `tf-100m`."""
    with pytest.raises(ModelError) as refused:
        sort_models([typed])
    assert f"did you mean {offered!r}" in str(refused.value)


def test_bench_list_says_why_a_model_cannot_be_built(tmp_path: Path) -> None:
    """`bench --list --model x.py:make` listed a model whose factory raised as "cannot be
    built" and no more: its cause (the one a sweep records in its row) is the row's
    `why not built`; a list of models that all build has no such column."""
    from gpuscale.bench.config import BenchConfig
    from gpuscale.bench.sweep_plan import models_table, plan_bench
    from gpuscale.bench.sweep_request import SweepRequest

    source = tmp_path / "no weights.py"
    source.write_text("def make():\n    raise RuntimeError('no weights here')\n")
    out = tmp_path / "results.jsonl"
    spec = f"{source}:make"
    asked = SweepRequest(out=out, models="mlp-0.2m", model=(spec,), list_models=True)
    rows = {row["model"]: row for row in models_table(plan_bench(asked, BenchConfig()))}
    assert rows[spec]["family"] == "cannot be built" and rows[spec]["params"] is None
    assert "raised RuntimeError: no weights here" in str(rows[spec]["why not built"])
    assert rows["mlp-0.2m"]["why not built"] == "" and rows["mlp-0.2m"]["params"] == 199_946
    built = SweepRequest(out=out, models="mlp-0.2m", list_models=True)
    assert "why not built" not in models_table(plan_bench(built, BenchConfig()))[0]


def test_a_mistyped_factory_counts_what_the_file_has_beyond_the_names_shown(
    tmp_path: Path,
) -> None:
    """A file of 11 callables shows 8 and says 3 more: the list read as all it had."""
    names = [f"make_{i:02d}" for i in range(11)]
    (tmp_path / "many.py").write_text("".join(f"def {n}():\n    pass\n" for n in names))
    with pytest.raises(ModelError) as typo:
        load_model(f"{tmp_path}/many.py:mkae")
    said = str(typo.value)
    assert f"it has {', '.join(names[:8])} (and 3 more)" in said
    (tmp_path / "few.py").write_text("def make():\n    pass\n")
    with pytest.raises(ModelError) as few:
        load_model(f"{tmp_path}/few.py:mkae")
    assert str(few.value).endswith("it has make")  # all shown: no count


def test_a_model_file_given_without_its_factory_is_offered_its_functions(
    tmp_path, monkeypatch
) -> None:
    """`bench --model tiny.py` (a file of the user's, no `:FACTORY`) was refused as a
    ladder typo, "unknown model; the ladder: mlp-0.2m, ...": it is offered the spec to give,
    with the file's top-level functions read from its source (never run)."""
    from gpuscale.bench.ladder_names import checked_names

    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny.py").write_text(
        "import sys\nsys.exit(3)  # never run\n\ndef make():\n    pass\n\n"
        "def _helper():\n    pass\n\ndef make_mse():\n    pass\n"
    )
    for typed, spec in (("tiny.py", "tiny.py:make"), ("tiny", "tiny:make")):
        with pytest.raises(ModelError) as refused:
            checked_names([typed], ["--model"])
        said = str(refused.value)
        assert said.startswith(f"--model {typed}: ") and "the ladder" not in said
        offered = said.split("e.g. ", 1)[1].split()[0]
        assert offered == spec
        assert said.rstrip(")").endswith("make, make_mse")  # _helper is private
    with pytest.raises(ModelError) as refused:
        checked_names(["gone.py"], ["--model"])
    assert "gone.py:FACTORY" in str(refused.value)
    with pytest.raises(ModelError, match="the ladder"):  # no file of that name: a typo
        checked_names(["tinyy"], ["--model"])
