"""DecodeOptions and the shared decoding pieces (workbench.core.decoding)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from workbench.core.decoding import (
    MAX_NEW_TOKENS,
    DecodeOptions,
    check_beams,
    length_bound,
)
from workbench.errors import WorkbenchError


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"num_beams": 0}, "num_beams must be 1..64, got 0"),
        ({"num_beams": 65}, "num_beams must be 1..64, got 65"),
        ({"max_new_tokens": 0}, f"max_new_tokens must be 1..{MAX_NEW_TOKENS}, got 0"),
        ({"max_new_tokens": MAX_NEW_TOKENS + 1}, f"must be 1..{MAX_NEW_TOKENS}, got"),
        ({"no_repeat_ngram_size": -1}, "no_repeat_ngram_size must be >= 0, got -1"),
    ],
)
def test_options_are_checked_once_on_creation(values, message):
    with pytest.raises(WorkbenchError, match=message):
        DecodeOptions(**values)


def test_the_cli_names_its_own_flag():
    with pytest.raises(WorkbenchError, match=r"--num-beams must be 1\.\.64, got 99"):
        check_beams(99, "--num-beams")


def test_a_models_defaults_and_a_users_overrides():
    saved = SimpleNamespace(
        num_beams=4, max_new_tokens=None, max_length=129, no_repeat_ngram_size=3
    )
    options = DecodeOptions.of_model(saved)
    assert options == DecodeOptions(num_beams=4, max_new_tokens=128, no_repeat_ngram_size=3)
    hub = SimpleNamespace(
        num_beams=None, max_new_tokens=None, max_length=512, no_repeat_ngram_size=None
    )
    assert DecodeOptions.of_model(hub) == DecodeOptions(1, 511, 0)  # max_length 512
    assert options.overridden(None, None) == options
    assert options.overridden(1, 16) == DecodeOptions(1, 16, 3)  # blocking stays the model's
    with pytest.raises(WorkbenchError):
        options.overridden(num_beams=0)


def test_length_bound():
    assert length_bound(10, 128) == 28
    assert length_bound(100, 128) == 128
