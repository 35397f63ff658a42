"""The Lab studies saved for a run, as headings, paragraphs and tables that the report's
markdown and HTML both render."""

from __future__ import annotations

from typing import Any

from workbench.core.records.scores import N_BOOTSTRAP
from workbench.core.report.model import RunReport
from workbench.core.views.numbers import MISSING, number, percent
from workbench.core.views.score_text import (
    format_p,
)

#: A piece of a Lab section: ("h3", title), ("p", text) or ("table", header, rows).
Block = tuple[Any, ...]


def lab_blocks(report: RunReport) -> list[Block]:
    """The Lab studies saved for this run, as headings, paragraphs and tables that the
    markdown and the HTML both render (empty when none was run)."""
    blocks: list[Block] = []
    decoding = report.lab.get("lab_decoding.json")
    if decoding:
        results = decoding.get("results") or []
        blocks += [
            ("h3", "Decoding strategies"),
            (
                "p",
                f"The first {number(decoding.get('size'))} sentences of the test set; "
                "BLEU with sacreBLEU's 95% bootstrap interval and the paired p-value "
                "against greedy; sampled rows are the mean of three seeds (interval "
                "and p of the first), with the BLEU range over the seeds.",
            ),
            (
                "table",
                [
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
                ],
                [
                    [
                        str(r.get("name", "")),
                        f"{number(r.get('bleu'))} ({number((r.get('bleu_ci') or [None])[0])}–"
                        f"{number((r.get('bleu_ci') or [None, None])[-1])})",
                        "baseline"
                        if n == 0
                        else format_p(float(r.get("bleu_p", 1.0)), N_BOOTSTRAP),
                        number(r.get("spread")) if r.get("sampled") else MISSING,
                        number(r.get("chrf")),
                        percent(r.get("distinct")),
                        percent(r.get("varies")) if r.get("sampled") else MISSING,
                        percent(r.get("repeated")),
                        number(r.get("length_ratio")),
                        number(r.get("ms_per_sentence"), 1),
                    ]
                    for n, r in enumerate(results)
                    if isinstance(r, dict)
                ],
            ),
            ("p", str(decoding.get("findings") or "")),
        ]
    cache = report.lab.get("lab_cache.json")
    if cache:
        blocks += [
            ("h3", "The KV cache"),
            (
                "p",
                "After t generated tokens the decoder's self-attention caches "
                "2·L·t·d floats (K and V of every layer and position) and the "
                "cross-attention 2·L·S·d (K and V of the source, computed once); Q is "
                "not cached, since only the newest position's query is ever used. "
                f"Here L = {number(cache.get('layers'))} decoder layers, d = "
                f"{number(cache.get('d_model'))}, S = {number(cache.get('source_tokens'))} "
                f"source tokens, {cache.get('dtype', '')}. "
                + (
                    "The measured cache equals the formula at every t."
                    if cache.get("agrees")
                    else "The measured cache does NOT equal the formula."
                ),
            ),
            (
                "table",
                [
                    "t",
                    "Self-attention: formula",
                    "measured",
                    "Cross-attention: formula",
                    "measured",
                    "Bytes",
                ],
                [
                    [
                        number(z.get("steps")),
                        number(z.get("self_formula")),
                        number(z.get("self_measured")),
                        number(z.get("cross_formula")),
                        number(z.get("cross_measured")),
                        number(z.get("total_bytes")),
                    ]
                    for z in cache.get("sizes") or []
                    if isinstance(z, dict)
                ],
            ),
            (
                "table",
                ["t", "ms/token with the cache", "without", "Speed-up", "Same output"],
                [
                    [
                        number(r.get("new_tokens")),
                        number(r.get("ms_cached")),
                        number(r.get("ms_uncached")),
                        f"{number(r.get('speedup'))}×",
                        "yes" if r.get("identical") else "NO",
                    ]
                    for r in cache.get("timings") or []
                    if isinstance(r, dict)
                ],
            ),
        ]
    kinds = report.lab.get("lab_attention.json")
    if kinds:
        blocks += [
            ("h3", "The three attentions"),
            (
                "p",
                f"Sentence: {kinds.get('sentence', '')} → {kinds.get('translation', '')}."
                " Entropy is the mean over a head's rows in bits (0: all on one "
                "token; the ceiling: spread evenly over what the row can see); "
                "agreement is the share of rows whose strongest source token is the "
                "averaged view's.",
            ),
            (
                "table",
                ["Kind", "Layer", "Head", "Entropy", "Ceiling", "Agreement"],
                [
                    [
                        str(h.get("kind", "")),
                        number(h.get("layer")),
                        number(h.get("head")),
                        number(h.get("entropy_bits")),
                        number(h.get("uniform_bits")),
                        percent(h.get("agreement")),
                    ]
                    for h in kinds.get("heads") or []
                    if isinstance(h, dict)
                ],
            ),
        ]
    return blocks
