"""Cleaning a user's file before the split, as a new user meets it: the run's first lines,
what the run folder records, the report, and the Dataset pane's dropped pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.data import PLANTED, write_planted_tsv
from tests.helpers.runs import small
from tests.helpers.tui import wait_for
from workbench.core.data.writing_systems import script_share
from workbench.core.languages import length_unit, length_units


def test_script_share_counts_letters_only_and_knows_full_width_forms():
    assert script_share("我喜欢 iPhone。", "zh") == pytest.approx(3 / 9)
    assert script_share("２０１９！", "zh") is None  # no letters: says nothing
    assert script_share("Ｈｅｌｌｏ", "en") == 1.0  # full-width Latin is Latin
    assert script_share("Привет", "ru") == 1.0
    assert script_share("Привет", "en") == 0.0
    assert script_share("anything", "xx") is None  # a script not known here
    assert len(length_units("你好， 世界。", length_unit("zh"))) == 6
    assert len(length_units("Hello, world.", length_unit("en"))) == 2


def test_no_clean_keeps_the_noise_and_says_so(tmp_path: Path):
    from workbench.core.config.build import build_config
    from workbench.core.data.prepared import prepare_data

    path = write_planted_tsv(tmp_path / "planted.tsv")
    data = prepare_data(build_config("demo", overrides={"data": str(path), "clean": False}))
    assert data.cleaning.total == data.dropped.get("in test set", 0)
    kept = len(data.train) + len(data.validation) + len(data.test) + data.cleaning.total
    assert kept == 300 + sum(PLANTED.values())
    assert data.cleaning.lines()[0].startswith("cleaning: off (--no-clean)")


async def test_the_dataset_pane_shows_the_dropped_pairs_with_their_rule(tmp_path: Path):
    from textual.widgets import Input

    from workbench.tui.app import WorkbenchApp
    from workbench.tui.widgets.dataset_pane import DatasetPane

    config = small(tmp_path, data=str(write_planted_tsv(tmp_path / "planted.tsv")), samples=0)
    app = WorkbenchApp(config)
    async with app.run_test(size=(80, 24)) as pilot:
        dataset = app.query_one(DatasetPane)
        await wait_for(pilot, lambda: bool(dataset.rows), what="the dataset loaded")
        summary = str(dataset.query_one("#dataset-summary").render())
        assert "10 copy" in summary
        assert "x shows them" in summary
        await pilot.press("x")
        await wait_for(pilot, lambda: dataset.showing_dropped, what="x shows the dropped pairs")
        assert sorted({rule for rule, _ in dataset.matches}) == sorted(PLANTED)
        assert len(dataset.matches) == sum(PLANTED.values())
        await pilot.press("/", *"copy", "escape")
        await wait_for(pilot, lambda: dataset.query_one("#dataset-filter", Input).value == "copy")
        await wait_for(pilot, lambda: len(dataset.matches) == PLANTED["copy"], what="filter copy")
        assert all(p.source == p.target for _, p in dataset.matches)
        await pilot.press("x")
        await wait_for(pilot, lambda: not dataset.showing_dropped, what="x: the kept pairs again")


def test_the_long_rule_counts_with_the_models_own_tokenizer(tiny_model_dir: Path):
    from transformers import AutoTokenizer

    from workbench.core.config.build import build_config
    from workbench.core.data.cleaning import CleaningSettings
    from workbench.core.data.cleaning_pass import clean_pairs
    from workbench.core.data.pair import Pair
    from workbench.core.data.tokenize import token_counter
    from workbench.core.languages import Direction

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    count = token_counter(tokenizer, Direction())
    pairs = [Pair("I like tea.", "我喜欢茶。"), Pair("I like tea. " * 12, "我喜欢茶。" * 12)]
    sources, targets = count([p.source for p in pairs], [p.target for p in pairs])
    assert sources == [len(tokenizer(p.source).input_ids) for p in pairs]
    assert targets == [len(tokenizer(text_target=p.target).input_ids) for p in pairs]
    bound = {"max_source_length": sources[0] + 2, "max_target_length": 200}
    settings = CleaningSettings.of(build_config("demo", overrides=bound))
    kept, report = clean_pairs(pairs, settings, count)
    assert kept == pairs
    assert report.counts == {"long": 1}
    assert report.long_measured
    assert report.dropped[0].kept
    assert report.dropped[0].source == pairs[1].source
