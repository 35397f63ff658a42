"""What a metric delta means to a human reader, by Kocmi et al. (2024).

Kocmi, Zouhar, Federmann and Post, "Navigating the Metrics Maze: Reconciling Score
Magnitudes and Accuracies" (ACL 2024), measured on thousands of system pairs that humans
judged how often a metric delta of a given size picks the same winner as the humans, and
fitted ``accuracy = a / (1 + e^(−b·Δ))`` per metric. Their package ``mt-thresholds``
(kocmitom/MT-Thresholds) holds the fitted ``a`` and ``b``, and is called here rather than
copied. Deltas are in each metric's points as the workbench shows them: BLEU and chrF
0–100, COMET ×100 (a COMET-22 delta of 0.0094 is 0.94 points). BLEU's ``a`` is 88.3%, so
no BLEU delta, however large, agrees with humans 90% of the time.

The fit dips under 50% for the smallest deltas (0.27 BLEU is 50%); agreement with humans
is never worse than a coin toss, so those read "a coin toss".
"""

from __future__ import annotations

#: The paper, as every reading cites it.
CITATION = "Kocmi et al. 2024"
#: mt-thresholds' name of each metric's curve, by the metric's name as shown here.
CURVES = {
    "BLEU": "bleu",
    "chrF": "chrf",
    "COMET-22": "comet22",
    "CometKiwi-22": "cometkiwi22",
    "COMET-20": "comet20",
    "COMET-21-QE": "comet21qe",
}
#: A COMET model of unknown lineage (a folder of your own) is read on the curve of the
#: model of its kind the field uses, and the reading says so; Unbabel's other releases
#: (COMET-21, COMET-20-QE) score on scales of their own and are not read at all.
ASSUMED = {"COMET": "COMET-22", "COMET-QE": "CometKiwi-22"}
#: Below this, a reading says it is close to a coin toss.
COIN_TOSS_ZONE = 60.0


def curve_of(metric: str) -> str | None:
    """The name of the curve ``metric``'s deltas are read on, or None (chrF++, TER: the
    paper fitted none)."""
    return metric if metric in CURVES else ASSUMED.get(metric)


def agreement(metric: str, delta: float) -> float | None:
    """How often (%) a delta of this size agrees with humans on which system is better;
    None for a metric without a curve."""
    import mt_thresholds

    curve = curve_of(metric)
    if curve is None:
        return None
    return float(mt_thresholds.accuracy(abs(delta), CURVES[curve]))


def ceiling(metric: str) -> float | None:
    """The most (%) any delta of ``metric`` agrees with humans: the curve's ``a``."""
    curve = curve_of(metric)
    return agreement(metric, 1e6) if curve is not None else None


def agreement_text(metric: str, delta: float) -> str | None:
    """``humans agree 64%``, ``humans agree 53%: close to a coin toss``, ``humans agree
    88%: as far as BLEU goes``; None for a metric without a curve."""
    accuracy = agreement(metric, delta)
    top = ceiling(metric)
    if accuracy is None or top is None:
        return None
    curve = curve_of(metric)
    assumed = ""
    if curve != metric:
        assumed = f" (read on {curve}'s curve: this COMET model has none of its own)"
    if accuracy <= 50.0:
        return f"humans agree 50%: a coin toss{assumed}"
    text = f"humans agree {accuracy:.0f}%"
    if accuracy < COIN_TOSS_ZONE:
        text += ": close to a coin toss"
    elif accuracy >= top - 0.5:
        text += f": as far as {curve} goes"
    return text + assumed


def agreement_brief(metric: str, delta: float) -> str:
    """`` (humans agree 88%)`` beside a delta in a table's cell; empty for a metric
    without a curve."""
    accuracy = agreement(metric, delta)
    return "" if accuracy is None else f" (humans agree {max(50.0, accuracy):.0f}%)"


def agreement_readings(readings: list[tuple[str, float]]) -> str | None:
    """``BLEU +13.60, humans agree 88%: as far as BLEU goes · COMET-22 +4.21, humans agree
    96%``: each delta read on its curve; None when no metric of ``readings`` has one."""
    parts = []
    for metric, delta in readings:
        text = agreement_text(metric, delta)
        if text is not None:
            parts.append(f"{metric} {delta:+.2f}, {text}")
    return " · ".join(parts) if parts else None


def agreement_line(readings: list[tuple[str, float]]) -> str | None:
    """``what humans would say (Kocmi et al. 2024): …`` (:func:`agreement_readings`)."""
    found = agreement_readings(readings)
    return f"what humans would say ({CITATION}): {found}" if found else None
