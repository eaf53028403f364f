"""swath's reports over byte ranges of big files, merged into the one-machine output.

The calls of the extension module (the same Rust code as the ``swath`` command):

- ``partial(kind, path, start=0, end=None, *, index=0, **options) -> bytes``: the partial
  result of one byte range of one file (``kind``: ``"wc"``, ``"grep_count"``, ``"wf2"``,
  ``"summary"``), as ``swath ... --range START:END --emit-partial OUT`` writes it;
- ``partial_of_span(kind, path, name, size, begin, *, index=0, **options) -> bytes``: the
  same for a span of a file read elsewhere (an object store), copied to the file at
  ``path``;
- ``merge(parts) -> bytes``: partial results merged, in any order and any tree;
- ``render(partial, fmt="text") -> bytes``: the report ``swath merge`` prints (``"text"``,
  ``"json"``), or the ``logs summary`` page (``"html"``), of one partial or of a list of
  them (merged as they are read, in bounded memory);
- ``compression(head) -> str | None``: the compression (``"gzip"``, ``"zstd"``, ``"xz"``,
  ``"bzip2"``) of a file whose first ``MAGIC_LEN`` bytes are ``head``: such a file is one
  range, read whole and decompressed.

``swath.dask`` runs them on a Dask cluster. Errors raise :class:`SwathError`, one line that
names the file and the cause.
"""

from ._swath import MAGIC_LEN, SwathError, compression, merge, partial, partial_of_span, render

__all__ = [
    "MAGIC_LEN",
    "SwathError",
    "compression",
    "merge",
    "partial",
    "partial_of_span",
    "render",
]
