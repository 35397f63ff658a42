"""Where a run's pairs come from, read lazily: the HSK corpus, local files, a Hub sample;
each with what identifies it for the prepared-data cache (:mod:`.prepared_cache`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from workbench.core.config.presets import HSK_DATA
from workbench.core.config.run_config import RunConfig
from workbench.core.data.local_files import moses_files, read_local_rows
from workbench.core.data.pairs import is_local_data, load_hsk_pairs, sample_draw_size
from workbench.core.data.prepared_cache import content_digest, file_identity
from workbench.core.events import EventSink

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
        data,
        config.data_config,
        src,
        tgt,
        n=sample_draw_size(config),
        seed=config.seed,
        on_event=on_event,
        cache_dir=cache_dir,
        revision=config.data_revision,
    )
    origin = f"{data} ({config.data_config}), {len(hub.pairs)} random pairs"
    rows = [(p.source, p.target) for p in hub.pairs]
    identity = [data, config.data_config, hub.revision, content_digest(hub.pairs)]
    return Source(rows, origin, hub.revision, identity)
