"""Charts draw each cell's lowest and highest point: a long run's spikes survive."""

from __future__ import annotations

import itertools

from workbench.core.views.downsample import envelope


def test_few_points_come_back_as_they_are():
    points = [(float(x), float(x % 3)) for x in range(10)]
    assert envelope(points, cells=5) == points
    assert envelope([], cells=5) == []


def test_each_cell_keeps_its_lowest_and_highest_point_and_the_ends():
    points = [(float(x), 1.0) for x in range(10_000)]
    points[4_321] = (4_321.0, 9.0)  # a spike
    points[7_000] = (7_000.0, -3.0)  # a dip
    points[-1] = (9_999.0, 0.5)  # the newest value of a live run
    kept = envelope(points, cells=50)
    assert len(kept) <= 2 * 50 + 2
    assert (4_321.0, 9.0) in kept
    assert (7_000.0, -3.0) in kept
    assert kept[0] == (0.0, 1.0)
    assert kept[-1] == (9_999.0, 0.5)
    assert [x for x, _ in kept] == sorted(x for x, _ in kept)
    # Every cell of the x range is represented: no gap wider than two cells' span.
    xs = [x for x, _ in kept]
    assert max(b - a for a, b in itertools.pairwise(xs)) <= 2 * 10_000 / 50


def test_one_x_for_every_point_keeps_the_lowest_highest_first_and_last():
    points = [(3.0, float(y % 50)) for y in range(1, 100)]
    assert envelope(points, cells=10) == [(3.0, 0.0), (3.0, 1.0), (3.0, 49.0)]


def test_unsorted_points_are_bucketed_by_their_x():
    points = [(float(x), float(x)) for x in reversed(range(1000))]
    kept = envelope(points, cells=10)
    assert kept[0] == (0.0, 0.0)
    assert kept[-1] == (999.0, 999.0)
    assert len(kept) <= 22
