"""Languages as users name them, and the direction a model is told to translate in.

Users say ``en`` and ``zh``; each model family names languages its own way (Marian
``>>cmn_Hans<<``, NLLB ``zho_Hans``, M2M100 ``__zh__``, mBART-50 ``zh_CN``). This module
holds what needs no model: the ISO 639-1 codes the workbench knows with their ISO 639-3
names and script, the base language of any family's code, whether it is written without
spaces (and so whether a sentence's length is counted in words or characters), the
sacreBLEU tokenizer for a target language, and :class:`Direction`, the resolved answer
for one model that every front end decodes with. Resolving what a user asks
(:class:`~workbench.core.config.direction_request.DirectionRequest`) into one model's
codes is :mod:`workbench.core.model.direction`'s job.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from workbench.core.records.model_settings import ModelSettings
from workbench.core.records.scores import LengthUnit

#: The pair a run and a model without recorded languages default to.
DEFAULT_SOURCE_LANG = "en"
DEFAULT_TARGET_LANG = "zh"

#: ISO 639-1 code -> (ISO 639-3 codes, most used first; the usual script). The ISO 639-3
#: names are what Marian labels (``>>cmn_Hans<<``) and NLLB's FLORES-200 codes
#: (``zho_Hans``) are built from.
LANGUAGES: dict[str, tuple[tuple[str, ...], str]] = {
    "ar": (("arb", "ara"), "Arab"),
    "bg": (("bul",), "Cyrl"),
    "bn": (("ben",), "Beng"),
    "ca": (("cat",), "Latn"),
    "cs": (("ces",), "Latn"),
    "da": (("dan",), "Latn"),
    "de": (("deu",), "Latn"),
    "el": (("ell",), "Grek"),
    "en": (("eng",), "Latn"),
    "es": (("spa",), "Latn"),
    "et": (("est",), "Latn"),
    "fa": (("pes", "fas"), "Arab"),
    "fi": (("fin",), "Latn"),
    "fr": (("fra",), "Latn"),
    "he": (("heb",), "Hebr"),
    "hi": (("hin",), "Deva"),
    "hr": (("hrv",), "Latn"),
    "hu": (("hun",), "Latn"),
    "id": (("ind",), "Latn"),
    "it": (("ita",), "Latn"),
    "ja": (("jpn",), "Jpan"),
    "ko": (("kor",), "Hang"),
    "lt": (("lit",), "Latn"),
    "lv": (("lvs", "lav"), "Latn"),
    "nl": (("nld",), "Latn"),
    "no": (("nob", "nor"), "Latn"),
    "pl": (("pol",), "Latn"),
    "pt": (("por",), "Latn"),
    "ro": (("ron",), "Latn"),
    "ru": (("rus",), "Cyrl"),
    "sk": (("slk",), "Latn"),
    "sl": (("slv",), "Latn"),
    "sr": (("srp",), "Cyrl"),
    "sv": (("swe",), "Latn"),
    "sw": (("swh", "swa"), "Latn"),
    "ta": (("tam",), "Taml"),
    "th": (("tha",), "Thai"),
    "tr": (("tur",), "Latn"),
    "uk": (("ukr",), "Cyrl"),
    "ur": (("urd",), "Arab"),
    "vi": (("vie",), "Latn"),
    "zh": (("zho", "cmn"), "Hans"),
}
_BY_ISO3 = {iso3: iso1 for iso1, (names, _) in LANGUAGES.items() for iso3 in names}
_BY_ISO3["yue"] = "zh"  # Cantonese is scored as Chinese (sacreBLEU's zh tokenizer)

#: The families' code shapes: ``>>cmn_Hans<<``, ``__zh__``, ``zho_Hans``, ``zh_CN``.
_CODE = re.compile(r"^(?:>>)?(?:__)?([a-z]{2,3})(?:_[A-Za-z]{2,4})?(?:__)?(?:<<)?$")


def base_language(code: str | None) -> str | None:
    """The ISO 639-1 language of any family's code (``zho_Hant``, ``__zh__``, ``zh_CN``,
    ``>>cmn_Hans<<`` -> ``zh``), the bare code when it is not in the table, or None."""
    if not code:
        return None
    found = _CODE.match(code.strip())
    if not found:
        return None
    stem = found.group(1).lower()
    return stem if stem in LANGUAGES else _BY_ISO3.get(stem, stem)


#: Scripts written without spaces between words: their length is counted in characters.
UNSPACED_SCRIPTS = frozenset({"Hans", "Hant", "Jpan", "Thai"})


@lru_cache(maxsize=1024)
def script_of(lang: str | None) -> str | None:
    """The usual script of a language in any family's code (``Hans`` for ``zho_Hant``'s
    base ``zh``; a code's own script wins: ``zho_Hant`` -> ``Hant``), or None."""
    if not lang:
        return None
    own = re.search(r"_([A-Z][a-z]{3})(?:<<)?$", lang.strip())
    if own:
        return own.group(1)
    entry = LANGUAGES.get(base_language(lang) or "")
    return entry[1] if entry else None


def written_without_spaces(lang: str | None) -> bool:
    """True for languages whose words are not separated by spaces (zh, ja, th)."""
    return script_of(lang) in UNSPACED_SCRIPTS


def length_unit(lang: str | None) -> LengthUnit:
    """What a sentence's length is counted in: characters for a language written without
    spaces (zh, ja, th), else words."""
    return "characters" if written_without_spaces(lang) else "words"


def length_units(text: str, unit: LengthUnit) -> Sequence[str]:
    """The units ``text``'s length is counted in: its words (split on white space), or its
    characters other than white space, so that ``你好，世界。`` is 6 long, not 1. The one
    count for cleaning's length ratio, the dataset preview, the test set's length buckets
    and the Lab's repetition check."""
    return "".join(text.split()) if unit == "characters" else text.split()


#: sacreBLEU tokenizers that need an extra package, and where to get it.
_MECAB = {
    "ja": ("ja-mecab", "MeCab", "sacrebleu[ja]"),
    "ko": ("ko-mecab", "mecab_ko", "sacrebleu[ko]"),
}


def bleu_tokenizer_for(target_lang: str | None) -> tuple[str, str | None]:
    """The sacreBLEU tokenizer for a target language, and a note when it is a fallback.

    Chinese is scored with ``zh`` (characters), as WMT does; Japanese and Korean with
    their MeCab tokenizers where those are installed, else ``char``, which is said;
    everything else with ``13a``, sacreBLEU's default. The choice is printed with every
    score (the signature), so a reader knows how the number was made.
    """
    lang = base_language(target_lang)
    if lang == "zh":
        return "zh", None
    if lang in _MECAB:
        name, module, extra = _MECAB[lang]
        if importlib.util.find_spec(module) is not None:
            return name, None
        return "char", (
            f"BLEU on {lang} is tokenized by character: {name} needs MeCab "
            f"(pip install '{extra}'); set bleu_tokenize to choose"
        )
    return "13a", None


#: English names of the languages the workbench knows, as an LLM's prompt names them.
LANGUAGE_NAMES: dict[str, str] = {
    "ar": "Arabic", "bg": "Bulgarian", "bn": "Bengali", "ca": "Catalan", "cs": "Czech",
    "da": "Danish", "de": "German", "el": "Greek", "en": "English", "es": "Spanish",
    "et": "Estonian", "fa": "Persian", "fi": "Finnish", "fr": "French", "he": "Hebrew",
    "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian", "it": "Italian",
    "ja": "Japanese", "ko": "Korean", "lt": "Lithuanian", "lv": "Latvian", "nl": "Dutch",
    "no": "Norwegian", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian",
    "sk": "Slovak", "sl": "Slovenian", "sr": "Serbian", "sv": "Swedish", "sw": "Swahili",
    "ta": "Tamil", "th": "Thai", "tr": "Turkish", "uk": "Ukrainian", "ur": "Urdu",
    "vi": "Vietnamese", "zh": "Chinese",
}  # fmt: skip


def language_name(lang: str | None) -> str:
    """The English name of a language in any family's code (``zho_Hans`` -> ``Chinese``),
    or the code itself when the workbench has no name for it."""
    base = base_language(lang) or (lang or "")
    return LANGUAGE_NAMES.get(base, lang or "")


_THINKING = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL)


@dataclass(frozen=True)
class Direction:
    """How one loaded model is told the language pair, resolved once for every front end.

    Training labels, the before/after sets, the console, the TUI, attention and the Lab
    all tokenize with :meth:`source_text` (and the tokenizer's ``src_lang``/``tgt_lang``
    that :func:`workbench.core.model.direction.apply_direction` set), generate with
    ``first_token_id`` forced (the model's generation config carries it), and drop
    ``code_ids`` from what they show.

    A decoder-only model (``causal``) is told the pair by a prompt: :meth:`source_text` is
    the whole prompt, the source between ``source_prefix`` and ``source_suffix``; its
    training target is ``target_prefix + target + target_suffix`` (the end of the turn),
    generation stops at ``stop_ids``, and :meth:`output_text` keeps what the prompt asks
    for (no thinking block; the first line, where the prompt implies one).
    """

    family: str = "marian"
    source_lang: str | None = None  # as the user named it: en
    target_lang: str | None = None
    source_code: str | None = None  # the family's own code (eng_Latn), where it has one
    target_code: str | None = None  # >>cmn_Hans<<, zho_Hans, __zh__, zh_CN; None: none
    source_prefix: str = ""  # put before every source: Marian's label, T5's task, a prompt
    max_positions: int | None = 512  # None: relative positions (T5), no table to overrun
    first_token_id: int | None = None  # forced at generation (NLLB, M2M100, mBART-50)
    code_ids: frozenset[int] = field(default_factory=frozenset)  # never shown in output
    notes: tuple[str, ...] = ()  # what the workbench does not do for this model
    causal: bool = False  # a decoder-only model, told the task by a prompt
    prompt: str | None = None  # chat, alma, seed-x or template (causal models only)
    prompt_template: str | None = None  # the user's template, as recorded
    source_suffix: str = ""  # the prompt after the source
    target_prefix: str = ""  # before the target in training (ALMA: a space)
    target_suffix: str = ""  # the end of the target: EOS, or the turn's end token
    stop_ids: frozenset[int] = field(default_factory=frozenset)  # generation ends here
    first_line: bool = False  # the translation is the first line of the output

    @property
    def target_label(self) -> str | None:
        """The Marian label this direction prefixes, or None (the older setting's name)."""
        return self.target_code if self.family == "marian" else None

    def source_text(self, text: str) -> str:
        """``text`` as the model is fed it: the family's prefix first (and a prompt's
        rest after it)."""
        return f"{self.source_prefix}{text}{self.source_suffix}"

    def source_span(self, text: str) -> tuple[int, int]:
        """Where ``text`` sits in :meth:`source_text`, in characters (start, end)."""
        return len(self.source_prefix), len(self.source_prefix) + len(text)

    def shown(self, ids: list[int]) -> list[int]:
        """``ids`` without the language codes (tokenizers do not all count them special)."""
        return [i for i in ids if i not in self.code_ids] if self.code_ids else list(ids)

    def output_text(self, text: str) -> str:
        """A decoded output as the translation: for a prompt, without a thinking block
        and, where the prompt implies one line, its first non-empty line."""
        if not self.causal:
            return text.strip()
        lines = [line.strip() for line in _THINKING.sub("", text).splitlines() if line.strip()]
        if self.first_line:
            return lines[0] if lines else ""
        return " ".join(lines)  # one translation is one line (a pipe's row, a TSV cell)

    def settings(self) -> ModelSettings:
        """What a saved model records of it (workbench.json), so it decodes the same way
        with no flags."""
        recorded = ModelSettings(
            family=self.family,
            source_lang=self.source_lang,
            target_lang=self.target_lang,
            target_label=self.target_label,
            source_code=self.source_code,
            target_code=self.target_code,
            source_prefix=self.source_prefix if self.family != "marian" else "",
        )
        if self.causal:  # the prompt says it all
            return replace(
                recorded,
                source_prefix=None,
                prompt=self.prompt,
                prompt_template=self.prompt_template,
            )
        return recorded

    def describe(self) -> str:
        """One line for the user: the pair and how the model is told it."""
        pair = f"{self.source_lang or '?'} → {self.target_lang or '?'}"
        how = {
            "marian": f"label {self.target_code}" if self.target_code else "no label",
            "t5": f"prefix {self.source_prefix!r}" if self.source_prefix else "no prefix",
        }.get(self.family)
        if self.causal:
            how = f"{self.prompt} prompt"
        if how is None:
            codes = " → ".join(c for c in (self.source_code, self.target_code) if c)
            how = f"codes {codes}" if codes else "no language codes"
        return f"{pair} ({self.family}: {how})"
