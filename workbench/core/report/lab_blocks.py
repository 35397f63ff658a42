"""The Lab studies saved for a run, as headings, paragraphs and tables that the report's
markdown and HTML both render, from the typed studies (:class:`LabStudies`)."""

from __future__ import annotations

from workbench.core.lab.attention_kinds import AttentionKinds
from workbench.core.lab.decoding_strategies import DecodingStudy, findings
from workbench.core.lab.kv_cache import CacheStudy
from workbench.core.lab.picked_arms import BEAM_BASELINE, SURFACE, PickResult
from workbench.core.lab.prompt_attention import PART_NAMES, PromptAttention
from workbench.core.lab.prompt_attention import findings as prompt_findings
from workbench.core.picking.pick_text import used_to_pick
from workbench.core.records.scores import N_BOOTSTRAP
from workbench.core.report.contents import RunReport
from workbench.core.views.blocks import Block, Heading, Paragraph, Table, with_code
from workbench.core.views.numbers import MISSING, interval, number, percent
from workbench.core.views.score_text import format_p

#: The columns of the KV cache's size table.
SIZE_HEADER = [
    "t",
    "Self-attention: formula",
    "measured",
    "Cross-attention: formula",
    "measured",
    "Bytes",
]

#: The columns of the decoding study's quality-aware arms: what each scored, then its cost.
PICKS_HEADER = [
    "Arm",
    "Picked by",
    "BLEU (95% CI)",
    "p vs greedy",
    "chrF (95% CI)",
    "Distinct a sentence",
    "Length ratio",
    "ms/sentence",
    f"× {BEAM_BASELINE}",
    "Candidates/s",
    "Pick ms/sentence",
]


def lab_blocks(report: RunReport) -> list[Block]:
    """The Lab studies saved for this run, as headings, paragraphs and tables that the
    markdown and the HTML both render (empty when none was run)."""
    lab = report.lab
    blocks: list[Block] = []
    if lab.decoding is not None:
        blocks += decoding_blocks(lab.decoding)
    if lab.cache is not None:
        blocks += cache_blocks(lab.cache)
    if lab.attention is not None:
        blocks += attention_blocks(lab.attention)
    if lab.prompt_attention is not None:
        blocks += prompt_attention_blocks(lab.prompt_attention)
    if lab.unreadable:
        blocks.append(
            Paragraph(
                with_code(
                    f"Left out: {', '.join(lab.unreadable)} in the run folder does not read "
                    "as its study (damaged or edited); run the study again with "
                    "`workbench lab`."
                )
            )
        )
    return blocks


def decoding_blocks(study: DecodingStudy) -> list[Block]:
    """The decoding strategies: one row per strategy, and the paragraph of findings."""
    header = [
        "Strategy",
        "BLEU (95% CI)",
        "p vs greedy",
        "Seeds ±",
        "chrF",
        "Distinct",
        "Varies",
        "Repeats",
        "Length ratio",
        "ms/sentence",
    ]
    rows = [
        [
            r.name,
            f"{number(r.bleu)} ({interval(r.bleu_ci)})",
            "baseline" if n == 0 else format_p(r.bleu_p, N_BOOTSTRAP),
            number(r.spread) if r.sampled else MISSING,
            number(r.chrf),
            percent(r.distinct),
            percent(r.varies) if r.sampled else MISSING,
            percent(r.repeated),
            number(r.length_ratio),
            number(r.ms_per_sentence, 1),
        ]
        for n, r in enumerate(study.results)
    ]
    return [
        Heading("Decoding strategies", level=3),
        Paragraph(
            f"The first {number(study.size)} sentences of the test set; "
            "BLEU with sacreBLEU's 95% bootstrap interval and the paired p-value "
            "against greedy; sampled rows are the mean of three seeds (interval "
            "and p of the first), with the BLEU range over the seeds.",
        ),
        Table(header, rows),
        *picks_blocks(study.picks),
        Paragraph(findings(study)),
    ]


def picks_blocks(picks: list[PickResult]) -> list[Block]:
    """The quality-aware arms (none: no blocks): each arm's scores, the metric that picked
    marked "(used to pick)" wherever it shows, and what the arm costs beside beam search."""
    if not picks:
        return []

    def scored(metric: str, value: float, ci: list[float], arm: PickResult) -> str:
        cell = f"{number(value)} ({interval(ci)})"
        return f"{cell}, {used_to_pick(metric)}" if metric == arm.metric else cell

    rows = [
        [
            r.name,
            f"{r.picked_by.partition(':')[0]}: {used_to_pick(r.metric)}",
            scored("BLEU", r.bleu, r.bleu_ci, r),
            paired_p(r),
            scored("chrF", r.chrf, r.chrf_ci, r),
            number(r.distinct),
            number(r.length_ratio),
            number(r.ms_per_sentence, 1),
            MISSING if r.times_beam is None else f"{number(r.times_beam, 1)}×",
            number(r.candidates_per_second, 0),
            number(r.scoring_ms_per_sentence, 1),
        ]
        for r in picks
    ]
    return [
        Paragraph(
            with_code(
                f"Quality-aware arms: {number(picks[0].candidates)} sampled candidates a "
                "sentence (seed 0), as `translate --pick` draws them, and one picked by MBR "
                'or QE. A metric that picked overrates its own pick, so it is marked "(used '
                'to pick)" and each arm is read on the metrics that did not pick it. '
                "p vs greedy: the paired bootstrap's p of the metric the arm leads with, "
                "and of BLEU or chrF where it picked (a test of the picker on its own "
                "utility). "
                f"ms/sentence: the candidates generated, then the pick; × {BEAM_BASELINE}: "
                f"that time over {BEAM_BASELINE}'s; Candidates/s: drawn a second while "
                "generating; Pick ms/sentence: the pick's own scoring."
            )
        ),
        Table(PICKS_HEADER, rows),
    ]


def paired_p(arm: PickResult) -> str:
    """An arm's p against greedy, each labelled with its metric: the metric the arm leads
    with, then the surface metric that picked it, marked, whose p tests the picker on its
    own utility (``BLEU: p = 0.042; chrF (used to pick): p < 0.001``)."""

    def labelled(metric: str, label: str) -> str:
        p = arm.p(metric)
        return f"{label}: {MISSING if p is None else format_p(p, N_BOOTSTRAP)}"

    cells = [labelled(arm.leading, arm.leading)]
    if arm.metric in SURFACE:
        cells.append(labelled(arm.metric, used_to_pick(arm.metric)))
    return "; ".join(cells)


def cache_blocks(study: CacheStudy) -> list[Block]:
    """The KV cache: the formula against the measured size, and the timings."""
    explained = (
        "After t generated tokens the decoder's self-attention caches "
        "2·L·t·d floats (K and V of every layer and position) and the "
        "cross-attention 2·L·S·d (K and V of the source, computed once); Q is "
        "not cached, since only the newest position's query is ever used. "
        f"Here L = {number(study.layers)} decoder layers, d = {number(study.d_model)}, "
        f"S = {number(study.source_tokens)} source tokens, {study.dtype}. "
        + (
            "The measured cache equals the formula at every t."
            if study.agrees
            else "The measured cache does NOT equal the formula."
        )
    )
    sizes = [
        [
            number(z.steps),
            number(z.self_formula),
            number(z.self_measured),
            number(z.cross_formula),
            number(z.cross_measured),
            number(z.total_bytes),
        ]
        for z in study.sizes
    ]
    timings = [
        [
            number(t.new_tokens),
            number(t.ms_cached),
            number(t.ms_uncached),
            f"{number(round(t.speedup, 3))}×",
            "yes" if t.identical else "NO",
        ]
        for t in study.timings
    ]
    return [
        Heading("The KV cache", level=3),
        Paragraph(explained),
        Table(SIZE_HEADER, sizes),
        Table(["t", "ms/token with the cache", "without", "Speed-up", "Same output"], timings),
    ]


def attention_blocks(study: AttentionKinds) -> list[Block]:
    """The three attentions: each head's entropy, its ceiling and its agreement."""
    rows = [
        [
            h.kind,
            number(h.layer + 1),  # 1-based, as the CLI prints them
            number(h.head + 1),
            number(round(h.entropy_bits, 4)),
            number(round(h.uniform_bits, 4)),
            percent(None if h.agreement is None else round(h.agreement, 4)),
        ]
        for h in study.heads
    ]
    return [
        Heading("The three attentions", level=3),
        Paragraph(
            f"Sentence: {study.sentence} → {study.translation}."
            " Entropy is the mean over a head's rows in bits (0: all on one "
            "token; the ceiling: spread evenly over what the row can see); "
            "agreement is the share of rows whose strongest source token is the "
            "averaged view's.",
        ),
        Table(["Kind", "Layer", "Head", "Entropy", "Ceiling", "Agreement"], rows),
    ]


def prompt_attention_blocks(study: PromptAttention) -> list[Block]:
    """A decoder-only model's attention: the prompt's parts, the mask, and per layer the
    translation's share on instruction, source and itself."""
    parts = [
        [PART_NAMES[p.name], number(p.start), number(p.stop), number(p.tokens)] for p in study.parts
    ]
    layers = [
        [
            number(row.layer + 1),
            percent(round(row.before, 4)),
            percent(round(row.source, 4)),
            percent(round(row.after, 4)),
            percent(round(row.translation, 4)),
        ]
        for row in study.layers
    ]
    return [
        Heading("Attention inside the prompt (a decoder-only model)", level=3),
        Paragraph(f"Sentence: {study.sentence} → {study.translation} ({study.prompt} prompt)."),
        Paragraph(prompt_findings(study)),
        Table(["Part", "From token", "To token", "Tokens"], parts),
        Table(
            ["Layer", "Instruction before", "Source", "Instruction after", "Translation"],
            layers,
        ),
    ]
