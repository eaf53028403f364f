"""The extension module: partials of ranges equal the CLI's, merges and reports equal
`swath merge`'s, errors name the file and the cause."""

import os

import pytest

import swath

LOGS = ["a.log", "b.log", "c.log.gz", "empty.log", "d.log", "e.log"]


def cuts(size, n):
    step = max(1, size // n)
    return [(o, min(o + step, size)) for o in range(0, size, step)] or [(0, 0)]


@pytest.mark.parametrize(
    "kind,args,options",
    [
        ("wc", ["wc"], {"encoding": "utf8"}),
        ("wc", ["wc", "-l", "-m", "-L"], {"lines": True, "chars": True, "max_line_length": True, "encoding": "utf8"}),
        ("grep_count", ["grep", "-c", "-i", "ONGOING"], {"pattern": "ONGOING", "ignore_case": True, "utf8": True}),
        ("wf2", ["logs", "wf2"], {}),
        ("summary", ["logs", "summary", "--top", "5"], {"top": 5}),
        (
            "summary",
            ["logs", "summary", "--top", "5", "--4xx-to-unique-count"],
            {"top": 5, "visitors_4xx": True},
        ),
    ],
)
def test_partial_bytes_equal_the_cli(chdir_logs, cli, tmp_path, kind, args, options):
    size = os.path.getsize("a.log")
    for start, end in [(0, size), (0, 1000), (1000, 250000), (250000, size)]:
        out = tmp_path / "p"
        _, err, status = cli(*args, "--range", f"{start}:{end}", "--emit-partial", str(out), "a.log")
        assert status == 0, err
        assert swath.partial(kind, "a.log", start, end, **options) == out.read_bytes()


def test_merge_of_ranges_in_any_order_renders_as_the_cli(chdir_logs, cli):
    for kind, args, files in [
        ("wf2", ["logs", "wf2"], ["a.log", "c.log.gz", "empty.log", "d.log", "e.log"]),
        ("summary", ["logs", "summary"], ["a.log", "c.log.gz", "e.log"]),
        ("wc", ["wc"], ["a.log", "empty.log", "d.log", "e.log"]),
        ("grep_count", ["grep", "-c", "Mozilla"], ["a.log", "d.log", "empty.log"]),
    ]:
        options = {"grep_count": {"pattern": "Mozilla", "utf8": True}, "wc": {"encoding": "utf8"}}.get(kind, {})
        parts = []
        for index, f in enumerate(files):
            ranges = [(0, None)] if f.endswith(".gz") else cuts(os.path.getsize(f), 7)
            for start, end in ranges:
                parts.append(swath.partial(kind, f, start, end, index=index, **options))
        parts.reverse()
        tree = swath.merge([swath.merge(parts[: len(parts) // 2]), swath.merge(parts[len(parts) // 2 :])])
        flat = swath.merge(parts)
        expected, _, status = cli(*args, *files)
        assert status == 0
        assert swath.render(tree) == expected
        assert swath.render(flat) == expected
        if kind in ("wf2", "summary"):
            json_cli, _, _ = cli(*args, "--json", *files)
            assert swath.render(tree, "json") == json_cli


def test_render_of_several_partials_equals_render_of_their_merge(chdir_logs):
    parts = [swath.partial("wf2", "a.log", s, e) for s, e in cuts(os.path.getsize("a.log"), 5)]
    assert swath.render(parts) == swath.render(swath.merge(parts))
    assert swath.render(parts[::-1], "json") == swath.render(swath.merge(parts), "json")
    damaged = parts[1][:-1] + bytes([parts[1][-1] ^ 1])
    with pytest.raises(swath.SwathError, match="^partial 1: damaged partial result"):
        swath.render([parts[0], damaged])
    with pytest.raises(swath.SwathError, match="partial 1: .*in two partials"):
        swath.render([parts[0], parts[0]])
    with pytest.raises(swath.SwathError, match="no partial result given"):
        swath.render([])


def test_summary_page_equals_the_cli_page(chdir_logs, cli, tmp_path):
    page = tmp_path / "cli.html"
    _, err, status = cli("logs", "summary", "--html", str(page), "a.log", "e.log")
    assert status == 0, err
    parts = [swath.partial("summary", f, index=i) for i, f in enumerate(["a.log", "e.log"])]
    # The same page but for the header's inputs, generation and parse times, which only
    # the command that read the logs knows.
    mine = swath.render(swath.merge(parts), "html")
    assert mine[mine.index(b"<nav>"):] == page.read_bytes()[page.read_bytes().index(b"<nav>"):]


def test_block_read_elsewhere_equals_the_range_read_here(chdir_logs, tmp_path):
    data = open("a.log", "rb").read()
    whole = swath.partial("wf2", "a.log", 1000, 300000)
    # The span of [1000, 300000): after the newline at or after 1000, through the one at
    # or after 300000.
    begin = data.index(b"\n", 1000) + 1
    finish = data.index(b"\n", 300000) + 1
    span = tmp_path / "span"
    span.write_bytes(data[begin:finish])
    block = swath.partial_of_span("wf2", str(span), "a.log", len(data), begin)
    assert block == whole


def test_missing_file_names_the_file(chdir_logs):
    with pytest.raises(swath.SwathError, match=r"^nothere\.log: No such file or directory$"):
        swath.partial("wc", "nothere.log")


def test_unreadable_file_names_the_file(tmp_path, run_python_unprivileged):
    locked = tmp_path / "locked.log"
    locked.write_bytes(b"a line\n")
    locked.chmod(0)
    tmp_path.chmod(0o755)
    code = (
        "import swath\n"
        "try:\n"
        f"    swath.partial('wc', {str(locked)!r})\n"
        "except swath.SwathError as e:\n"
        "    print(e)\n"
    )
    out = run_python_unprivileged(code)
    assert out.stdout == f"{locked}: Permission denied\n", out.stderr


def test_directory_is_refused(chdir_logs, tmp_path):
    with pytest.raises(swath.SwathError, match="Is a directory"):
        swath.partial("wf2", str(tmp_path), 0, 10)


def test_gzip_log_is_one_range(chdir_logs):
    with pytest.raises(swath.SwathError, match=r"c\.log\.gz: a compressed log is one range"):
        swath.partial("wf2", "c.log.gz", 0, 10)


def test_truncated_gzip_names_the_file(chdir_logs, tmp_path):
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(open("c.log.gz", "rb").read()[:5000])
    with pytest.raises(swath.SwathError, match=r"cut\.log\.gz: unexpected end of gzip data"):
        swath.partial("summary", str(cut))


def test_damaged_foreign_and_mismatched_partials(chdir_logs):
    good = swath.partial("wc", "a.log", 0, 1000, encoding="c")
    damaged = bytearray(good)
    damaged[len(damaged) // 2] ^= 1
    with pytest.raises(swath.SwathError, match="partial 1: damaged partial result"):
        swath.merge([good, bytes(damaged)])
    with pytest.raises(swath.SwathError, match="not a swath partial|foreign"):
        swath.render(b"hello, world, this is not a partial result")
    with pytest.raises(swath.SwathError, match="truncated"):
        swath.render(good[:12])
    other_kind = swath.partial("grep_count", "a.log", 1000, 2000, pattern="x")
    with pytest.raises(swath.SwathError, match="different reports"):
        swath.merge([good, other_kind])
    other_options = swath.partial("wc", "a.log", 1000, 2000, encoding="utf8")
    with pytest.raises(swath.SwathError, match="different options"):
        swath.merge([good, other_options])
    with pytest.raises(swath.SwathError, match="in two partials"):
        swath.merge([good, good])
    # A hole: bytes 1000.. of a.log are in no partial.
    with pytest.raises(swath.SwathError, match="no partial covers"):
        swath.render(good)


def test_options_are_checked(chdir_logs):
    with pytest.raises(swath.SwathError, match="wc: unknown option 'colour'"):
        swath.partial("wc", "a.log", colour=True)
    with pytest.raises(swath.SwathError, match="unknown report 'cmp'"):
        swath.partial("cmp", "a.log")
    with pytest.raises(swath.SwathError, match="a pattern is needed"):
        swath.partial("grep_count", "a.log")
    with pytest.raises(swath.SwathError, match="top.*wrong type"):
        swath.partial("wf2", "a.log", top="ten")
    with pytest.raises(swath.SwathError, match="unknown format 'pdf'"):
        swath.render(swath.partial("wc", "a.log"), "pdf")
    with pytest.raises(swath.SwathError, match="--json is for log reports, not wc"):
        swath.render(swath.partial("wc", "a.log"), "json")
