"""Tokenizing pairs for training: truncation only, never padding.

Padding happens per batch in ``DataCollatorForSeq2Seq``; padding every example to 128 in
preprocessing (the reference recipe) makes a step on ~30-token sentences ~4x slower.

One pass gives both what cleaning's ``long`` rule counts (the whole length, the
direction's prefix included) and what training reads (the ids, truncated to the maximum
lengths): a pair is tokenized once whole, and only the few that are too long a second
time, truncated, by the tokenizer itself (where it keeps its special tokens is the
family's business, not ours).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.data.piece_ids import batch_ids
from workbench.core.languages import Direction

#: The token columns of a tokenized corpus, as the Trainer reads them, and ``length``
#: (the source's tokens, as the length-grouped sampler needs them).
TOKEN_COLUMNS = ("input_ids", "attention_mask", "labels")
#: The label of a position the loss leaves out (a prompt's token, padding).
IGNORED = -100
#: A probe whose ids go into the fingerprint: any change in how text becomes ids shows.
_PROBE = ('Hello, world! 3.14 "quoted" text.', "你好，世界！三点一四。")


@dataclass
class PairTokenizer:
    """A run's tokenizer with its direction and maximum lengths: what turns a pair into
    training ids. Called as a :data:`~workbench.core.data.cleaning.TokenCounter`, it
    gives the whole lengths the ``long`` rule counts."""

    tokenizer: Any
    direction: Direction
    max_source_length: int
    max_target_length: int

    def __call__(self, sources: list[str], targets: list[str]) -> tuple[list[int], list[int]]:
        """Each pair's whole source and target length in tokens: what the ``long`` rule counts."""
        encoded = self.encode(sources, targets)
        return encoded["source_tokens"], encoded["target_tokens"]

    def encode(self, sources: list[str], targets: list[str]) -> dict[str, list[Any]]:
        """The pairs' training ids (truncated), and the sides' whole lengths in tokens."""
        if not sources:
            return {name: [] for name in (*TOKEN_COLUMNS, "source_tokens", "target_tokens")}
        if self.direction.causal:
            return self._encode_prompted(sources, targets)
        texts = [self.direction.source_text(s) for s in sources]
        ids = batch_ids(self.tokenizer, texts)
        labels = batch_ids(self.tokenizer, targets, target=True)
        source_tokens = [len(row) for row in ids]
        target_tokens = [len(row) for row in labels]
        mask = [[1] * n for n in source_tokens]
        long_sources = [i for i, n in enumerate(source_tokens) if n > self.max_source_length]
        if long_sources:
            cut = self.tokenizer(
                [texts[i] for i in long_sources], max_length=self.max_source_length, truncation=True
            )
            for j, i in enumerate(long_sources):
                ids[i], mask[i] = cut["input_ids"][j], cut["attention_mask"][j]
        long_targets = [i for i, n in enumerate(target_tokens) if n > self.max_target_length]
        if long_targets:
            cut = self.tokenizer(
                text_target=[targets[i] for i in long_targets],
                max_length=self.max_target_length,
                truncation=True,
            )
            for j, i in enumerate(long_targets):
                labels[i] = cut["input_ids"][j]
        return {
            "input_ids": ids,
            "attention_mask": mask,
            "labels": labels,
            "source_tokens": source_tokens,
            "target_tokens": target_tokens,
        }

    def _encode_prompted(self, sources: list[str], targets: list[str]) -> dict[str, list[Any]]:
        """A decoder-only model's training ids: prompt, then target and the turn's end,
        one sequence; the labels are -100 over the prompt, so the loss is on the target.

        The source is cut to ``max_source_length`` inside the prompt, never the prompt's
        instruction; the target to ``max_target_length`` with its end token kept. The
        target's ids are what the tokenizer makes of prompt and target together, past
        the prompt's ids (as ALMA's recipe counts them), so a space or a merge at the
        seam is tokenized as it is where the model reads a prompt and writes on.
        """
        tok, direction = self.tokenizer, self.direction
        source_ids = tok(sources, add_special_tokens=False)["input_ids"]
        source_tokens = [len(ids) for ids in source_ids]
        fitted = [
            tok.decode(ids[: self.max_source_length], skip_special_tokens=True)
            if len(ids) > self.max_source_length
            else text
            for text, ids in zip(sources, source_ids, strict=True)
        ]
        prompts = [direction.source_text(text) for text in fitted]
        prompt_ids = tok(prompts)["input_ids"]
        whole = tok(
            [p + direction.target_prefix + t for p, t in zip(prompts, targets, strict=True)]
        )
        end = (
            tok(direction.target_suffix, add_special_tokens=False)["input_ids"]
            if direction.target_suffix
            else []
        )
        room = max(1, self.max_target_length - len(end))
        columns: dict[str, list[Any]] = {name: [] for name in TOKEN_COLUMNS}
        target_tokens = []
        for prompt, both, target in zip(prompt_ids, whole["input_ids"], targets, strict=True):
            if both[: len(prompt)] == prompt:
                answer = list(both[len(prompt) :])
            else:  # the seam merged across: the target alone, as the model will write it
                answer = tok(direction.target_prefix + target, add_special_tokens=False)[
                    "input_ids"
                ]
            target_tokens.append(len(answer) + len(end))
            answer = answer[:room] + end
            columns["input_ids"].append([*prompt, *answer])
            columns["attention_mask"].append([1] * (len(prompt) + len(answer)))
            columns["labels"].append([IGNORED] * len(prompt) + answer)
        return {**columns, "source_tokens": source_tokens, "target_tokens": target_tokens}

    def fingerprint(self) -> str:
        """A digest of everything that decides the ids: the tokenizer's files as it saves
        them, the direction's prefix and language codes, the lengths, and a probe's ids."""
        digest = hashlib.sha256(tokenizer_files_digest(self.tokenizer).encode())
        probe = self.encode([_PROBE[0]], [_PROBE[1]])
        settings = [
            type(self.tokenizer).__name__,
            self.direction.source_text(""),
            getattr(self.tokenizer, "src_lang", None),
            getattr(self.tokenizer, "tgt_lang", None),
            self.max_source_length,
            self.max_target_length,
            probe["input_ids"],
            probe["labels"],
        ]
        if self.direction.causal:  # what a prompt's target carries around it
            settings += [self.direction.target_prefix, self.direction.target_suffix]
        digest.update(json.dumps(settings, ensure_ascii=False, default=str).encode())
        return digest.hexdigest()


def tokenizer_files_digest(tokenizer: Any) -> str:
    """A digest of the tokenizer's files as it saves them (vocabularies, settings)."""
    digest = hashlib.sha256()
    with tempfile.TemporaryDirectory() as folder:
        tokenizer.save_pretrained(folder)
        for path in sorted(Path(folder).iterdir()):
            digest.update(path.name.encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def tokenize_pairs(
    pairs: list[Any],
    tokenizer: Any,
    direction: Direction,
    max_source_length: int,
    max_target_length: int,
) -> Any:
    """A ``datasets.Dataset`` with input_ids, attention_mask and labels (unpadded).

    The sources get the direction's prefix (Marian's label, T5's task); the language
    codes of NLLB, M2M100 and mBART-50 come from the tokenizer's ``src_lang`` and
    ``tgt_lang``, which :func:`workbench.core.model.direction.apply_direction` set.
    """
    import datasets

    encoded = PairTokenizer(tokenizer, direction, max_source_length, max_target_length).encode(
        [p.source for p in pairs], [p.target for p in pairs]
    )
    return datasets.Dataset.from_dict({name: encoded[name] for name in TOKEN_COLUMNS})


def training_set(pairs: Sequence[Any], encoder: PairTokenizer) -> tuple[Any, list[int]]:
    """The Trainer's dataset of ``pairs`` and each one's source length in tokens.

    A prepared :class:`~.arrow_pairs.PairTable` already holds both, memory-mapped, when
    the same tokenizer made them (its fingerprint says so); anything else is tokenized
    now, in memory.
    """
    from workbench.core.data.arrow_pairs import PairTable

    if (
        isinstance(pairs, PairTable)
        and pairs.tokenized
        and pairs.fingerprint == encoder.fingerprint()
    ):
        return pairs.token_dataset(), pairs.column("length")
    dataset = tokenize_pairs(
        list(pairs),
        encoder.tokenizer,
        encoder.direction,
        encoder.max_source_length,
        encoder.max_target_length,
    )
    return dataset, [len(ids) for ids in dataset["input_ids"]]


def token_counter(tokenizer: Any, direction: Direction) -> PairTokenizer:
    """Token lengths as training counts them (the direction's prefix on each source), for
    the cleaning's ``long`` rule (no bound on the lengths: nothing is truncated)."""
    return PairTokenizer(tokenizer, direction, 10**9, 10**9)
