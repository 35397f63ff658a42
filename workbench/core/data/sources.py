"""Where a run's pairs come from, and what identifies them for the prepared-data cache.

Three sources share one shape (rows of source, target and, for HSK, metadata): the HSK
corpus shipped in ``hsk-sentences-audio`` (the offline demo), local data
(:mod:`.local_files`: TSV/CSV/JSONL, line-aligned files, gzipped or not, ``datasets``
folders), and a random sample of a Hub dataset (:mod:`.hub_sample`), read lazily. A test
set may come from outside the training data: a ``--test-data`` file or the Hub dataset's
own held-out split (:func:`external_test_set`). Cleaning and the split come after
(:mod:`.prepared`, :mod:`.splits`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from contextlib import closing
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.core.config.presets import HSK_DATA
from workbench.core.config.run_config import RunConfig
from workbench.core.data.local_files import LOCAL_SUFFIXES, moses_files, read_local_rows
from workbench.core.data.pair import Pair
from workbench.core.data.prepared_cache import content_digest, file_identity
from workbench.core.events import EventSink
from workbench.errors import WorkbenchError

if TYPE_CHECKING:  # sample_plan imports numpy: the sampler's, read only for a Hub sample
    from workbench.core.data.sample_plan import HubSample, HubSplit

#: Names of the Hub test splits the presets use, shown next to every test number.
KNOWN_TEST_SETS: dict[tuple[str, str | None, str], str] = {
    ("wmt/wmt19", "zh-en", "validation"): "newstest2018",
    ("wmt/wmt14", "de-en", "validation"): "newstest2013",
}


#: How many more pairs a Hub sample draws than ``samples`` asks for, so that ``samples``
#: is the number left after cleaning (the draw costs only a few more row-group reads).
SAMPLE_MARGIN = 0.1


def sample_draw_size(config: RunConfig) -> int:
    """The pairs a Hub sample draws: ``samples`` and a margin for what cleaning drops."""
    if not config.samples or not config.clean:
        return config.samples
    return config.samples + math.ceil(config.samples * SAMPLE_MARGIN)


def hub_sample(config: RunConfig) -> HubSample:
    """The Hub sample a run's ``data`` names: its dataset, languages, size and seed."""
    from workbench.core.data.sample_plan import HubSample

    return HubSample(
        config.data,
        config.data_config,
        config.data_source_lang,
        config.data_target_lang,
        n=sample_draw_size(config),
        seed=config.seed,
    )


def hub_test_split(config: RunConfig) -> HubSplit | None:
    """The Hub split a run tests on (``test_split`` of its dataset), or None."""
    from workbench.core.data.sample_plan import HubSplit

    if not config.test_split:
        return None
    return HubSplit(
        config.data,
        config.data_config,
        config.test_split,
        config.data_source_lang,
        config.data_target_lang,
    )


def load_hsk_pairs(source_lang: str = "en", target_lang: str = "zh") -> list[Pair]:
    """The 4,354 HSK 3.0 pairs (CC-BY-SA-4.0) with level and topic for the preview."""
    if {source_lang, target_lang} != {"en", "zh"}:
        raise WorkbenchError(f"the hsk corpus is English-Chinese; got {source_lang}->{target_lang}")
    from hsk_sentences_audio import load_sentences

    pairs = []
    for record in load_sentences():
        text = {"en": record["translation"]["en"], "zh": record["chinese"]}
        meta = {"hsk_level": record.get("hsk_level"), "topic": record.get("topic")}
        pairs.append(Pair(text[source_lang], text[target_lang], meta))
    return pairs


def looks_like_local_path(value: str) -> bool:
    """True for values a user meant as a path (never to be sent to the Hub)."""
    return (
        value.startswith((".", "/", "~"))
        or "\\" in value
        or value.count("/") > 1
        or value.lower().endswith(LOCAL_SUFFIXES)
        or Path(value).expanduser().exists()
    )


def read_local_pairs(path: Path, source_lang: str, target_lang: str) -> list[Pair]:
    """Pairs from a local file, two line-aligned files or a ``datasets`` folder."""
    return [Pair(s, t) for s, t in read_local_rows(path, source_lang, target_lang)]


def is_local_data(value: str, source_lang: str, target_lang: str) -> bool:
    """True for data a user meant as local: a path, or the prefix of line-aligned files.

    A bare ``corpus`` with ``corpus.en`` and ``corpus.zh`` beside it is local, never a Hub
    id: the files on disk are what the user has in front of them.
    """
    path = Path(value).expanduser()
    return looks_like_local_path(value) or moses_files(path, source_lang, target_lang) is not None


def is_hub_dataset(config: RunConfig) -> bool:
    """True when the training data is read from a Hub dataset."""
    return config.data != HSK_DATA and not is_local_data(
        config.data, config.data_source_lang, config.data_target_lang
    )


def _test_data_path(config: RunConfig) -> Path:
    """The ``--test-data`` path, refused in one line when nothing is there."""
    path = Path(config.test_data or "").expanduser()
    if not path.exists() and not moses_files(
        path, config.data_source_lang, config.data_target_lang
    ):
        raise WorkbenchError(f"test data '{path}' not found; check the path passed to --test-data")
    return path


def first_look(config: RunConfig) -> None:
    """Read the first pair of each local data file the run names (``--data``,
    ``--test-data``), so that a file that is missing, empty, not UTF-8 at its start, or
    without the languages' columns is refused in one line before the model's config is
    read, which imports torch and transformers (seconds). The whole file is read, and
    checked to its end, when the data is prepared; a ``datasets`` folder only then."""
    src, tgt = config.data_source_lang, config.data_target_lang
    paths = []
    if config.data != HSK_DATA and is_local_data(config.data, src, tgt):
        paths.append(Path(config.data).expanduser())
    if config.test_data:
        paths.append(_test_data_path(config))
    for path in paths:
        if not path.is_dir():
            with closing(read_local_rows(path, src, tgt)) as rows:
                next(rows, None)


def external_test_set(
    config: RunConfig, revision: str | None, cache_dir: Path | None
) -> tuple[list[Pair], str] | None:
    """The test pairs and their name when they come from outside the training data."""
    if config.test_data:
        path = _test_data_path(config)
        return read_local_pairs(path, config.data_source_lang, config.data_target_lang), path.name
    split = hub_test_split(config) if is_hub_dataset(config) else None
    if split is not None:
        from workbench.core.data.hub_sample import load_hub_split

        rows = load_hub_split(split, cache_dir=cache_dir, revision=revision)
        key = (split.repo, split.config, split.split)
        name = KNOWN_TEST_SETS.get(key, f"{split.repo} {split.split} split")
        return [Pair(p.source, p.target) for p in rows.pairs], name
    return None


#: A row as read: source, target and (the HSK corpus) metadata.
Row = tuple[str, str] | tuple[str, str, dict[str, Any]]


@dataclasses.dataclass
class Source:
    """The pairs a run's ``data`` names: their rows (read lazily), where they come from,
    the Hub revision, and what identifies them for the cache."""

    rows: Iterable[Row]
    origin: str
    revision: str | None
    identity: Any


def read_source(config: RunConfig, cache_dir: Path | None, on_event: EventSink | None) -> Source:
    """The uncleaned pairs named by ``config.data`` (``on_event`` hears a Hub sample's
    progress)."""
    data = config.data
    src, tgt = config.data_source_lang, config.data_target_lang
    if data == HSK_DATA:
        pairs = load_hsk_pairs(src, tgt)
        rows: list[Row] = [(p.source, p.target, p.meta) for p in pairs]
        version = metadata.version("hsk-sentences-audio")
        return Source(rows, "HSK 3.0 sentences", None, ["hsk", version, src, tgt])
    if is_local_data(data, src, tgt):
        path = Path(data).expanduser()
        moses = moses_files(path, src, tgt)
        origin = f"{moses[0]} + {moses[1].name}" if moses else str(path)
        files = [f for f in (moses or (path,)) if f.exists()]
        identity: list[Any] = [file_identity(f) for f in files] + [src, tgt]
        return Source(read_local_rows(path, src, tgt), origin, None, identity)
    from workbench.core.data.hub_sample import load_hub_sample

    hub = load_hub_sample(
        hub_sample(config), on_event, cache_dir=cache_dir, revision=config.data_revision
    )
    origin = f"{data} ({config.data_config}), {len(hub.pairs)} random pairs"
    rows = [(p.source, p.target) for p in hub.pairs]
    identity = [data, config.data_config, hub.revision, content_digest(hub.pairs)]
    return Source(rows, origin, hub.revision, identity)
