"""Translating text with a loaded model: batches, odd input, and the position limit.

One :class:`Translator` serves the before/after evaluation, ``workbench translate``, the
console and the TUI, so every front end decodes the same way. A model's position table
(512 rows for Marian, 1,024 for NLLB) makes ``generate`` crash past it, so long input is
split at sentence ends and, where one sentence is still too long, truncated -- and the
caller is told. The engine that generates is a backend that sees only token ids:
transformers, or a CTranslate2 export (:mod:`workbench.core.translate.ct2`), so all of
the above is written once.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from workbench.core.decoding import (
    AUTO_LABEL,
    LENGTH_CEILING,
    SETTINGS_FILE,
    DecodeOptions,
    clean_input,
    length_bound,
)
from workbench.core.languages import Direction
from workbench.core.model.prompts import prompt_overhead
from workbench.core.translate.input_notices import input_notices
from workbench.core.views.wide import has_cjk

_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*")


@dataclass
class Translation:
    """One translated line with what happened to it on the way."""

    source: str
    text: str
    seconds: float = 0.0
    notices: list[str] = field(default_factory=list)


def preset_settings(model: str) -> dict[str, Any]:
    """The languages and label of the first preset whose model is the Hub id ``model``."""
    from workbench.core.config.build import build_config
    from workbench.core.config.presets import PRESETS

    for name in PRESETS:
        config = build_config(name)
        if config.model == model:
            return dict(config.languages())
    return {}


def read_settings(model_dir: str | Path) -> dict[str, Any]:
    """The decoding settings that go with a model (languages, label, source limit), or {}.

    A model the workbench saved carries them in its ``workbench.json``. A Hub model has
    none, so a Hub id gets the languages of the preset that fine-tunes it (opus-mt-en-zh:
    en → zh, so ``>>cmn_Hans<<``): the base model then decodes in every front end as the
    run's "before" side did, instead of without the label the multi-target model needs.
    """
    from workbench.core.data.sources import looks_like_local_path
    from workbench.core.records.files import read_json_dict

    saved = read_json_dict(Path(model_dir) / SETTINGS_FILE)
    if saved is not None:
        return saved
    if isinstance(model_dir, str) and not looks_like_local_path(model_dir):
        return preset_settings(model_dir)
    return {}


class GenerationBackend(Protocol):
    """What the Translator needs from an engine: token ids in, token ids out."""

    name: str

    @property
    def generation_config(self) -> Any:
        """The model's decoding defaults (a transformers ``GenerationConfig``)."""

    def describe(self) -> str:
        """One line for the user: which engine, where."""

    def generate_ids(
        self, sources: list[list[int]], options: DecodeOptions, bound: int
    ) -> list[list[int]]:
        """Translate tokenized sources; at most ``bound`` new tokens each."""


class TransformersBackend:
    """Generates with ``model.generate``: the reference engine, and the one for training."""

    name = "transformers"

    def __init__(self, model: Any, device: str | None = None) -> None:
        import torch

        self.model = model
        if device:
            self.model.to(device)
        self.device = next(model.parameters()).device
        self._torch = torch

    @property
    def generation_config(self) -> Any:
        """The model's decoding defaults (beams, n-gram block, blocked tokens)."""
        return self.model.generation_config

    def describe(self) -> str:
        """One line for the user: engine and device."""
        return f"transformers ({self.device.type})"

    def generate_ids(
        self, sources: list[list[int]], options: DecodeOptions, bound: int
    ) -> list[list[int]]:
        """Translate tokenized sources; at most ``bound`` new tokens each."""
        torch = self._torch
        pad = int(self.model.config.pad_token_id)
        width = max(len(ids) for ids in sources)
        # A decoder-only model continues its prompt: padded on the left, so that every
        # row's next token follows its own last one; a seq2seq encoder is padded right.
        causal = not self.model.config.is_encoder_decoder
        input_ids = torch.tensor(padded(sources, pad, width, left=causal))
        mask = torch.tensor(padded([[1] * len(ids) for ids in sources], 0, width, left=causal))
        self.model.eval()
        with torch.inference_mode():
            generated = self.model.generate(
                input_ids=input_ids.to(self.device),
                attention_mask=mask.to(self.device),
                num_beams=options.num_beams,
                # max_new_tokens, not max_length: a max_new_tokens in the model's
                # generation config would otherwise win over this bound.
                max_new_tokens=bound,
                no_repeat_ngram_size=options.no_repeat_ngram_size,
                **options.sampling_kwargs(),
            )
        if causal:  # the prompt comes back in front of what was written
            generated = generated[:, width:]
        return generated.tolist()


def padded(rows: list[list[int]], fill: int, width: int, left: bool) -> list[list[int]]:
    """``rows`` filled with ``fill`` to ``width``, on the left or the right."""
    return [[fill] * (width - len(r)) + r if left else r + [fill] * (width - len(r)) for r in rows]


class Translator:
    """A model (or a CTranslate2 export), its tokenizer and its direction (languages,
    label or prefix), ready to translate lists of text.

    The engine that generates is ``backend``: :class:`TransformersBackend` by default, or
    :class:`workbench.core.translate.ct2.CT2Backend`. Both take token ids and return token
    ids, so cleaning, splitting, the prefix and decoding below serve both unchanged.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        direction: Direction | None = None,
        max_source_length: int = 512,
        device: str | None = None,
        backend: GenerationBackend | None = None,
        notices: list[str] | None = None,
    ) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.direction = direction or Direction()
        # Never beyond the model's positions (the prefix and </s> are counted in). A
        # decoder-only model's positions hold its prompt, the source and the translation.
        room = self.direction.max_positions or LENGTH_CEILING
        self.prompt_tokens = prompt_overhead(tokenizer, self.direction)
        if self.direction.causal:  # a run checked its own lengths; else a third of the room
            free = room - self.prompt_tokens
            limit = free - 1 if max_source_length < LENGTH_CEILING else free // 3
            self.max_source_length = self.prompt_tokens + max(1, min(max_source_length, limit))
        else:
            self.max_source_length = min(max_source_length, room)
        self.backend = backend or TransformersBackend(model, device)
        #: Said once when the model was loaded (e.g. an export not used because it is stale).
        self.notices = list(notices or [])

    #: The run that trained the model (from its workbench.json), for the console history.
    run_dir: str | None = None

    @classmethod
    def from_pretrained(
        cls,
        name: str,
        device: str | None = None,
        backend: str = "auto",
        target_label: str | None = AUTO_LABEL,
        source_lang: str | None = None,
        target_lang: str | None = None,
        source_prefix: str | None = None,
        prompt: str | None = None,
        prompt_template: str | None = None,
    ) -> Translator:
        """Load a saved model (with its workbench.json settings) or a Hub id.

        ``backend``: ``transformers``, ``ct2`` (a CTranslate2 export made with
        ``workbench export --ctranslate2``), or ``auto``: the export when one exists that
        matches the model and ctranslate2 is installed, else transformers.
        ``target_label``: a label such as ``>>cmn_Hant<<``, None for none, or
        :data:`AUTO_LABEL` for the model's own; the languages and the prefix default to
        what the model recorded (:func:`workbench.core.model.family.direction_for`), and so
        does a decoder-only model's ``prompt`` (or ``prompt_template``, its text).
        """
        from workbench.core.model.family import apply_direction, direction_for, max_positions
        from workbench.core.model.load import load_model_and_tokenizer, pick_device
        from workbench.core.translate.ct2_export import choose_export

        def resolve(model_type: str, positions: int | None, tokenizer: Any) -> Direction:
            settings = read_settings(export if export is not None else name)
            return direction_for(
                model_type,
                positions,
                tokenizer,
                settings,
                source_lang,
                target_lang,
                target_label,
                source_prefix,
                prompt,
                prompt_template,
                model_name=name,
            )

        export, notices = choose_export(name, backend)
        if export is not None:
            from workbench.core.translate.ct2 import (
                CT2Backend,
                export_model_facts,
                load_export_tokenizer,
            )

            tokenizer = load_export_tokenizer(export)
            settings = read_settings(export)
            direction = resolve(*export_model_facts(export), tokenizer)
            apply_direction(tokenizer, direction)
            translator = cls(
                None,
                tokenizer,
                direction,
                max_source_length=int(settings.get("max_source_length", LENGTH_CEILING)),
                backend=CT2Backend(export, tokenizer, device, direction=direction),
                notices=[*notices, *direction.notes],
            )
            translator.run_dir = settings.get("run_dir")
            return translator
        model, tokenizer = load_model_and_tokenizer(name)
        settings = read_settings(name)
        direction = resolve(model.config.model_type, max_positions(model.config), tokenizer)
        apply_direction(tokenizer, direction, model)
        model.eval()
        translator = cls(
            model,
            tokenizer,
            direction,
            max_source_length=int(settings.get("max_source_length", LENGTH_CEILING)),
            device=device or pick_device(),
            notices=[*notices, *direction.notes],
        )
        translator.run_dir = settings.get("run_dir")
        return translator

    @property
    def backend_label(self) -> str:
        """Which engine translates, for the console banner and the TUI."""
        return str(self.backend.describe())

    def default_options(self) -> DecodeOptions:
        """Decoding settings stored in the model's generation config (a decoder-only
        model's ``max_length`` counts its prompt: only its ``max_new_tokens`` is read)."""
        config = self.backend.generation_config
        if self.direction.causal and not config.max_new_tokens:
            return replace(
                DecodeOptions.of_model(config), max_new_tokens=DecodeOptions.max_new_tokens
            )
        return DecodeOptions.of_model(config)

    @property
    def target_label(self) -> str | None:
        """The Marian label the model translates with, or None."""
        return self.direction.target_label

    def _length(self, text: str) -> int:
        return len(self.tokenizer(self.direction.source_text(text))["input_ids"])

    def split_long(self, text: str) -> tuple[list[str], list[str]]:
        """Pieces that each fit the source limit, and notices about what was done."""
        if self._length(text) <= self.max_source_length:
            return [text], []
        sentences = [s for s in _SENTENCE_END.split(text) if s.strip()]
        pieces: list[str] = []
        current = ""
        for sentence in sentences:
            candidate = f"{current} {sentence}".strip()
            if current and self._length(candidate) > self.max_source_length:
                pieces.append(current)
                current = sentence
            else:
                current = candidate
        if current:
            pieces.append(current)
        notices = []
        if len(pieces) > 1:
            notices.append(
                f"input longer than {self.source_limit} tokens: translated in {len(pieces)} parts"
            )
        if any(self._length(p) > self.max_source_length for p in pieces):
            notices.append(f"a sentence longer than {self.source_limit} tokens was truncated")
        return pieces, notices

    @property
    def source_limit(self) -> int:
        """Tokens a source may have (a decoder-only model's prompt not counted)."""
        return self.max_source_length - self.prompt_tokens

    def _fit(self, text: str) -> str:
        """``text`` cut to the source limit, for a prompt: the tokenizer's own truncation
        would cut the prompt's end (the turn that asks for the answer), not the source."""
        if not self.direction.causal or self._length(text) <= self.max_source_length:
            return text
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"][: self.source_limit]
        return str(self.tokenizer.decode(ids, skip_special_tokens=True))

    def generate(self, texts: list[str], options: DecodeOptions, batch_size: int = 32) -> list[str]:
        """Translate texts that already fit; batches are length-sorted to cut padding."""
        outputs: list[str] = [""] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            sources = self.tokenizer(
                [self.direction.source_text(self._fit(texts[i])) for i in idx],
                truncation=not self.direction.causal,
                max_length=self.max_source_length,
            )["input_ids"]
            # Bound the output by the source length as well as the cap: an untrained or
            # looping model otherwise runs every sentence to the cap.
            source_len = max(len(ids) for ids in sources)
            bound = length_bound(source_len, options.max_new_tokens)
            if self.direction.causal:  # the source's own length, not the prompt's
                bound = length_bound(source_len - self.prompt_tokens, options.max_new_tokens)
            if self.direction.max_positions:  # the decoder start token (or prompt) takes room
                taken = source_len if self.direction.causal else 1
                bound = max(1, min(bound, self.direction.max_positions - taken))
            generated = self.backend.generate_ids(sources, options, bound)
            decoded = self.tokenizer.batch_decode(
                [self.direction.shown(ids) for ids in generated], skip_special_tokens=True
            )
            for i, text in zip(idx, decoded, strict=False):
                outputs[i] = self.direction.output_text(text)
        return outputs

    def translate_many(
        self, texts: list[str], options: DecodeOptions | None = None, batch_size: int = 32
    ) -> list[str]:
        """Translate a list (e.g. a test set) in batches; no per-line notices.

        Each line is cleaned, split where too long and joined back exactly as
        :meth:`translate` does, so a set's translations are what the console and
        ``workbench translate`` print for the same lines, long ones included.
        """
        pieces = [
            self.split_long(cleaned)[0] if (cleaned := clean_input(text)) else [] for text in texts
        ]
        flat = self.generate(
            [p for line in pieces for p in line], options or self.default_options(), batch_size
        )
        joined, start = [], 0
        for line in pieces:
            joined.append(_join(flat[start : start + len(line)]))
            start += len(line)
        return joined

    def translate(self, text: str, options: DecodeOptions | None = None) -> Translation:
        """Translate one line of user input, splitting it where it is too long."""
        started = time.perf_counter()
        cleaned = clean_input(text)
        if not cleaned:
            return Translation(text, "", 0.0, ["empty input: nothing to translate"])
        notices = input_notices(self.tokenizer, self.direction, cleaned)
        pieces, length_notices = self.split_long(cleaned)
        parts = self.generate(pieces, options or self.default_options())
        return Translation(
            text, _join(parts), time.perf_counter() - started, notices + length_notices
        )


def _join(parts: list[str]) -> str:
    """The translations of one line's pieces as one line: no spaces between them when over
    a third of the text is Chinese characters (Korean keeps its spaces)."""
    return ("" if has_cjk("".join(parts), more_than=1 / 3, han_only=True) else " ").join(parts)
