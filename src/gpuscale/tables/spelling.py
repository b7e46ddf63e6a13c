"""What a name that is none is told: the closest valid one, an abbreviation named as one,
an option or command the parser does not know (one line each, the project's form)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence

from gpuscale.quantities import joined


def suggested(close: Sequence[str], upto: int = 1) -> str:
    """`` (did you mean 'fsdp'?)`` for the first of ``close`` (the closest names, nearest
    first; up to ``upto`` of them: ``'llama3-8b', 'llama2-7b' or 'llama3-70b'``), ""
    where there is none: how every refusal offers a name."""
    if not close:
        return ""
    return f" (did you mean {joined([repr(c) for c in close[:upto]], 'or')}?)"


# Names writing numbers of the digits typed (``llama3-7b``: llama3-8b, llama2-7b) whose
# difflib ratios lie this close to the closest's (llama3-70b, a digit added: difflib rates
# an added character closer than a changed one) are as likely: offered before it.
AS_CLOSE = 0.1


def _number_shape(name: str) -> tuple[int, ...]:
    """The lengths of the numbers ``name`` writes (``llama3-70b``: (1, 2))."""
    return tuple(len(n) for n in re.findall(r"\d+", name))


def _digits_apart(a: str, b: str) -> int:
    """How many digits one edit at a time (added, dropped or changed) turn the digits
    ``a`` writes into those ``b`` writes (``llama3-7b``, ``llama3-70b``: 1)."""
    x, y = re.sub(r"\D", "", a), re.sub(r"\D", "", b)
    row = list(range(len(y) + 1))
    for i, dx in enumerate(x, 1):
        prev, row[0] = row[0], i
        for j, dy in enumerate(y, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (dx != dy))
    return row[-1]


def _numbers_changed(typed: str, name: str) -> int:
    """How many of the numbers ``typed`` writes ``name`` writes otherwise, number by number
    in order (``llama3_8b``, ``llama31_405b``: 2; ``mlp-9m``, ``mlp-17m``: 1)."""
    mine, theirs = re.findall(r"\d+", typed), re.findall(r"\d+", name)
    return sum(k >= len(theirs) or theirs[k] != n for k, n in enumerate(mine))


def likeliest(typed: str, valid: Iterable[str], cutoff: float = 0.6) -> list[str]:
    """The closest name of ``valid`` to ``typed`` (difflib's ratio at least ``cutoff``); where
    it writes numbers of other digits than ``typed``'s, the names within :data:`AS_CLOSE` of
    it that write numbers of the same digits first (``llama3-7b``: llama3-8b, llama2-7b,
    then llama3-70b), and itself only where it changes one of the numbers typed (``mlp-9m``:
    mlp-17m) or one of their digits (``H1000``: H100): ``llama3_8b`` is no typo of
    llama31_405b, another model, however alike their letters; [] where none is that
    close."""
    scored = [(difflib.SequenceMatcher(None, typed, n).ratio(), n) for n in valid]
    close = sorted((rn for rn in scored if rn[0] >= cutoff), reverse=True)  # as difflib ties
    if not close:
        return []
    (best_ratio, best), shape = close[0], _number_shape(typed)
    if _number_shape(best) == shape:
        return [best]
    alike = [n for r, n in close if _number_shape(n) == shape and r >= best_ratio - AS_CLOSE]
    typo = _digits_apart(typed, best) <= 1 or _numbers_changed(typed, best) <= 1
    return [*alike, *([best] if typo else [])]


def did_you_mean(name: str, valid: Iterable[str]) -> str:
    """`` (did you mean 'mlp-0.2m'?)`` for :func:`closest_names` of ``name``, else ""."""
    close = closest_names(name, valid)
    return suggested(close, upto=len(close))


# The most names holding a typed part that are offered (``mlp`` held by a dozen models is no
# suggestion; two or three are the candidates a user chooses from).
MOST_HOLDING = 3


def closest_names(name: str, valid: Iterable[str]) -> list[str]:
    """The closest of ``valid`` to ``name`` (difflib's ratio at least 0.6, an option's
    leading dashes left out of it; as close, all: :func:`likeliest`), whatever the case of
    either (``ALL_REDUC`` for ``all_reduce``), else those of ``valid`` holding ``name`` (3
    characters up: ``resnet``), up to :data:`MOST_HOLDING` of them (``lama``: llama2_70b_lora
    and llama31_405b), else none. A lower cutoff, or the dashes counted, would offer
    ``bench`` for ``nosuch``, ``--help`` for ``--explain`` and ``--round`` for ``--out``."""
    by_lower = {str(v).lower().lstrip("-"): str(v) for v in valid}
    typed = str(name).lower().lstrip("-")
    close = likeliest(typed, by_lower)
    if not close:  # a letter typed for the digit it looks like (H1OO: H100)
        close = likeliest(digits_read(typed), by_lower)
    if not close:  # a part of a few names (`lama`: llama2_70b_lora, llama31_405b): those
        key = typed.strip()
        holding = [v for v in by_lower if len(key) >= 3 and key in v]
        if len(holding) <= MOST_HOLDING:
            close = sorted(holding)
    return [by_lower[c] for c in close]


def digits_read(text: str) -> str:
    """``text`` with an ``o`` beside a digit read as ``0`` and an ``l`` as ``1``, as often
    typed for them in model numbers (``h1oo`` -> ``h100``, ``a1oo`` -> ``a100``)."""
    read = None
    while read != text:
        read = text
        text = re.sub(r"(?<=\d)o|o(?=\d)", "0", text)
        text = re.sub(r"(?<=\d)l|l(?=\d)", "1", text)
    return text


def in_full(begun: Sequence[str], short: Sequence[str] = ()) -> str:
    """What a refusal adds where the text typed begins ``begun`` (an abbreviation is no
    choice: ``--backend glo`` was gloo in silence): ``; an abbreviation is not read: give
    gloo in full``, else "". ``short``: the other names it begins that are read as one of
    ``begun`` (``H10``: the product name ``H100``, read as its default part), said as
    what may be given too."""
    if not begun:
        return ""
    said = f"; an abbreviation is not read: give {joined(list(begun), 'or')} in full"
    if short:
        said += f", or {joined(list(short), 'or')}, read as one of them"
    return said


def abbreviation_of(text: str, allowed: Sequence[object]) -> str:
    """:func:`in_full` of the ``allowed`` that ``text`` begins, whatever the case."""
    key = text.strip().lower()
    return in_full([str(a) for a in allowed if key and str(a).lower().startswith(key)])


# Words users type for a count or kind of device, and the words gpuscale's options use
# (``--gpus 8``: plan's ``--devices``, bench's ``--nproc``, advise's ``--max-devices``;
# ``--accelerator H100``, plan's word for the device: advise's ``--device-name``).
OPTION_SYNONYMS = {
    "gpus": ("devices", "nproc"),
    "accelerators": ("devices", "nproc"),
    "gpu": ("accelerator", "device"),
    "device": ("accelerator",),
    "accelerator": ("device",),  # plan's --accelerator; advise's --device-name
    "devices": ("nproc",),
    "link": ("interconnect",),  # advise's Python keyword link=
}
COUNT_WORDS = frozenset({"n", "num", "number", "count", "of"})  # --num-gpus, --gpu-count
KIND_WORDS = frozenset({"name", "type", "kind", "model"})  # --device-name, --gpu-type: which one


def meant_options(typed: str, valid: Sequence[str]) -> list[str]:
    """The options (or keywords) of ``valid`` that ``typed`` names in a user's words
    (:data:`OPTION_SYNONYMS`):
    one named exactly by a synonym, else those holding a synonym as a word
    (``--accelerators`` for advise: ``--max-devices``); none where no word is a synonym."""
    typed_words = [w for w in _words(typed) if w not in KIND_WORDS]
    words = [w for w in typed_words if w not in COUNT_WORDS]
    if len(words) != 1 or words[0] not in OPTION_SYNONYMS:
        return []
    word = words[0]
    if len(words) < len(typed_words) and not word.endswith("s"):
        word += "s"  # --gpu-count: a count of gpus
    meant = set(OPTION_SYNONYMS[word])
    exact = [v for v in valid if "-".join(_words(v)) in meant]
    return exact or [v for v in valid if set(_words(v)) & meant]


def _words(name: str) -> list[str]:
    """An option's or a keyword's words: ``--max-devices`` and ``max_devices`` alike."""
    return re.split(r"[-_]", name.lstrip("-").lower())


# The most long options a short one is guessed as (all begin with its letter).
SHORT_GUESSES = 3


def unknown_option(
    typed: str, valid: Sequence[str] | Mapping[str, Sequence[str]], command: str
) -> str:
    """``--stepms: no such option of gpuscale advise (did you mean '--step-ms'?); see
    gpuscale advise --help`` (the options offered: :func:`options_meant`)."""
    meant = options_meant(typed, valid)
    return (
        f"{typed}: no such option of {command}{suggested(meant, len(meant))}; see {command} --help"
    )


def options_meant(typed: str, valid: Sequence[str] | Mapping[str, Sequence[str]]) -> list[str]:
    """The options ``typed`` (no option of the command) may mean. ``valid``: the options,
    or each field's name with its options.
    The option of the field ``typed`` spells comes first (``--price-per-device-hour``, the
    Python keyword: ``--price``), then the options ``typed`` begins (``--device`` means
    ``--device-name``, though difflib's closest is ``--max-devices``) with those it names in
    a user's words (:func:`meant_options`); else difflib's closest. A short option (``-r``)
    is guessed only as the long ones its letter begins, at most :data:`SHORT_GUESSES` of
    them (``scores -r v4.1``: ``--round``); beyond that every one is as close."""
    fields = valid if isinstance(valid, Mapping) else {}
    if isinstance(valid, Mapping):
        valid = ["--help", *(o for options in valid.values() for o in options)]
    begun = [v for v in valid if len(typed) > 3 and v.startswith(typed)]
    if re.fullmatch(r"-[A-Za-z]", typed):
        begun = [v for v in valid if v.startswith(f"-{typed.lower()}")]
        begun = begun if len(begun) <= SHORT_GUESSES else []
    if typed.startswith("--"):
        field = fields.get("_".join(_words(typed)), ())
        spelled = [field[0]] if field and typed not in field else []
        begun = list(dict.fromkeys([*spelled, *begun, *meant_options(typed, valid)]))
    if begun or not typed.startswith("--"):
        return begun
    return closest_names(typed, valid)


def unknown_command(typed: str, valid: Sequence[str], program: str) -> str:
    """``'analyz': no such command of gpuscale (did you mean 'analyze'?); commands: ...``."""
    hint = did_you_mean(typed, valid)
    return f"{typed!r}: no such command of {program}{hint}; commands: {', '.join(valid)}"


def usage_said(message: str, command: str, error: Exception | None = None) -> str:
    """Any other usage error as the parser words it, with the command it came from:
    ``gpuscale plan: option '-w' requires an argument; see gpuscale plan --help``; a
    missing argument (``error`` carries the parameter, ``error.param``) with what to give,
    its help: ``gpuscale ingest: missing argument 'paths' (round directories or archives
    ...)``."""
    message = message.rstrip(".")
    wanted = str(getattr(getattr(error, "param", None), "help", None) or "").rstrip(".")
    if wanted and message.lower().startswith("missing argument"):
        message += f" ({wanted[:1].lower()}{wanted[1:]})"
    return f"{command}: {message[:1].lower()}{message[1:]}; see {command} --help"
