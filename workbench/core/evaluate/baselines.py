"""Published baselines: what a model's authors scored on a run's test set, beside "before".

A "before" score is the model as downloaded, on a test set its authors also scored. When
the two are far apart the run, not the model, is usually at fault, and the mistakes are
few: a BLEU tokenizer other than the one the published score used (``13a`` scores
unsegmented Chinese near 0), a Marian label other than the test set's language, and
length bounds that cut sources or outputs. :data:`PUBLISHED_SCORES` holds the figures with
where they were read; :func:`published_score` finds the one that fits a run (model id, test
set, languages, whatever preset it came from) and :func:`compare_with_published` says how
far "before" is from it and, past :data:`TOLERANCE`, which of those mistakes this run
shows, each with its fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.core.data.pair import Pair
from workbench.core.languages import base_language
from workbench.core.records.run_records import BaselineRecord
from workbench.core.translate.translator import Translator

#: BLEU points "before" may be from the published score before a warning. Within it: the
#: Hub's PyTorch conversion of the Marian checkpoint, another beam size, the few test pairs
#: cleaning drops.
TOLERANCE = 3.0


@dataclass(frozen=True)
class PublishedScore:
    """A model's authors' score on one test set in one direction, and how it was made."""

    model: str  # the Hub id
    test_set: str  # as the workbench names it (data/sources.py KNOWN_TEST_SETS)
    source_lang: str  # ISO 639-1
    target_lang: str
    bleu: float
    chrf: float | None  # 0-100, as the workbench reports chrF (the OPUS files say 0-1)
    bleu_tokenize: str  # the sacreBLEU tokenizer the score was made with
    #: The Marian label of the test set's target language in this model (None: no labels).
    target_label: str | None
    source: str  # the release the figure belongs to
    url: str  # where the figure was read


PUBLISHED_SCORES: tuple[PublishedScore, ...] = (
    # Tatoeba-Challenge models/eng-zho/opus-2020-07-17.bleu-scores.txt ("eng-zho
    # newstest2018 22.0"; 3,981 sentences, reference length 155,171 in .scores.txt: counted
    # in characters, so sacreBLEU's zh tokenizer) and .chrf-scores.txt (0.21186). The Hub
    # model card lists only Tatoeba-test (31.4). newstest2018 is Simplified Chinese:
    # >>cmn_Hans<< in this model's vocabulary.
    PublishedScore(
        model="Helsinki-NLP/opus-mt-en-zh",
        test_set="newstest2018",
        source_lang="en",
        target_lang="zh",
        bleu=22.0,
        chrf=21.19,
        bleu_tokenize="zh",
        target_label=">>cmn_Hans<<",
        source="Helsinki-NLP opus-2020-07-17",
        url="https://github.com/Helsinki-NLP/Tatoeba-Challenge/blob/master/models/eng-zho/"
        "opus-2020-07-17.bleu-scores.txt",
    ),
    # The Hub model card's benchmark table (from opus-2020-02-26.eval.txt):
    # "newstest2013.en.de 26.9 0.553". Scored with sacreBLEU's default tokenizer, 13a.
    PublishedScore(
        model="Helsinki-NLP/opus-mt-en-de",
        test_set="newstest2013",
        source_lang="en",
        target_lang="de",
        bleu=26.9,
        chrf=55.3,
        bleu_tokenize="13a",
        target_label=None,
        source="Helsinki-NLP opus-2020-02-26",
        url="https://huggingface.co/Helsinki-NLP/opus-mt-en-de",
    ),
    # facebook/nllb-200-distilled-600M (the nllb-en-zh preset): its card reports FLORES-200
    # only (BLEU, spBLEU, chrF++ in its metrics file), nothing on newstest2018, so no row.
)


def published_score(
    model: str, test_set: str, source_lang: str, target_lang: str
) -> PublishedScore | None:
    """The published score of ``model`` on ``test_set`` in this direction, or None.

    Matched on the Hub id (as the Hub, ignoring case), the test set's name and the base
    languages (``zho_Hans`` is ``zh``): any preset, or none, that runs that model on that
    set finds it.
    """
    languages = (base_language(source_lang), base_language(target_lang))
    for score in PUBLISHED_SCORES:
        if (
            score.model.lower() == model.strip().lower()
            and score.test_set == test_set
            and (score.source_lang, score.target_lang) == languages
        ):
            return score
    return None


@dataclass(frozen=True)
class LongSentences:
    """How many test sentences pass a run's length bounds, and the longest of each side."""

    size: int
    max_source_length: int
    sources: int  # sources longer than max_source_length tokens (split or cut)
    longest_source: int
    max_new_tokens: int
    references: int  # references longer than max_new_tokens target tokens
    longest_reference: int
    positions: int | None  # the model's position table, the most either bound may be


def count_long(pairs: Sequence[Pair], translator: Translator, max_new_tokens: int) -> LongSentences:
    """Test sentences past the bounds, counted with the run's tokenizer (a second or two
    for newstest2018's 3,981 pairs: a fraction of translating them)."""
    tokenizer = translator.tokenizer
    sources = [
        len(ids)
        for ids in tokenizer([translator.direction.source_text(p.source) for p in pairs])[
            "input_ids"
        ]
    ]
    references = [len(ids) for ids in tokenizer(text_target=[p.target for p in pairs])["input_ids"]]
    return LongSentences(
        size=len(pairs),
        max_source_length=translator.max_source_length,
        sources=sum(n > translator.max_source_length for n in sources),
        longest_source=max(sources, default=0),
        max_new_tokens=max_new_tokens,
        references=sum(n > max_new_tokens for n in references),
        longest_reference=max(references, default=0),
        positions=translator.direction.max_positions,
    )


def compare_with_published(
    published: PublishedScore,
    before_bleu: float,
    bleu_tokenize: str,
    target_label: str | None,
    lengths: LongSentences,
) -> BaselineRecord:
    """The run's "before" beside the published score: ``summary.json``'s ``baseline``.

    ``warning`` is None within :data:`TOLERANCE`, else one line: how far, then the causes
    this run's settings show (most likely first, each with its fix), then those they
    rule out.
    """
    difference = before_bleu - published.bleu
    warning = None
    if abs(difference) > TOLERANCE:
        fits, ruled_out = _causes(published, difference < 0, bleu_tokenize, target_label, lengths)
        side = "below" if difference < 0 else "above"
        warning = (
            f"before BLEU {before_bleu:.2f} is {abs(difference):.2f} {side} the published "
            f"{published.bleu:.1f} on {published.test_set}; "
            + (
                f"likely cause{'s, most likely first' if len(fits) > 1 else ''}: " + "; ".join(fits)
                if fits
                else "none of the usual causes shows in this run's settings: check that "
                f"the model is {published.source} and the test set all of {published.test_set}"
            )
            + (f". Ruled out: {', '.join(ruled_out)}" if ruled_out else "")
        )
    return BaselineRecord(
        bleu=published.bleu,
        chrf=published.chrf,
        bleu_tokenize=published.bleu_tokenize,
        source=published.source,
        url=published.url,
        test_set=published.test_set,
        before_bleu=round(before_bleu, 2),
        difference=round(difference, 2),
        warning=warning,
    )


def _causes(
    published: PublishedScore,
    below: bool,
    bleu_tokenize: str,
    target_label: str | None,
    lengths: LongSentences,
) -> tuple[list[str], list[str]]:
    """(causes this run shows, with their fixes; causes its settings rule out).

    In the order of their usual size: another tokenizer moves BLEU anywhere (13a on
    Chinese: near 0), another label changes the output's script or language, a length
    bound cuts only the long sentences. Only the tokenizer can raise a score.
    """
    fits: list[str] = []
    ruled_out: list[str] = []
    if bleu_tokenize != published.bleu_tokenize:
        near_zero = published.target_lang == "zh" and bleu_tokenize == "13a"
        fits.append(
            f"the BLEU tokenizer is {bleu_tokenize}, the published score used "
            f"{published.bleu_tokenize}"
            + (" (13a scores unsegmented Chinese near 0)" if near_zero else "")
            + f": --bleu-tokenize {published.bleu_tokenize}"
        )
    else:
        ruled_out.append(f"the BLEU tokenizer ({bleu_tokenize}, as published)")
    if not below:
        return fits, ruled_out
    if target_label != published.target_label:
        wanted = published.target_label or "none"
        fits.append(
            f"the Marian label is {target_label or 'none'}, not {wanted}, the label of "
            f"{published.test_set}'s references: --target-label '{wanted}'"
        )
    elif target_label is not None:
        ruled_out.append(f"the Marian label ({target_label})")
    # The fix is the longest sentence's length, within the model's positions (the
    # decoder start token takes one of them).
    positions = lengths.positions or max(lengths.longest_source, lengths.longest_reference) + 1
    if lengths.sources:
        fits.append(
            f"{lengths.sources:,} of {lengths.size:,} test sources are longer than "
            f"max_source_length {lengths.max_source_length} tokens (the longest "
            f"{lengths.longest_source}): --max-source-length "
            f"{min(lengths.longest_source, positions)}"
        )
    if lengths.references:
        fits.append(
            f"{lengths.references:,} of {lengths.size:,} test references are longer than "
            f"max_new_tokens {lengths.max_new_tokens} tokens (the longest "
            f"{lengths.longest_reference}): --max-new-tokens "
            f"{min(lengths.longest_reference, positions - 1)}"
        )
    if not (lengths.sources or lengths.references):
        ruled_out.append(
            f"the length bounds (no test sentence past {lengths.max_source_length} source "
            f"or {lengths.max_new_tokens} output tokens)"
        )
    return fits, ruled_out
