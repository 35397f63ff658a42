"""Before and after: the held-out sets translated and scored on both sides of training.

Both held-out sets (validation, which chose the best epoch, and test, which chose nothing)
are translated once before training with the model as loaded, and once after with the
best model as saved, with the same decoding options, in fp32 with TF32 off. Rank 0 does
it alone. Every sentence's pair of translations is kept with its sentence BLEU and chrF
in ``<set>_translations.jsonl``, which the TUI's Samples pane reads. Where the model's
authors published a score on the test set, "before" is shown beside it
(:mod:`.baselines`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from workbench.core.atomic import write_json
from workbench.core.config.run_config import RunConfig
from workbench.core.data.pair import Pair
from workbench.core.data.splits import SplitData
from workbench.core.decoding import DecodeOptions
from workbench.core.evaluate.baselines import (
    PublishedScore,
    compare_with_published,
    count_long,
    published_score,
)
from workbench.core.evaluate.before_cache import (
    cached_before,
    decoding_key,
    keep_before,
    set_key,
)
from workbench.core.evaluate.metrics import (
    corpus_bleu,
    corpus_chrf,
    sentence_bleu,
    sentence_chrf,
)
from workbench.core.evaluate.significance import score_before_after
from workbench.core.events import EvalDone, EventSink, Note, Phase, Sample, Split
from workbench.core.records.files import read_json_dict
from workbench.core.records.run_records import BaselineRecord, BleuChrf
from workbench.core.records.scores import SetScores
from workbench.core.records.typed import decode
from workbench.core.run_folder.layout import RunFolder
from workbench.core.translate.translator import Translator


@dataclass(frozen=True)
class HeldOutSets:
    """The validation and test sets of a run, and how they are decoded and scored."""

    pairs: dict[Split, list[Pair]]  # "validation", then "test"
    names: dict[Split, str]  # where each comes from: "newstest2018", "10% held out, seed 42"
    options: DecodeOptions
    batch_size: int
    bleu_tokenize: str
    #: What the model's authors scored on the test set, where they published it.
    published: PublishedScore | None = None

    @classmethod
    def of(cls, data: SplitData, config: RunConfig) -> HeldOutSets:
        """The held-out sets of ``data``, decoded and scored as ``config`` says."""
        return cls(
            pairs={"validation": data.validation, "test": data.test},
            names={"validation": data.validation_name, "test": data.test_name},
            options=DecodeOptions(
                config.num_beams, config.max_new_tokens, config.no_repeat_ngram_size
            ),
            batch_size=config.eval_batch_size,
            bleu_tokenize=config.bleu_tokenize,
            published=published_score(
                config.model, data.test_name, config.data_source_lang, config.data_target_lang
            ),
        )

    def translate(self, translator: Translator, split: Split) -> list[str]:
        """One set translated in full fp32, so that before and after run the same arithmetic."""
        from workbench.core.model.load import fp32_decoding

        with fp32_decoding():
            return translator.translate_many(
                [p.source for p in self.pairs[split]], self.options, self.batch_size
            )

    def references(self, split: Split) -> list[str]:
        """The reference translations of one set, in order."""
        return [p.target for p in self.pairs[split]]


def sources_fingerprint(pairs: list[Pair]) -> str:
    """A hash of a set's source sentences, in order (before.json is reused only for them)."""
    return hashlib.sha256("\n".join(p.source for p in pairs).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class BeforeFile:
    """``before.json``: each set's "before" translations, and a fingerprint of the sources
    they translate (:func:`sources_fingerprint`), so a resume reuses them only for those."""

    sources: dict[str, str] = field(default_factory=dict)
    test: list[str] | None = None
    validation: list[str] | None = None

    def translations(self, split: str) -> list[str] | None:
        """The set's "before" translations, if the file holds them."""
        return self.test if split == "test" else self.validation if split == "validation" else None

    def fingerprint(self, split: str) -> str | None:
        """The fingerprint of the sources they were made from."""
        return self.sources.get(split)


def read_before(run_dir: Path, notes: list[str] | None = None) -> BeforeFile:
    """A run's ``before.json`` (empty when missing or unreadable); what did not read is
    said in ``notes``."""
    path = RunFolder(run_dir).before
    data = read_json_dict(path)
    if data is None:
        return BeforeFile()
    return decode(BeforeFile, data, notes, path.name) or BeforeFile()


def translate_before(
    sets: HeldOutSets, translator: Translator, run_dir: Path, emit: EventSink
) -> dict[str, list[str]]:
    """Both sets translated by the model before training: reused from before.json on
    resume, else from the cache of "before" translations (:mod:`.before_cache`) when this
    very model decoded these very sentences the same way before, else decoded now.

    Reused only for the very same sentences: a data file may have changed since.
    """
    saved = read_before(run_dir)
    fingerprints = {split: sources_fingerprint(pairs) for split, pairs in sets.pairs.items()}
    before: dict[str, list[str]] = {}
    decoding: str | None = None
    for split, pairs in sets.pairs.items():
        done = saved.translations(split)
        if (
            done is not None
            and len(done) == len(pairs)
            and saved.fingerprint(split) == (fingerprints[split])
        ):
            before[split] = done
            continue
        decoding = decoding or decoding_key(translator, sets.options, sets.batch_size)
        key = set_key(decoding, fingerprints[split])
        kept = cached_before(key, len(pairs))
        if kept is not None:
            emit(Note(f"before: {split} translations cached (same model, sentences, decoding)"))
            before[split] = kept
            continue
        emit(Phase("before", f"translating {len(pairs)} {split} sentences"))
        before[split] = sets.translate(translator, split)
        keep_before(key, before[split])
    write_json(RunFolder(run_dir).before, {**before, "sources": fingerprints})
    return before


def score_before(
    sets: HeldOutSets, before: dict[str, list[str]], emit: EventSink, translator: Translator
) -> tuple[dict[str, BleuChrf], BaselineRecord | None]:
    """Corpus BLEU and chrF of the "before" translations, one event per set, and the test
    set's "before" beside its published score (``summary.json``'s ``baseline``; None where
    none is published).

    A "before" far from the published score gets one warning that names the likely
    causes (:func:`~.baselines.compare_with_published`).
    """
    scores: dict[str, BleuChrf] = {}
    baseline: BaselineRecord | None = None
    for split, pairs in sets.pairs.items():
        references = sets.references(split)
        bleu = corpus_bleu(before[split], references, sets.bleu_tokenize)
        chrf = corpus_chrf(before[split], references)
        published = sets.published if split == "test" else None
        emit(
            EvalDone(
                step=0,
                epoch=0.0,
                bleu=bleu,
                chrf=chrf,
                stage="before",
                split=split,
                set_name=sets.names[split],
                size=len(pairs),
                published_bleu=published.bleu if published else None,
                published_source=published.source if published else "",
            )
        )
        scores[split] = BleuChrf(bleu=round(bleu, 2), chrf=round(chrf, 2))
        if published is not None:
            lengths = count_long(pairs, translator, sets.options.max_new_tokens)
            baseline = compare_with_published(
                published, bleu, sets.bleu_tokenize, translator.target_label, lengths
            )
            if baseline.warning:
                emit(Note(baseline.warning, "warning"))
    return scores, baseline


def translate_after(
    sets: HeldOutSets,
    best_dir: Path,
    device: str,
    emit: EventSink,
    done: dict[str, list[str]] | None = None,
) -> dict[str, list[str]]:
    """Both sets translated by the best model, loaded from disk as ``workbench translate``
    loads it; a set in ``done`` was already translated by this very model, so is not again
    (checkpoint averaging decodes validation to choose the model).

    Not the Trainer's model: accelerate leaves that one wrapped in bf16/fp16 autocast, so
    on a GPU it would decode at another precision than "before".
    """
    translator = Translator.from_pretrained(str(best_dir), device=device, backend="transformers")
    after: dict[str, list[str]] = dict(done or {})
    for split, pairs in sets.pairs.items():
        if split in after:
            continue
        emit(Phase("after", f"translating {len(pairs)} {split} sentences with {best_dir}"))
        after[split] = sets.translate(translator, split)
    return after


def score_after(
    sets: HeldOutSets,
    before: dict[str, list[str]],
    after: dict[str, list[str]],
    step: int,
    epoch: float,
    emit: EventSink,
) -> dict[str, SetScores]:
    """Both sides of each set scored together, with intervals and the paired test.

    The paired test scores both sides itself: the "after" event takes its numbers.
    """
    scores: dict[str, SetScores] = {}
    for split, pairs in sets.pairs.items():
        scores[split] = score_before_after(
            before[split],
            after[split],
            sets.references(split),
            sets.bleu_tokenize,
            split,
            sets.names[split],
        )
        emit(
            EvalDone(
                step=step,
                epoch=epoch,
                bleu=scores[split].bleu_after,
                chrf=scores[split].chrf_after,
                stage="after",
                split=split,
                set_name=sets.names[split],
                size=len(pairs),
            )
        )
    return scores


def score_rows(
    sets: HeldOutSets, before: dict[str, list[str]], after: dict[str, list[str]]
) -> dict[str, list[Sample]]:
    """Every sentence of each set with its before/after translation, sentence BLEU and
    sentence chrF.

    Scored once here and written by
    :func:`~workbench.core.run_folder.samples.write_translations`, so that the TUI's Samples
    pane only reads them.
    """
    return {
        split: [
            Sample(
                source=pair.source,
                reference=pair.target,
                before=b,
                after=a,
                bleu_before=round(sentence_bleu(b, pair.target, sets.bleu_tokenize), 2),
                bleu_after=round(sentence_bleu(a, pair.target, sets.bleu_tokenize), 2),
                chrf_before=round(sentence_chrf(b, pair.target), 2),
                chrf_after=round(sentence_chrf(a, pair.target), 2),
            )
            for pair, b, a in zip(pairs, before[split], after[split], strict=True)
        ]
        for split, pairs in sets.pairs.items()
    }


def pick_samples(rows: list[Sample], k: int) -> list[Sample]:
    """k evenly spread sentences (deterministic, not cherry-picked)."""
    if not rows or k <= 0:
        return []
    return rows[:: max(1, len(rows) // k)][:k]
