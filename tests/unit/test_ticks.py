"""The one tick algorithm and the one filter of drawable points (core.views.ticks), which
the report's SVG, the TUI's charts and the terminal's text charts all use."""

from __future__ import annotations

import math

from workbench.core.views.ticks import finite_points, round_ticks, tick_label


def test_ticks_enclose_the_data_a_round_step_apart():
    assert round_ticks(0, 10, 6) == [0, 2, 4, 6, 8, 10]
    assert round_ticks(1, 6, 7) == [1, 2, 3, 4, 5, 6]
    assert round_ticks(0, 0.62, 6) == [0, 0.2, 0.4, 0.6, 0.8]  # BLEU of a tiny run
    assert round_ticks(1.9, 10.1, 6) == [0, 2.5, 5, 7.5, 10, 12.5]  # 2, … would take 7
    assert round_ticks(0.3, 0.9, 7) == [
        0.3,
        0.4,
        0.5,
        0.6,
        0.7,
        0.8,
        0.9,
    ]  # not 0.30000000000000004


def test_a_flat_or_tiny_series_still_gets_an_axis():
    assert round_ticks(5.5, 5.5, 6) == [4, 6, 8, 10, 12]  # widened to 5.5..11
    assert round_ticks(0, 0, 6) == [0, 0.2, 0.4, 0.6, 0.8, 1]
    tiny = round_ticks(0, 1e-13, 6)
    assert tiny[0] == 0
    assert tiny[-1] >= 1e-13
    assert len(set(tiny)) == len(tiny)


def test_ticks_within_the_data_and_whole_numbers():
    assert round_ticks(0, 0.62, 6, within=True) == [0, 0.2, 0.4, 0.6]
    assert round_ticks(1, 54, whole=True, within=True) == [10, 20, 30, 40, 50]
    assert round_ticks(0, 994, 5, whole=True, within=True) == [0, 200, 400, 600, 800]
    assert round_ticks(0, 1100, 5, whole=True, within=True) == [0, 250, 500, 750, 1000]
    whole = round_ticks(0, 3, whole=True, within=True)
    assert whole == [0, 1, 2, 3]
    assert all(type(t) is int for t in whole)
    assert round_ticks(5, 5, whole=True, within=True) == [5]
    assert round_ticks(2, 1, within=True) == []


def test_no_ticks_for_non_finite_bounds():
    for bound in (math.nan, math.inf, -math.inf):
        assert round_ticks(bound, 1) == []
        assert round_ticks(0, bound, within=True) == []


def test_only_finite_points_are_drawn():
    points = [(0, 1.0), (1, math.nan), (math.inf, 2.0), (3, None), (4, -math.inf), (5, 0.5)]
    assert finite_points(points) == [(0.0, 1.0), (5.0, 0.5)]
    assert finite_points([]) == []


def test_tick_labels_drop_trailing_zeros():
    assert [tick_label(v) for v in (2.0, 0.5, 1.25, -0.0, 0.0)] == ["2", "0.5", "1.25", "0", "0"]
