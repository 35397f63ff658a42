"""Which metric judges a pick (core/views/verdict.py): never the metric that picked
nor its relatives; a neural judge of another family first where the run has one, else a
surface metric that did not pick, said in one line; BLEU and chrF always beside it."""

from __future__ import annotations

import pytest

from workbench.core.views.verdict import family_of, marked, verdict

SURFACE = ["BLEU", "chrF", "chrF++", "TER"]


@pytest.mark.parametrize(
    ("picker", "scored", "lead", "independent"),
    [
        # a surface picker, no neural judge: the other surface metric leads
        ("chrF", SURFACE, "BLEU", False),
        ("BLEU", SURFACE, "chrF", False),
        # a surface picker with COMET or MetricX scored: the neural judge leads
        ("chrF", [*SURFACE, "COMET-22"], "COMET-22", True),
        ("BLEU", [*SURFACE, "MetricX-24"], "MetricX-24", True),
        # COMET-family pickers: COMET-22 is a relative, MetricX the independent judge
        ("CometKiwi-22", [*SURFACE, "COMET-22"], "BLEU", False),
        ("CometKiwi-22", [*SURFACE, "COMET-22", "MetricX-24"], "MetricX-24", True),
        ("COMET-22", [*SURFACE, "COMET-22", "MetricX-24"], "MetricX-24", True),
        # MetricX pickers: COMET judges, MetricX's QE twin does not
        ("MetricX-24", [*SURFACE, "MetricX-24-QE", "COMET-22"], "COMET-22", True),
        ("MetricX-24-QE", [*SURFACE, "MetricX-24"], "BLEU", False),
    ],
)
def test_the_lead_judge_of_each_family_pairing(picker, scored, lead, independent):
    found = verdict(picker, scored)
    assert found.lead == lead
    assert found.independent is independent
    assert picker not in found.judges
    assert all(marked(judge, picker) == judge for judge in found.judges)  # none is related
    assert {"BLEU", "chrF"} - {picker} <= set(found.judges)  # always beside the lead
    assert (found.note is None) is independent
    if found.note:
        assert f"{lead} leads" in found.note


def test_the_note_names_the_judge_that_is_missing():
    assert "MetricX was not scored" in str(verdict("CometKiwi-22", SURFACE).note)
    assert "COMET was not scored" in str(verdict("MetricX-24", SURFACE).note)
    assert "COMET or MetricX was not scored" in str(verdict("chrF", SURFACE).note)


def test_the_picker_and_its_relatives_are_marked():
    assert marked("chrF", "chrF") == "chrF (used to pick)"
    assert marked("chrF++", "chrF") == "chrF++ (of the picker's family)"
    assert marked("COMET-22", "CometKiwi-22") == "COMET-22 (of the picker's family)"
    assert marked("BLEU", "chrF") == "BLEU"
    assert marked("COMET-22", "MetricX-24") == "COMET-22"
    assert [family_of(m) for m in ("TER", "COMET", "CometKiwi-22", "MetricX-24-QE")] == [
        "surface",
        "comet",
        "comet",
        "metricx",
    ]
