"""The log summary merged by hash range (issue 29): the partials cut into ranges, each
range merged and ranked by its own call, the ranges combined: byte for byte the report the
CLI prints, for any count of ranges, top, log, and with visitors_4xx; and on a cluster."""

import json
import os

import pytest

import swath
import swath.dask as sd
from swath import _swath


def cuts(size, n):
    step = max(1, size // n)
    return [(s, min(s + step, size)) for s in range(0, size, step)] or [(0, 0)]


def by_range(parts, ranges, fmt="text", groups=2):
    """The report of `parts` as the Dask layer makes it: the partials cut on `groups`
    "workers", each range merged from its slices of every worker, then combined."""
    held = [parts[i::groups] for i in range(groups)]
    cut = [_swath.summary_cut(h, ranges) for h in held if h]
    shapes = [s for shapes, _ in cut for s in shapes]
    tops = [_swath.summary_range([slices[r] for _, slices in cut]) for r in range(ranges)]
    return _swath.summary_of_ranges(shapes, tops, fmt)


@pytest.fixture(scope="module")
def few(logs):
    """A log of few distinct keys: a generated log's first lines, over and over."""
    lines = (logs / "a.log").read_bytes().splitlines(keepends=True)[:25]
    path = logs / "few.log"
    path.write_bytes(b"".join(lines) * 80)
    return path


@pytest.fixture(scope="module")
def tiny(logs):
    """Three requests: most ranges are empty."""
    lines = (logs / "b.log").read_bytes().splitlines(keepends=True)[:3]
    path = logs / "tiny.log"
    path.write_bytes(b"".join(lines))
    return path


@pytest.mark.parametrize("ranges", [1, 2, 7])
@pytest.mark.parametrize("top", [1, 10, 40])
@pytest.mark.parametrize("log", ["a.log", "few.log", "tiny.log", "empty.log"])
def test_ranges_equal_the_cli(logs, few, tiny, cli, ranges, top, log):
    path = str(logs / log)
    size = os.path.getsize(path)
    for visitors_4xx in (False, True):
        options = dict(top=top, visitors_4xx=visitors_4xx)
        parts = [swath.partial("summary", path, s, e, **options) for s, e in cuts(size, 5)]
        flags = ["--top", str(top)] + (["--4xx-to-unique-count"] if visitors_4xx else [])
        out, err, status = cli("logs", "summary", *flags, path)
        assert status == 0, err
        assert by_range(parts, ranges) == out
        out, err, status = cli("logs", "summary", "--json", *flags, path)
        assert status == 0, err
        assert by_range(parts, ranges, "json") == out
        assert by_range(parts, ranges, "html") == swath.render(parts, "html")


def test_several_files_and_many_ranges(chdir_logs, cli):
    files = ["a.log", "b.log", "c.log.gz", "empty.log", "d.log", "e.log"]
    parts = []
    for i, f in enumerate(files):
        size = os.path.getsize(f)
        for s, e in [(0, size)] if f.endswith(".gz") else cuts(size, 3):
            parts.append(swath.partial("summary", f, s, e, index=i))
    out, _, _ = cli("logs", "summary", *files)
    for ranges in (3, 64):
        assert by_range(parts, ranges, groups=3) == out


def test_a_missing_piece_or_a_mismatch_is_refused(chdir_logs):
    size = os.path.getsize("a.log")
    parts = [swath.partial("summary", "a.log", s, e) for s, e in cuts(size, 4)]
    with pytest.raises(swath.SwathError, match="no partial covers"):
        by_range(parts[1:], 2)
    other = swath.partial("summary", "b.log", top=3)
    with pytest.raises(swath.SwathError, match="partial 1"):
        _swath.summary_cut([parts[0], other], 2)
    with pytest.raises(swath.SwathError, match="partial 0"):
        _swath.summary_cut([swath.partial("wf2", "a.log")], 2)
    shapes, slices = _swath.summary_cut(parts, 2)
    with pytest.raises(swath.SwathError):
        _swath.summary_range([slices[0][:-1]])
    with pytest.raises(swath.SwathError):
        _swath.summary_of_ranges(shapes, [b"\x01"])


@pytest.mark.parametrize("ranges", [0, 1, 2, 7])
def test_on_a_cluster_by_range_equals_the_cli(chdir_logs, cli, client, ranges):
    files = ["a.log", "b.log", "c.log.gz", "empty.log"]
    for flags, options in [([], {}), (["--top", "3", "--4xx-to-unique-count"], {"top": 3, "visitors_4xx": True})]:
        result = sd.summary(files, client=client, blocksize="64KiB", ranges=ranges, **options)
        assert result._ranges == ranges
        out, _, _ = cli("logs", "summary", *flags, *files)
        assert result.bytes() == out
        out, _, _ = cli("logs", "summary", "--json", *flags, *files)
        assert result.json() == json.loads(out)
        assert swath.render(result.partial) == result.bytes()


def test_on_a_cluster_ranges_none_is_twice_its_threads(chdir_logs, cli, client):
    # By default one task prints the report (the ranges were no faster on 2 cores).
    assert sd.summary(["a.log", "b.log"], client=client, blocksize="64KiB")._ranges == 0
    result = sd.summary(["a.log", "b.log"], client=client, blocksize="64KiB", ranges=None)
    assert result._ranges == 4
    out, _, _ = cli("logs", "summary", "a.log", "b.log")
    assert result.bytes() == out
    # One partial: printed by one task.
    assert sd.summary(["b.log"], client=client, ranges=None)._ranges == 0
    with pytest.raises(ValueError):
        sd.summary(["a.log"], client=client, ranges=-1)
    # A count of ranges past any use is refused before anything is allocated for it.
    with pytest.raises(ValueError):
        sd.summary(["a.log"], client=client, ranges=10**9)
    with pytest.raises(ValueError, match="ranges must be 1 to 65536"):
        _swath.summary_cut([], 10**12)
    with pytest.raises(ValueError):
        _swath.summary_cut([], 0)
