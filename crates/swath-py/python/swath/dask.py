"""swath's reports on a Dask cluster, with the output of the one-machine command.

Each call lists the files (paths, globs, fsspec URLs such as ``s3://bucket/logs/*.gz``),
cuts them into byte ranges of ``blocksize`` (a compressed file is one range), computes the
partial result of every range in a task, merges the partials in a tree (``split_every`` at
a time) until at most ``split_every`` squared are left, and returns them as a :class:`Result`
(on a cluster the partials stay on the workers, which print the report: the log summary
of several partials by hash range, a task a range, combined on the client), whose text
is byte for byte what the ``swath`` command prints for the same files::

    from dask.distributed import Client
    import swath.dask
    client = Client("tcp://scheduler:8786")          # or none: the default client
    print(swath.dask.wf2("/data/logs/*.log", client=client).text())

Local and shared-filesystem paths are read by the Rust code on the worker itself
(positional reads, on the worker's cores); other fsspec URLs are read through fsspec on the
worker, one range at a time, copied to a temporary file that the Rust code reads.

A missing or unreadable file fails the job: its exception (:class:`swath.SwathError`, or
the ``OSError`` of listing it) names the file and the cause; no partial is ever dropped.
"""

from __future__ import annotations

import glob as _glob
import json as _json
import locale as _locale
import os
import stat as _stat
import tempfile
import uuid
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import dask
from dask.base import tokenize
import fsspec
from dask.utils import parse_bytes
from fsspec.core import split_protocol

from . import _swath
from ._swath import SwathError

__all__ = ["Result", "grep_count", "summary", "wc", "wf2"]

Paths = Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]


class Result:
    """The partial results of a job (the last level of its merge tree) and their report,
    merged from them in bounded memory when asked.

    On a cluster the partials stay on the workers that made them and each report is
    printed by a task there: only the report travels to the client (moving a few hundred
    MB of partials to the client took longer than printing from them). The result then
    needs its client open; the reports already asked for stay in the result.
    """

    def __init__(self, parts: list, client=None, ranges: int = 0):
        # Bytes, or (with a client) the futures of the partials on the workers.
        self._parts = list(parts)
        self._client = client
        self._merged: Optional[bytes] = None
        self._printed: dict = {}
        # A `logs summary` on a cluster: printed by hash range (see `_by_range`), in this
        # many ranges (0: by one task).
        self._ranges = ranges
        self._range_results: Optional[tuple] = None

    @property
    def partial(self) -> bytes:
        """The merged partial result (docs/partial-format.md): save it, merge it with
        others (:func:`swath.merge`), or print it with ``swath merge``."""
        if self._merged is None:
            if self._client is None:
                self._merged = _swath.merge(self._parts)
            else:
                self._merged = self._remote(_merge)
        return self._merged

    def _remote(self, f, *args) -> bytes:
        """`f(partials, *args)` in a task where the partials are."""
        if self._client.status != "running":
            raise SwathError(
                "the result's client is closed, and the partials on its workers with it: "
                "ask for the reports (or .partial) before closing it"
            )
        return self._client.submit(f, self._parts, *args, pure=False).result()

    def _render(self, fmt: str) -> bytes:
        if fmt not in self._printed:
            if self._merged is not None or self._client is None:
                parts = self._merged if self._merged is not None else self._parts
                self._printed[fmt] = _swath.render(parts, fmt)
            elif self._ranges > 0:
                shapes, tops = self._by_range()
                self._printed[fmt] = _swath.summary_of_ranges(shapes, tops, fmt)
            else:
                self._printed[fmt] = self._remote(_swath.render, fmt)
        return self._printed[fmt]

    def _by_range(self) -> tuple:
        """The summary's partials merged by hash range (docs/design.md, issue 29): on
        each worker, one task cuts the partials it holds into the ranges (every list's
        entries by their hash); each range is merged and ranked by its own task, placed
        on the workers in turn, from its slices of every worker; the client combines
        the ranges' top rows, distinct counts and sums into the report. Only the slices
        and the ranges' results travel. Returns the partials' shapes and the ranges'
        results (kept for the other formats)."""
        if self._range_results is None:
            c = self._client
            if c.status != "running":
                raise SwathError(
                    "the result's client is closed, and the partials on its workers with "
                    "it: ask for the reports (or .partial) before closing it"
                )
            n = self._ranges
            held: dict = {}
            has = c.who_has(self._parts)
            for f in self._parts:
                who = sorted(has.get(f.key, ())) or [None]
                held.setdefault(who[0], []).append(f)
            cuts = []
            for w, parts in held.items():
                where = {} if w is None else {"workers": [w], "allow_other_workers": True}
                cut = c.submit(_cut, parts, n, pure=False, **where)
                shapes = c.submit(_item, cut, 0, pure=False, **where)
                slices = [c.submit(_slice, cut, r, pure=False, **where) for r in range(n)]
                cuts.append((shapes, slices))
            workers = sorted(w for w in held if w is not None) or [None]
            tops = []
            for r in range(n):
                w = workers[r % len(workers)]
                where = {} if w is None else {"workers": [w], "allow_other_workers": True}
                slices = [s[r] for _, s in cuts]
                tops.append(c.submit(_swath.summary_range, slices, pure=False, **where))
            shapes = [s for shapes, _ in cuts for s in c.gather(shapes)]
            self._range_results = (shapes, c.gather(tops))
        return self._range_results

    def bytes(self) -> bytes:
        """The report as the ``swath`` command prints it, as bytes."""
        return self._render("text")

    def text(self) -> str:
        """The report as text (bytes that are not UTF-8 kept as surrogate escapes)."""
        return self.bytes().decode("utf-8", "surrogateescape")

    def json(self) -> Any:
        """A log report as ``--json`` prints it, parsed."""
        return _json.loads(self._render("json"))

    def html(self, path: Union[str, os.PathLike]) -> None:
        """Writes the ``logs summary`` page to ``path`` as ``swath logs summary --html``
        writes it: atomically (complete or not at all), a new page with the umask's mode,
        an existing page's mode kept, a symbolic link written through. A page that cannot
        be written raises :class:`swath.SwathError` naming ``path`` and the cause."""
        _swath.write_output(os.fspath(path), self._render("html"))

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True)
class _Input:
    """A file of the job: its position, its name in the report, how to read it."""

    index: int
    name: str
    size: int
    # Compressed (gzip, zstd, xz, bzip2: by the first bytes): one range, read whole.
    compressed: bool
    # None for a local path (read by the Rust code); the fsspec file system otherwise.
    fs: Any = None
    path: str = ""


def _is_local(path: str) -> bool:
    protocol, _ = split_protocol(path)
    return protocol in (None, "file", "local")


def _list(paths: Paths, storage_options: Optional[dict]) -> list[_Input]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found: list[tuple[str, Any, str]] = []
    for p in paths:
        p = os.fspath(p)
        if _is_local(p):
            local = split_protocol(p)[1] if "://" in p else p
            if _glob.has_magic(local):
                matches = sorted(_glob.glob(local))
                if not matches:
                    raise FileNotFoundError(f"{p}: no file matches")
            else:
                matches = [local]
            found.extend((m, None, os.path.abspath(m)) for m in matches)
        else:
            fs, _, expanded = fsspec.get_fs_token_paths(p, storage_options=storage_options)
            if not expanded:
                raise FileNotFoundError(f"{p}: no file matches")
            if not _glob.has_magic(p) and len(expanded) == 1:
                # Named as given, as the command names its operands.
                found.append((p, fs, expanded[0]))
            else:
                found.extend((fs.unstrip_protocol(e), fs, e) for e in expanded)
    inputs = []
    for index, (name, fs, path) in enumerate(found):
        try:
            if fs is None:
                size, magic = _local_head(name, path)
            else:
                size = fs.size(path)
                magic = _read(fs, path, 0, min(_swath.MAGIC_LEN, size))
        except OSError as e:
            cause = e.strerror or str(e)
            raise SwathError(f"{name}: {cause}") from None
        compressed = _swath.compression(magic) is not None
        inputs.append(_Input(index, name, size, compressed, fs, path))
    return inputs


# What the command says of a byte range of a FIFO or a device.
_NOT_REGULAR = "a byte range needs a regular file, not a pipe or a device"


def _regular(name: str, mode: int) -> None:
    """Refuses what is not a regular file, with the command's messages."""
    if _stat.S_ISDIR(mode):
        raise SwathError(f"{name}: Is a directory")
    if not _stat.S_ISREG(mode):
        raise SwathError(f"{name}: {_NOT_REGULAR}")


def _local_head(name: str, path: str) -> tuple[int, bytes]:
    """The size and first bytes of a local file, which must be a regular file: what the path
    names is looked at before it is opened (a FIFO, whose open would wait for a writer, or a
    device is refused, not opened); the open never waits (``O_NONBLOCK``), and what it
    opened is looked at again."""
    _regular(name, os.stat(path).st_mode)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        _regular(name, st.st_mode)
        return st.st_size, os.pread(fd, _swath.MAGIC_LEN, 0)
    finally:
        os.close(fd)


def _ranges(inp: _Input, blocksize: int) -> list[tuple[int, int]]:
    if inp.size == 0 or inp.compressed:
        return [(0, inp.size)]
    return [(o, min(o + blocksize, inp.size)) for o in range(0, inp.size, blocksize)]


def _read(fs, path: str, start: int, end: int) -> bytes:
    """Bytes ``[start, end)`` of a file, by a ranged read (``cat_file``: no shared file
    position, so tasks reading one file at once cannot disturb each other; one ranged GET
    on an object store)."""
    return fs.cat_file(path, start=start, end=end)


def _next_line_end(fs, path: str, at: int, size: int) -> Optional[int]:
    """The offset of the first newline at or after ``at`` (reading forward in growing
    steps), or None."""
    step = 4096
    while at < size:
        chunk = _read(fs, path, at, min(at + step, size))
        if not chunk:
            break
        i = chunk.find(b"\n")
        if i >= 0:
            return at + i
        at += len(chunk)
        step = min(step * 2, 1 << 20)
    return None


def _span(fs, path: str, start: int, end: int, size: int) -> tuple[int, int]:
    """The bytes the range ``[start, end)`` reads, by the rule of swath's ``--range``
    (Hadoop's and Dask's): skip to just after the first newline at or after ``start``
    (when ``start > 0``), read through the first newline at or after ``end``."""
    start = min(start, size)
    end = max(min(end, size), start)

    def after(at: int) -> int:
        n = _next_line_end(fs, path, at, size)
        return size if n is None else n + 1

    begin = 0 if start == 0 else after(start)
    finish = size if end >= size else after(end)
    return begin, max(finish, begin)


def _piece(kind: str, inp: _Input, start: int, end: int, options: dict) -> bytes:
    """A task: the partial result of one range of one file."""
    if inp.fs is None:
        return _swath.partial(
            kind, inp.path, start, end, index=inp.index, name=inp.name, **options
        )
    # Read through fsspec and copied, a MiB at a time, to a temporary file that the Rust
    # code reads as any file: memory stays bounded whatever the span (a line of gigabytes,
    # a large compressed file).
    fs, path = inp.fs, inp.path
    with tempfile.TemporaryFile(prefix="swath-span-") as tmp:
        begin, finish = (0, inp.size) if inp.compressed else _span(fs, path, start, end, inp.size)
        for at in range(begin, finish, 1 << 20):
            want = min(at + (1 << 20), finish)
            chunk = _read(fs, path, at, want)
            if len(chunk) != want - at:
                raise SwathError(f"{inp.name}: the file changed while it was read")
            tmp.write(chunk)
        tmp.flush()
        return _swath.partial_of_span(
            kind,
            f"/proc/self/fd/{tmp.fileno()}",
            inp.name,
            inp.size,
            begin,
            index=inp.index,
            **options,
        )


def _merge(parts: list[bytes]) -> bytes:
    """A task: partial results merged."""
    return _swath.merge(parts)


def _cut(parts: list[bytes], ranges: int) -> tuple:
    """A task: `logs summary` partials cut into hash ranges (shapes, one slice a range)."""
    return _swath.summary_cut(parts, ranges)


def _item(cut: tuple, i: int):
    """A task: an item of a cut."""
    return cut[i]


def _slice(cut: tuple, r: int) -> bytes:
    """A task: range `r`'s slice of a cut."""
    return cut[1][r]


def _run(
    kind: str,
    paths: Paths,
    options: dict,
    client,
    blocksize,
    split_every: int,
    storage_options: Optional[dict],
    progress: bool,
    ranges: Optional[int] = 0,
) -> Result:
    if split_every < 2:
        raise ValueError("split_every must be at least 2")
    size = parse_bytes(blocksize) if isinstance(blocksize, str) else int(blocksize)
    if size < 1:
        raise ValueError("blocksize must be at least 1 byte")
    inputs = _list(paths, storage_options)
    if not inputs:
        raise ValueError("no input files")
    piece = dask.delayed(_piece, pure=True)
    merge = dask.delayed(_merge, pure=True)
    # Keys name the job, the range and the level. A job is computed afresh at every call
    # (a random part in its name): the partials of an earlier call, still held on the
    # workers by its result, may be of files changed since.
    job = tokenize(kind, inputs, options, size, split_every, uuid.uuid4().hex)
    level = [
        piece(kind, inp, start, end, options, dask_key_name=(f"swath-{kind}-{job}", inp.index, start))
        for inp in inputs
        for start, end in _ranges(inp, size)
    ]
    # Merged in a tree until at most `split_every` squared partials are left; the report
    # is printed from those in one pass (their lists merged k ways as they are read), with
    # no root merge. A merge task writes a whole merged table, a report only its top rows:
    # 8 GiB of logs in 32 partials printed in 0.66 s on one worker, where merging them 8 at
    # a time first took 1.8 s and printing the 4 merged ones 0.3 s (BENCHMARKS.md).
    depth = 0
    while len(level) > split_every * split_every:
        depth += 1
        level = [
            merge(level[i : i + split_every], dask_key_name=(f"swath-merge-{job}", depth, i))
            for i in range(0, len(level), split_every)
        ]
    if client is None:
        try:
            from distributed import default_client

            client = default_client()
        except (ImportError, ValueError):
            client = None
    if client is not None:
        futures = client.compute(level)
        if progress:
            from distributed import progress as show

            show(futures)
        # The job fails here, with the first task's error, if any task failed; the
        # partials stay on the workers (see Result).
        from distributed import wait

        with client.as_current():
            wait(futures)
        for f in futures:
            if f.status != "finished":
                f.result()
        if ranges is None:
            # Two ranges for each thread of the cluster, when there is more than one
            # partial to merge: a range's slices then travel while another range is
            # merged (BENCHMARKS.md, "Issue 29, Dask by hash range": 2 ranges on 2
            # workers were slower than 4).
            threads = sum(client.nthreads().values())
            ranges = 2 * max(threads, 1) if len(futures) > 1 else 0
        return Result(futures, client, ranges)
    if progress:
        import sys

        from dask.diagnostics import ProgressBar

        # On standard error, so that a script's output stays the report.
        with ProgressBar(out=sys.stderr):
            return Result(dask.compute(*level))
    return Result(dask.compute(*level))


def _locale_utf8() -> bool:
    try:
        return _locale.nl_langinfo(_locale.CODESET) == "UTF-8"
    except (AttributeError, ValueError):
        return False


def wf2(
    paths: Paths,
    client=None,
    blocksize: Union[int, str] = "256MiB",
    split_every: int = 8,
    *,
    top: int = 10,
    max_line: Union[int, str] = "4MiB",
    article: Optional[str] = None,
    self_referrer: Optional[str] = None,
    threads: int = 1,
    storage_options: Optional[dict] = None,
    progress: bool = False,
) -> Result:
    """The Wide Finder 2 report of the logs (``swath logs wf2``), read as one log.

    ``client``: a ``distributed.Client`` (by default the current one, else Dask's local
    scheduler); ``blocksize``: bytes per task; ``split_every``: partials per merge task;
    ``threads``: threads each task reads with (1: Dask gives one task per core);
    ``progress``: Dask's progress bar.
    """
    options = {"top": top, "max_line": _size(max_line), "threads": threads}
    if article is not None:
        options["article"] = article
    if self_referrer is not None:
        options["self_referrer"] = self_referrer
    return _run("wf2", paths, options, client, blocksize, split_every, storage_options, progress)


def summary(
    paths: Paths,
    client=None,
    blocksize: Union[int, str] = "256MiB",
    split_every: int = 8,
    *,
    top: int = 10,
    max_line: Union[int, str] = "4MiB",
    threads: int = 1,
    storage_options: Optional[dict] = None,
    progress: bool = False,
    visitors_4xx: bool = False,
    ranges: Optional[int] = 0,
) -> Result:
    """The log summary (``swath logs summary``): text, ``.json()``, ``.html(path)``.
    Arguments as for :func:`wf2`; ``visitors_4xx`` counts the clients of 4xx responses
    as visitors too (``--4xx-to-unique-count``). On a cluster the report is merged and
    printed by one task (``ranges=0``, the default), or merged by hash range, ``ranges``
    of them, each by its own task on the workers that hold the partials (``None``: twice
    as many as the cluster has threads, when there are several partials). The ranges
    give the same report; on 2 shared cores they were no faster than the one task
    (BENCHMARKS.md, "Issue 29, Dask by hash range"), hence the default."""
    if ranges is not None and not 0 <= ranges <= 65536:
        raise ValueError("ranges must be 0 to 65536")
    options = {
        "top": top,
        "max_line": _size(max_line),
        "threads": threads,
        "visitors_4xx": visitors_4xx,
    }
    return _run(
        "summary",
        paths,
        options,
        client,
        blocksize,
        split_every,
        storage_options,
        progress,
        ranges,
    )


def wc(
    paths: Paths,
    client=None,
    blocksize: Union[int, str] = "256MiB",
    split_every: int = 8,
    *,
    lines: bool = False,
    words: bool = False,
    chars: bool = False,
    bytes: bool = False,
    max_line_length: bool = False,
    encoding: Optional[str] = None,
    threads: int = 1,
    storage_options: Optional[dict] = None,
    progress: bool = False,
) -> Result:
    """``wc`` of the files (``-l``, ``-w``, ``-m``, ``-c``, ``-L``; lines, words and bytes
    when none is asked). ``encoding``: ``"c"``, ``"utf8"`` or ``"utf8-posix"``, by default
    from this process's locale (as ``wc`` takes it from its own). Other arguments as for
    :func:`wf2`."""
    if encoding is None:
        encoding = "c"
        if _locale_utf8():
            encoding = "utf8-posix" if "POSIXLY_CORRECT" in os.environ else "utf8"
    options = {
        "lines": lines,
        "words": words,
        "chars": chars,
        "bytes": bytes,
        "max_line_length": max_line_length,
        "encoding": encoding,
        "threads": threads,
    }
    return _run("wc", paths, options, client, blocksize, split_every, storage_options, progress)


def grep_count(
    paths: Paths,
    pattern: Union[str, bytes],
    client=None,
    blocksize: Union[int, str] = "256MiB",
    split_every: int = 8,
    *,
    syntax: str = "basic",
    ignore_case: bool = False,
    word: bool = False,
    line: bool = False,
    invert: bool = False,
    text: bool = False,
    with_filename: Optional[bool] = None,
    null: bool = False,
    utf8: Optional[bool] = None,
    threads: int = 1,
    storage_options: Optional[dict] = None,
    progress: bool = False,
) -> Result:
    """``grep -c PATTERN`` over the files: ``syntax`` is ``"basic"`` (``-G``),
    ``"extended"`` (``-E``), ``"fixed"`` (``-F``) or ``"perl"`` (``-P``); ``ignore_case``
    ``-i``, ``word`` ``-w``, ``line`` ``-x``, ``invert`` ``-v``, ``text`` ``-a``,
    ``with_filename`` ``-H`` (True) or ``-h`` (False), ``null`` ``-Z``; ``utf8``: a UTF-8
    locale (by default this process's). Other arguments as for :func:`wf2`."""
    options = {
        "pattern": pattern,
        "syntax": syntax,
        "ignore_case": ignore_case,
        "word": word,
        "line": line,
        "invert": invert,
        "text": text,
        "with_filename": with_filename,
        "null": null,
        "utf8": _locale_utf8() if utf8 is None else utf8,
        "threads": threads,
    }
    return _run(
        "grep_count", paths, options, client, blocksize, split_every, storage_options, progress
    )


def _size(v: Union[int, str]) -> int:
    return parse_bytes(v) if isinstance(v, str) else int(v)
