"""The Lab's studies as text: one wording for ``workbench lab``, the TUI and logs.

Plain strings (tables, plotext charts without colour codes) so they read the same in a
terminal, a pipe, a log file and a Textual widget; the attention maps are styled lines,
because their shades are coloured where the terminal can show it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.core.views.text_chart import plain_chart

if TYPE_CHECKING:
    from workbench.core.attention.heatmap import Line
    from workbench.core.lab.attention_kinds import AttentionKinds
    from workbench.core.lab.decoding_strategies import DecodingStudy
    from workbench.core.lab.kv_cache import CacheStudy
    from workbench.core.lab.prompt_attention import PromptAttention

# --------------------------------------------------------------------------- decoding


def decoding_text(study: DecodingStudy) -> str:
    """The table, the chart of BLEU against time, one sentence under every strategy, and
    what the figures show."""
    from workbench.core.lab.decoding_strategies import findings
    from workbench.core.records.scores import N_BOOTSTRAP
    from workbench.core.views.numbers import interval
    from workbench.core.views.score_text import format_p

    lines = [
        f"decoding strategies on the first {study.size} sentences of the test set of "
        f"{study.run_dir} (BLEU tokenize={study.bleu_tokenize}; 95% intervals and p "
        "against greedy from sacreBLEU's paired bootstrap; sampled rows: mean of 3 "
        "seeds, the interval and p of seed 0)"
    ]
    header = (
        f"{'strategy':<16} {'BLEU':>6} {'95% CI':>13} {'p':>10} {'seeds ±':>7} "
        f"{'chrF':>6} {'distinct':>8} {'varies':>6} {'repeats':>7} {'len':>5} "
        f"{'ms/sent':>8}"
    )
    lines += [header, "-" * len(header)]
    for r in study.results:
        ci = interval(r.bleu_ci)
        p = "baseline" if r is study.results[0] else format_p(r.bleu_p, N_BOOTSTRAP)
        spread, varies = (f"{r.spread:.2f}", f"{r.varies:.0%}") if r.sampled else ("-", "-")
        lines.append(
            f"{r.name:<16} {r.bleu:>6.2f} {ci:>13} {p:>10} {spread:>7} "
            f"{r.chrf:>6.2f} {r.distinct:>8.0%} {varies:>6} {r.repeated:>7.0%} "
            f"{r.length_ratio:>5.2f} {r.ms_per_sentence:>8.1f}"
        )
    lines += [
        "distinct: different outputs over the set · varies: sentences whose output "
        "changes with the seed · repeats: outputs with a repeated 3-gram · len: length "
        "ratio to the references",
        *picks_table(study),
        "",
        bleu_time_chart(study),
        "",
        "one sentence under every strategy",
        f"  source:    {study.example_source}",
        f"  reference: {study.example_reference}",
    ]
    for r in study.results:
        lines += [f"  {r.name if n == 0 else '':<16} {text}" for n, text in enumerate(r.example)]
    lines += [f"  {r.name:<16} {text}" for r in study.picks for text in r.example]
    return "\n".join([*lines, "", findings(study)])


def picks_table(study: DecodingStudy) -> list[str]:
    """The quality-aware arms: each led by a metric that did not pick it, the other
    marked "(used to pick)", and what the arm costs beside beam search (none: [])."""
    from workbench.core.lab.picked_arms import BEAM_BASELINE, SURFACE
    from workbench.core.picking.pick_text import used_to_pick
    from workbench.core.views.numbers import interval

    if not study.picks:
        return []
    header = (
        f"{'arm':<16} {'leads (did not pick)':<24} {'picked by':<26} {'ms/sent':>8} "
        f"{'× ' + BEAM_BASELINE:>8} {'cand/s':>7} {'pick ms':>7}"
    )
    lines = [
        "",
        f"picks: {study.picks[0].candidates} sampled candidates a sentence (seed 0), one "
        "picked; a metric that picked overrates its pick, so each row leads with one that "
        "did not",
        header,
        "-" * len(header),
    ]
    for r in study.picks:
        lead_ci = r.chrf_ci if r.leading == "chrF" else r.bleu_ci
        lead = r.chrf if r.leading == "chrF" else r.bleu
        used = r.bleu if r.leading == "chrF" else r.chrf
        picked_by = used_to_pick(r.metric)
        if r.metric in SURFACE:  # its own score; a neural picker's is not kept
            picked_by += f" {used:.2f}"
        times = f"{r.times_beam:.1f}×" if r.times_beam is not None else "-"
        lines.append(
            f"{r.name:<16} {f'{r.leading} {lead:.2f} {interval(lead_ci)}':<24} "
            f"{picked_by:<26} {r.ms_per_sentence:>8.1f} "
            f"{times:>8} {r.candidates_per_second:>7.0f} {r.scoring_ms_per_sentence:>7.1f}"
        )
    lines.append(
        f"× {BEAM_BASELINE}: time a sentence (candidates, then the pick) over beam search's · "
        "cand/s: candidates generated a second · pick ms: the pick's own scoring a sentence"
    )
    return lines


def bleu_time_chart(study: DecodingStudy, width: int = 72) -> str:
    """BLEU against milliseconds per sentence: each strategy a letter, keyed underneath
    (a legend box would cover the points in the corner it takes)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    pairs = list(zip(letters, study.results, strict=False))

    def draw(plt: Any) -> None:
        for letter, r in pairs:
            plt.scatter([r.ms_per_sentence], [r.bleu], marker=letter)
        plt.title("BLEU against time per sentence")
        plt.xlabel("ms per sentence")
        plt.ylabel("BLEU")

    return plain_chart(draw, width) + "\n" + "  ".join(f"{letter} {r.name}" for letter, r in pairs)


# --------------------------------------------------------------------------- the KV cache


def cache_text(study: CacheStudy) -> str:
    """The timings with and without the cache, the formula against the measured size, and
    a chart of time per token against t."""
    lines = [
        f"greedy decoding, batch 1, {len(study.sentences)} sentences, exactly t new "
        f"tokens, median of {study.repeats} runs",
        f"{'t':>5}  {'ms/token cached':>15}  {'uncached':>9}  {'speed-up':>8}  same ids",
    ]
    for row in study.timings:
        lines.append(
            f"{row.new_tokens:>5}  {row.ms_cached:>15.2f}  {row.ms_uncached:>9.2f}  "
            f"{row.speedup:>7.2f}x  {'yes' if row.identical else 'NO'}"
        )
    if not study.identical:
        lines.append("warning: the cache changed the output ids at some t (see 'same ids')")
    layers, d, s = study.layers, study.d_model, study.source_tokens
    lines += [
        "",
        f"cache size: L={layers} decoder layers, d={d} (= {study.heads} heads x "
        f"{study.head_dim}), S={s} source tokens of '{study.size_sentence}', {study.dtype}",
        "t = positions the decoder was fed (start token + first t-1 outputs) after t new tokens;",
        "Q is not cached: only the newest position's query is ever used, while every step "
        "reads all past K and V",
        f"formula: self-attention 2*L*t*d = {2 * layers * d}*t floats, cross-attention "
        f"2*L*S*d = {2 * layers * s * d:,} floats",
        f"{'t':>5}  {'self formula':>12}  {'measured':>9}  {'cross formula':>13}  "
        f"{'measured':>9}  {'bytes':>9}",
    ]
    for size in study.sizes:
        lines.append(
            f"{size.steps:>5}  {size.self_formula:>12,}  {size.self_measured:>9,}  "
            f"{size.cross_formula:>13,}  {size.cross_measured:>9,}  "
            f"{size.total_bytes:>9,}"
        )
    lines.append(
        "formula and measured cache agree at every t"
        if study.agrees
        else "formula and measured cache DISAGREE: see the rows above"
    )
    return "\n".join([*lines, cache_chart(study)])


def cache_chart(study: CacheStudy, width: int = 64) -> str:
    """Milliseconds per token against t, with and without the cache."""
    ts = [row.new_tokens for row in study.timings]

    def draw(plt: Any) -> None:
        plt.plot(ts, [row.ms_cached for row in study.timings], label="cached", marker="dot")
        plt.plot(ts, [row.ms_uncached for row in study.timings], label="uncached", marker="x")
        plt.title("ms per token against t")
        plt.xlabel("t (new tokens)")

    return plain_chart(draw, width, 14)


# --------------------------------------------------------------------------- attention kinds


def kinds_lines(
    result: AttentionKinds,
    width: int = 80,
    colour: bool = False,
    only: int | None = None,
    choose: Any = None,
    words: bool = False,
) -> list[Line]:
    """The three heatmaps, each under its title, its legend naming its own axes, as styled
    lines (``workbench.terminal.to_rich`` shows them).

    ``only`` (0 encoder, 1 decoder, 2 cross) draws just that one: the TUI shows one map at
    a time, since three do not fit a terminal's height, in the same wording.
    ``choose(kmap)`` gives the (layer, head) to show for a kind (0-based, "mean", or None
    for the default view); ``words`` merges pieces into words.
    """
    from workbench.core.attention.heatmap import build_lines

    lines: list[Line] = [
        [(f"source:      {result.sentence}", "")],
        [(f"translation: {result.translation or '(empty)'}", "")],
    ]
    kinds = result.kinds if only is None else (result.kinds[only % len(result.kinds)],)
    for kmap in kinds:
        layer, head = choose(kmap) if choose else (None, None)
        view = kmap.view(layer=layer, head=head, words=words)
        lines += [[("", "")], [(f"{kmap.kind} · {view.title}", "bold")]]
        lines += build_lines(
            view.row_labels,
            view.col_labels,
            view.matrix,
            width=width,
            colour=colour,
            axes=("[ ] the strongest column of each row", kmap.axes),
        )
    return lines


def heads_text(result: AttentionKinds) -> str:
    """The per-head table, then each kind's most focused and most spread head."""
    lines = [
        "per head",
        "entropy: mean over rows, in bits (0 = all on one token; ceiling = spread evenly "
        "over what the row can see) · agreement: share of rows whose strongest source "
        "token is the mean view's",
        f"{'kind':<30} {'layer':>5} {'head':>4} {'entropy':>7} {'ceiling':>7} {'agreement':>9}",
    ]
    for row in result.heads:
        agreement = "-" if row.agreement is None else f"{row.agreement:.0%}"
        lines.append(
            f"{row.kind:<30} {row.layer + 1:>5} {row.head + 1:>4} "
            f"{row.entropy_bits:>7.2f} {row.uniform_bits:>7.2f} {agreement:>9}"
        )
    for kmap in result.kinds:
        rows = [h for h in result.heads if h.kind == kmap.kind]
        focused = min(rows, key=lambda h: h.entropy_bits)
        spread = max(rows, key=lambda h: h.entropy_bits)
        line = (
            f"{kmap.kind}: most focused layer {focused.layer + 1} head {focused.head + 1} "
            f"({focused.entropy_bits:.2f} bits), most spread layer {spread.layer + 1} "
            f"head {spread.head + 1} ({spread.entropy_bits:.2f} bits)"
        )
        if kmap is result.cross:
            best = max(rows, key=lambda h: h.agreement or 0.0)
            line += (
                f", closest to the mean view layer {best.layer + 1} head {best.head + 1} "
                f"({best.agreement or 0.0:.0%})"
            )
        lines.append(line)
    return "\n".join(lines)


def study_text(
    result: DecodingStudy | CacheStudy | AttentionKinds | PromptAttention,
) -> str | None:
    """A finished study as text; None for the attention kinds, which are drawn as maps."""
    from workbench.core.lab.decoding_strategies import DecodingStudy
    from workbench.core.lab.kv_cache import CacheStudy
    from workbench.core.lab.prompt_attention import PromptAttention, prompt_attention_text

    if isinstance(result, DecodingStudy):
        return decoding_text(result)
    if isinstance(result, CacheStudy):
        return cache_text(result)
    if isinstance(result, PromptAttention):
        return prompt_attention_text(result)
    return None
