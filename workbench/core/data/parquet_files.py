"""One parquet file of a Hub dataset, read over HTTP range requests whose every answer is
checked; the parquet files of a split, listed; and a whole split read in file order.

A sample's reads (:mod:`workbench.core.data.sample_reads`) and a whole split's
(:func:`read_all`) open their files here, so both get the same checks: a server that
ignores ``Range``, a file shorter than its listing, and bytes pyarrow cannot decode are
each said in one sentence that names the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from workbench.core.data.hub import damaged_file, range_ignored
from workbench.core.data.sample_plan import HubPair
from workbench.errors import WorkbenchError

#: How files are opened. fsspec's buffered files read ahead 5 MiB past every read by
#: default (``block_size``, "readahead" cache): on WMT19 that is 5 MiB per row group for
#: ~150 KB wanted. pyarrow already asks for exact ranges (the footer's last 64 KiB, then one
#: read per row group with ``pre_buffer=True``, which joins its column chunks), so no cache
#: at all is the least traffic: each read is one HTTP range request
#: (``HfFileSystemFile._fetch_range``) for exactly those bytes. The block size must stay
#: non-zero: ``block_size=0`` makes ``HfFileSystem`` return a streaming file that cannot
#: seek. Local and memory filesystems ignore both options.
OPEN_OPTIONS: dict[str, Any] = {"block_size": 2**16, "cache_type": "none"}


def list_split_files(fs: Any, root: str, config: str | None, split: str) -> list[str]:
    """The parquet files of one split of a dataset repo, in a stable order."""
    base = f"{root}/{config}" if config else root
    patterns = [
        f"{base}/{split}-*.parquet",
        f"{base}/{split}/*.parquet",
        f"{base}/*{split}*.parquet",
    ]
    for pattern in patterns:
        files = sorted(fs.glob(pattern))
        if files:
            return files
    return []


def pair_of_row(row: dict[str, Any], source_lang: str, target_lang: str) -> HubPair:
    """The pair of one parquet row: WMT's ``translation`` struct, or a column per language."""
    text = row.get("translation", row)
    return HubPair(str(text.get(source_lang) or ""), str(text.get(target_lang) or ""))


def pair_columns(metadata: Any, source_lang: str, target_lang: str) -> list[str]:
    """The columns to read: WMT's ``translation`` struct, else one column per language."""
    names = metadata.schema.to_arrow_schema().names
    return ["translation"] if "translation" in names else [source_lang, target_lang]


def _file_url(handle: Any, path: str) -> str:
    """Where a file comes from, for messages: its download URL on the Hub, else its path."""
    url = getattr(handle, "url", None)
    try:
        return str(url()) if callable(url) else path
    except Exception:  # a URL only for messages: never fail because of it
        return path


class ExactReads:
    """A file whose every read must return exactly the bytes asked for.

    ``HfFileSystemFile`` does not check that a range request was answered with 206: a
    server that ignores ``Range`` sends HTTP 200 and the whole file, which pyarrow would
    take for the footer or a row group ("Parquet magic bytes not found"), and a truncated
    file sends fewer bytes than its listed size. Both are caught here, at the read, where
    the URL and the byte counts can still be named.
    """

    def __init__(self, handle: Any, url: str) -> None:
        self._handle = handle
        self.url = url
        self.size = int(handle.size)

    def read(self, length: int = -1) -> bytes:
        """Read like the file does, then check the length against what was asked."""
        start = self._handle.tell()
        wanted = max(0, self.size - start)
        if length is not None and length >= 0:
            wanted = min(length, wanted)
        data = self._handle.read(length)
        if len(data) > wanted:
            raise range_ignored(self.url, wanted, len(data))
        if len(data) < wanted:
            raise damaged_file(
                self.url,
                f"asked for bytes {start:,}-{start + wanted - 1:,}, "
                f"got {len(data):,}: the file is shorter than the {self.size:,} "
                "bytes its listing says",
            )
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        """Move the position (no request)."""
        return int(self._handle.seek(offset, whence))

    def tell(self) -> int:
        """The position."""
        return int(self._handle.tell())

    def seekable(self) -> bool:
        """Yes: pyarrow reads the footer first, then seeks back to each row group."""
        return True

    def readable(self) -> bool:
        """Yes: asked by pyarrow before it reads, as of any file object."""
        return True

    @property
    def closed(self) -> bool:
        """Whether the Hub file underneath is closed."""
        return bool(self._handle.closed)

    def close(self) -> None:
        """Close the Hub file underneath."""
        self._handle.close()


@contextmanager
def decoding(url: str) -> Iterator[None]:
    """Name the file when pyarrow cannot decode what it read (a corrupt copy).

    pyarrow reports a bad footer as ``OSError`` ("Couldn't deserialize thrift") and bad
    data as ``ArrowInvalid``; an HTTP error is an ``OSError`` too, but one with a
    response, and is left for the caller to name (:mod:`~workbench.core.data.hub_sample`).
    """
    import pyarrow as pa

    try:
        yield
    except WorkbenchError:
        raise
    except (pa.ArrowException, OSError) as err:
        if getattr(err, "response", None) is not None:
            raise
        raise damaged_file(url, f"not a readable parquet file: {err}") from None


def open_parquet(stack: ExitStack, fs: Any, path: str, metadata: Any = None) -> tuple[Any, str]:
    """A ``pyarrow.parquet.ParquetFile`` over ``path`` with checked reads, and its URL;
    given the file's ``metadata`` (kept from an earlier try) it does not read the footer."""
    import pyarrow.parquet as pq

    handle = stack.enter_context(fs.open(path, "rb", **OPEN_OPTIONS))
    checked = ExactReads(handle, _file_url(handle, path))
    with decoding(checked.url):
        return pq.ParquetFile(checked, metadata=metadata, pre_buffer=True), checked.url


def read_all(fs: Any, files: list[str], source_lang: str, target_lang: str) -> list[HubPair]:
    """Every row of parquet ``files`` on filesystem ``fs``, in file order."""
    pairs: list[HubPair] = []
    for path in files:
        with ExitStack() as stack:
            handle, url = open_parquet(stack, fs, path)
            with decoding(url):
                table = handle.read(columns=pair_columns(handle.metadata, source_lang, target_lang))
            pairs.extend(pair_of_row(r, source_lang, target_lang) for r in table.to_pylist())
    return pairs
