"""Translating text with a loaded model: batches, odd input, and the position limit.

One :class:`Translator` serves the before/after evaluation, ``workbench translate``, the
console and the TUI, so every front end decodes the same way. A model's position table
(512 rows for Marian, 1,024 for NLLB) makes ``generate`` crash past it, so long input is
split at sentence ends and, where one sentence is still too long, truncated -- and the
caller is told. The engine that generates is a backend that sees only token ids
(:mod:`workbench.core.translate.backend`): transformers, or a CTranslate2 export
(:mod:`workbench.core.translate.ct2`), so all of the above is written once. What a model
name loads as (its settings, engine and direction) is
:mod:`workbench.core.translate.loading`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.core.config.direction_request import DirectionRequest
from workbench.core.decoding import LENGTH_CEILING, DecodeOptions, clean_input, length_bound
from workbench.core.languages import Direction
from workbench.core.model.prompts import prompt_overhead
from workbench.core.translate.backend import GenerationBackend, TransformersBackend
from workbench.core.translate.input_notices import input_notices
from workbench.core.translate.loading import load_engine
from workbench.core.views.wide import has_cjk

_SENTENCE_END = re.compile(r"(?<=[.!?。！？；;])\s*")


@dataclass
class Translation:
    """One translated line with what happened to it on the way."""

    source: str
    text: str
    seconds: float = 0.0
    notices: list[str] = field(default_factory=list)


class Translator:
    """A model (or a CTranslate2 export), its tokenizer and its direction (languages,
    label or prefix), ready to translate lists of text.

    The engine that generates is ``backend``:
    :class:`~workbench.core.translate.backend.TransformersBackend` by default, or
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
        request: DirectionRequest | None = None,
    ) -> Translator:
        """Load a saved model (with its workbench.json settings) or a Hub id.

        ``backend``: ``transformers``, ``ct2`` (a CTranslate2 export made with
        ``workbench export --ctranslate2``), or ``auto``: the export when one exists that
        matches the model and ctranslate2 is installed, else transformers. ``request``:
        the direction asked (languages, label, prefix or a decoder-only model's prompt);
        what it leaves out is what the model recorded
        (:func:`~workbench.core.translate.loading.load_engine`).
        """
        loaded = load_engine(name, device, backend, request or DirectionRequest())
        translator = cls(
            loaded.model,
            loaded.tokenizer,
            loaded.direction,
            max_source_length=loaded.settings.max_source_length,
            backend=loaded.backend,
            notices=loaded.notices,
        )
        translator.run_dir = loaded.settings.run_dir
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
        return [rows[0] for rows in self.generate_rows(texts, options, batch_size)]

    def generate_rows(
        self, texts: list[str], options: DecodeOptions, batch_size: int = 32
    ) -> list[list[str]]:
        """``options.num_return_sequences`` translations of each text that already fits
        (beam search's n-best in rank order, or samples as drawn); ``batch_size`` counts
        sequences, so a batch holds fewer sources the more each returns."""
        returned = options.num_return_sequences
        per_batch = max(1, batch_size // returned)
        outputs: list[list[str]] = [[] for _ in texts]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), per_batch):
            idx = order[start : start + per_batch]
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
            if len(generated) != len(idx) * returned:  # rows are matched to sources by count
                raise RuntimeError(
                    f"the {self.backend.name} engine returned {len(generated)} translations "
                    f"for {len(idx)} sources × {returned} each; expected {len(idx) * returned}"
                )
            decoded = self.tokenizer.batch_decode(
                [self.direction.shown(ids) for ids in generated], skip_special_tokens=True
            )
            for row, text in enumerate(decoded):
                outputs[idx[row // returned]].append(self.direction.output_text(text))
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
            joined.append(join_pieces(flat[start : start + len(line)]))
            start += len(line)
        return joined

    def translate(self, text: str, options: DecodeOptions | None = None) -> Translation:
        """Translate one line of user input, splitting it where it is too long."""
        started = time.perf_counter()
        pieces, notices = self.prepare(text)
        if not pieces:
            return Translation(text, "", 0.0, notices)
        parts = self.generate(pieces, options or self.default_options())
        return Translation(text, join_pieces(parts), time.perf_counter() - started, notices)

    def prepare(self, text: str) -> tuple[list[str], list[str]]:
        """One line of user input as the pieces to generate (none when it is empty) and
        what the user is told about it (odd input, split, truncated): the same for a
        translation and for a pick's candidates."""
        cleaned = clean_input(text)
        if not cleaned:
            return [], ["empty input: nothing to translate"]
        pieces, length_notices = self.split_long(cleaned)
        return pieces, input_notices(self.tokenizer, self.direction, cleaned) + length_notices


def join_pieces(parts: list[str]) -> str:
    """The translations of one line's pieces as one line: no spaces between them when over
    a third of the text is Chinese characters (Korean keeps its spaces)."""
    return ("" if has_cjk("".join(parts), more_than=1 / 3, han_only=True) else " ").join(parts)
