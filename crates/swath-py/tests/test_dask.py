"""swath.dask on a LocalCluster of two worker processes: byte-identical reports to the
CLI across block sizes, trees, many files, gzip and empty files; failures name the file."""

import os

import fsspec
import pytest

import swath
import swath.dask as sd

FILES = ["a.log", "b.log", "c.log.gz", "empty.log", "d.log", "e.log"]
TEXT = ["a.log", "b.log", "empty.log", "d.log", "e.log"]


@pytest.mark.parametrize("blocksize", [4099, "64KiB", "256MiB"])
@pytest.mark.parametrize("split_every", [2, 8])
def test_reports_equal_the_cli(chdir_logs, cli, client, blocksize, split_every):
    run = dict(client=client, blocksize=blocksize, split_every=split_every)
    cases = [
        (["logs", "wf2", *FILES], sd.wf2(FILES, **run)),
        (["logs", "summary", *FILES], sd.summary(FILES, **run)),
        (["wc", *TEXT], sd.wc(TEXT, encoding="utf8", **run)),
        (["grep", "-c", "ongoing", *TEXT], sd.grep_count(TEXT, "ongoing", utf8=True, **run)),
    ]
    for args, result in cases:
        out, err, status = cli(*args)
        assert status == 0, err
        assert result.bytes() == out, args
        # The merged partial prints the same.
        assert swath.render(result.partial) == out, args


def test_json_and_page_equal_the_cli(chdir_logs, cli, client, tmp_path):
    out, _, _ = cli("logs", "wf2", "--json", "--top", "3", *FILES)
    assert sd.wf2(FILES, client=client, blocksize="100KiB", top=3).json() == __import__("json").loads(out)
    page = tmp_path / "cli.html"
    _, err, status = cli("logs", "summary", "--html", str(page), *FILES)
    assert status == 0, err
    mine = tmp_path / "dask.html"
    sd.summary(FILES, client=client, blocksize="100KiB").html(mine)
    # From the list of panels on (the CLI's header adds its inputs and times).
    a, b = mine.read_bytes(), page.read_bytes()
    assert a[a.index(b"<nav>"):] == b[b.index(b"<nav>"):]


def test_options_reach_the_workers(chdir_logs, cli, client):
    run = dict(client=client, blocksize="50KiB")
    cases = [
        (["wc", "-l", "-m", "-L", *TEXT], sd.wc(TEXT, lines=True, chars=True, max_line_length=True, encoding="utf8", **run)),
        (["wc", "-c", "a.log"], sd.wc("a.log", bytes=True, encoding="utf8", **run)),
        (["grep", "-c", "-v", "-w", "-i", "GET", *TEXT], sd.grep_count(TEXT, "GET", invert=True, word=True, ignore_case=True, utf8=True, **run)),
        (["grep", "-c", "-h", "-F", "feed\nongoing.atom", *TEXT], sd.grep_count(TEXT, "feed\nongoing.atom", syntax="fixed", with_filename=False, utf8=True, **run)),
        (["grep", "-c", "-H", "-Z", "-E", "40[34]", "a.log"], sd.grep_count("a.log", "40[34]", syntax="extended", with_filename=True, null=True, utf8=True, **run)),
        (["logs", "wf2", "--top", "4", "--article", "^/ongoing/When/", *FILES], sd.wf2(FILES, top=4, article="^/ongoing/When/", **run)),
    ]
    for args, result in cases:
        out, err, status = cli(*args)
        assert status == 0, err
        assert result.bytes() == out, args


def test_many_files_and_a_glob(chdir_logs, cli, client, tmp_path):
    data = open("b.log", "rb").read()
    d = tmp_path / "many"
    d.mkdir()
    names = []
    for k in range(60):
        name = d / f"part-{k:03d}.log"
        name.write_bytes(data[k * 4000 : k * 4000 + 3000 + k * 37])
        names.append(str(name))
    out, err, status = cli("logs", "wf2", *names)
    assert status == 0, err
    assert sd.wf2(str(d / "part-*.log"), client=client, blocksize=2000, split_every=3).bytes() == out
    out, _, _ = cli("wc", *names)
    assert sd.wc(names, client=client, blocksize=2000, encoding="utf8").bytes() == out


def test_missing_file_fails_the_job_with_its_name(chdir_logs, client):
    with pytest.raises(swath.SwathError, match=r"^nothere\.log: No such file or directory$"):
        sd.wf2(["a.log", "nothere.log"], client=client)
    with pytest.raises(FileNotFoundError, match=r"none-\*\.log: no file matches"):
        sd.wc("none-*.log", client=client)


def test_file_gone_before_its_task_fails_the_job(chdir_logs, client, tmp_path):
    # Listed, then removed before the workers read it: the worker's error names it.
    from swath.dask import _Input, _piece

    gone = str(tmp_path / "gone.log")
    inp = _Input(index=0, name=gone, size=1000, compressed=False, path=gone)
    future = client.submit(_piece, "wf2", inp, 0, 1000, {})
    with pytest.raises(swath.SwathError, match=r"gone\.log: No such file or directory"):
        future.result()


def test_truncated_gzip_fails_the_job(chdir_logs, client, tmp_path):
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(open("c.log.gz", "rb").read()[:3000])
    with pytest.raises(swath.SwathError, match=r"cut\.log\.gz: unexpected end of gzip data"):
        sd.summary(["a.log", str(cut)], client=client)


def test_xz_and_bzip2_logs_are_one_range_each(chdir_logs, cli, client, tmp_path):
    # Compressed by their first bytes whatever their names, two streams end to end in each.
    import bz2
    import lzma

    data = open("a.log", "rb").read()
    half = data.rfind(b"\n", 0, len(data) // 2) + 1
    (tmp_path / "a.xz").write_bytes(lzma.compress(data[:half]) + lzma.compress(data[half:]))
    (tmp_path / "a-bzipped").write_bytes(bz2.compress(data[:half]) + bz2.compress(data[half:]))
    out, _, _ = cli("logs", "summary", "a.log", "a.log", "b.log")
    files = [str(tmp_path / "a.xz"), str(tmp_path / "a-bzipped"), "b.log"]
    result = sd.summary(files, client=client, blocksize=5000, split_every=2)
    assert result.text() == out.decode()
    assert swath.compression(b"\xfd7zXZ\x00") == "xz"
    assert swath.compression(b"BZh9") == "bzip2"
    assert swath.compression(b"\x28\xb5\x2f\xfd") == "zstd"
    assert swath.compression(b"1.2.3.4 - -") is None


def test_unreadable_file_fails_the_job(tmp_path, run_python_unprivileged):
    # In a process that the file's mode applies to (as nobody when the tests run as root),
    # with a cluster of its own in that process.
    locked = tmp_path / "locked.log"
    locked.write_bytes(b"x\n")
    locked.chmod(0)
    tmp_path.chmod(0o755)
    code = (
        "import swath, swath.dask as sd\n"
        "from distributed import Client, LocalCluster\n"
        "with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,\n"
        "                  dashboard_address=':0') as c, Client(c) as client:\n"
        "    try:\n"
        f"        sd.wc([{str(locked)!r}], client=client)\n"
        "    except swath.SwathError as e:\n"
        "        print(e)\n"
    )
    out = run_python_unprivileged(code)
    assert out.stdout == f"{locked}: Permission denied\n", out.stderr


def test_fsspec_urls_are_read_through_fsspec(chdir_logs, cli):
    # The memory file system lives in one process: a cluster of threads shares it.
    from distributed import Client, LocalCluster

    fs = fsspec.filesystem("memory")
    for f in FILES:
        fs.pipe(f"/logs/{f}", open(f, "rb").read())
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as cluster, Client(cluster) as c:
        for report, args in [(sd.wf2, ["logs", "wf2"]), (sd.summary, ["logs", "summary"])]:
            # The report names memory:// files as fsspec names them; compare the tables.
            out, _, _ = cli(*args, "--json", *sorted(FILES))
            result = report("memory://logs/*", client=c, blocksize="37KiB", split_every=2)
            assert result.json() == __import__("json").loads(out)
        out, _, _ = cli("wc", "a.log", "b.log")
        result = sd.wc(["memory://logs/a.log", "memory://logs/b.log"], client=c, blocksize=5000, encoding="utf8")
        assert result.bytes() == out.replace(b"a.log", b"memory://logs/a.log").replace(b"b.log", b"memory://logs/b.log")


def test_fsspec_spans_with_a_huge_line_are_read_in_bounded_memory(chdir_logs, cli, tmp_path):
    # A line of 6 MiB (longer than --max-line's 4 MiB: malformed) across block edges, and
    # a log without a newline at all: each span goes through a temporary file.
    from distributed import Client, LocalCluster

    a = open("a.log", "rb").read()
    huge = a[:70000] + b"x" * (6 << 20) + b"\n" + a[70000:140000]
    (tmp_path / "huge.log").write_bytes(huge)
    (tmp_path / "flat.log").write_bytes(b"y" * 300000)
    fs = fsspec.filesystem("memory")
    fs.pipe("/big/huge.log", huge)
    fs.pipe("/big/flat.log", b"y" * 300000)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as cluster, Client(cluster) as c:
        for report, args in [(sd.wf2, ["logs", "wf2"]), (sd.summary, ["logs", "summary"])]:
            out, _, _ = cli(*args, "--json", str(tmp_path / "flat.log"), str(tmp_path / "huge.log"))
            result = report(["memory://big/flat.log", "memory://big/huge.log"], client=c, blocksize="1MiB", split_every=3)
            assert result.json() == __import__("json").loads(out)


def test_span_past_the_end_of_its_file_is_refused(tmp_path):
    span = tmp_path / "span"
    span.write_bytes(b"a line\n")
    with pytest.raises(swath.SwathError, match="far.log: a span of 7 bytes from byte 5 of a file of 10 bytes"):
        swath.partial_of_span("wc", str(span), "far.log", 10, 5)
    with pytest.raises(swath.SwathError, match="far.log: a span of 7 bytes"):
        swath.partial_of_span("wc", str(span), "far.log", 1 << 63, (1 << 64) - 3)


def test_local_file_url_is_read_by_the_workers(chdir_logs, cli, client):
    url = "file://" + os.path.abspath("a.log")
    out, _, _ = cli("logs", "wf2", "a.log")
    assert sd.wf2(url, client=client, blocksize="100KiB").bytes() == out


def test_progress_bar_leaves_the_report_as_it_is(chdir_logs, cli, client, capsys):
    out, _, _ = cli("wc", "a.log", "b.log")
    assert sd.wc(["a.log", "b.log"], client=client, blocksize="64KiB", encoding="utf8", progress=True).bytes() == out
    shown = capsys.readouterr()
    assert "100%" in shown.out + shown.err


def test_without_a_client_dask_runs_locally(chdir_logs, cli):
    # A fresh process, no distributed client: Dask's local scheduler, with its progress bar.
    import subprocess
    import sys

    code = "import sys, swath.dask as sd; sys.stdout.buffer.write(sd.wf2(['a.log', 'c.log.gz'], blocksize='100KiB', progress=True).bytes())"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True)
    out, _, _ = cli("logs", "wf2", "a.log", "c.log.gz")
    assert p.returncode == 0, p.stderr
    assert p.stdout == out
    assert b"100%" in p.stdout + p.stderr or b"Completed" in p.stderr


def test_default_client_and_local_scheduler(chdir_logs, cli, client):
    out, _, _ = cli("logs", "wf2", "a.log", "b.log")
    # The cluster's client is the default one.
    assert sd.wf2(["a.log", "b.log"], blocksize="64KiB").bytes() == out
    merged = swath.merge([sd.wf2("a.log", client=client).partial, swath.partial("wf2", "b.log", index=1)])
    assert swath.render(merged) == out


def test_reports_are_printed_where_the_partials_are(chdir_logs, cli, client):
    # A client that is not the default one (the job's own), closed afterwards: the reports
    # asked for before stay, a new one is refused with a clear message.
    from distributed import Client

    out, _, _ = cli("logs", "summary", "a.log", "b.log")
    own = Client(client.scheduler.address, set_as_default=False)
    result = sd.summary(
        ["a.log", "b.log"], client=own, blocksize="64KiB", split_every=2, ranges=None
    )
    assert result.bytes() == out
    # The partials are still on the workers, as futures of the job's client.
    assert all(type(p).__name__ == "Future" for p in result._parts)
    own.close()
    assert result.bytes() == out
    # The summary's other formats are printed from its ranges' results, kept on the
    # client; what needs the partials is refused.
    json_out, _, _ = cli("logs", "summary", "--json", "a.log", "b.log")
    assert result.json() == __import__("json").loads(json_out)
    with pytest.raises(swath.SwathError, match="client is closed"):
        result.partial
    # Printed by one task (the default), a report not asked for before is refused.
    own = Client(client.scheduler.address, set_as_default=False)
    result = sd.summary(["a.log", "b.log"], client=own, blocksize="64KiB")
    assert result.bytes() == out
    own.close()
    with pytest.raises(swath.SwathError, match="client is closed"):
        result.json()


def test_a_file_changed_between_calls_is_read_again(chdir_logs, cli, client, tmp_path):
    # The first result still holds its partials on the workers; the second call, over the
    # same path with the same size but other bytes, must not reuse them.
    log = tmp_path / "same.log"
    a, b = open("a.log", "rb").read(), open("b.log", "rb").read()
    n = min(len(a), len(b))
    log.write_bytes(a[:n])
    first = sd.wf2(str(log), client=client)
    out_a, _, _ = cli("logs", "wf2", str(log))
    log.write_bytes(b[:n])
    out_b, _, _ = cli("logs", "wf2", str(log))
    assert out_a != out_b
    assert sd.wf2(str(log), client=client).bytes() == out_b
    assert first.bytes() == out_a


def _w3c_log(lines):
    """An IIS (W3C extended) log of `lines` requests, its `#Fields:` line at the top."""
    head = (
        "#Software: Microsoft Internet Information Services 10.0\n#Version: 1.0\n"
        "#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip "
        "cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken\n"
    )
    rows = []
    for i in range(lines):
        rows.append(
            f"2024-03-0{1 + i % 3} {i % 24:02}:15:30 10.0.0.1 GET /p{i % 17}.html - 443 - "
            f"192.0.2.{i % 50} Mozilla/5.0+(X11;+Linux+x86_64) - {[200, 404, 302][i % 3]} 0 0 {i % 90}\n"
        )
    return head + "".join(rows)


def test_other_formats_cut_anywhere_equal_the_cli(cli, client, tmp_path):
    """A W3C log and a JSON-lines log, cut into pieces that mostly lack the `#Fields:`
    line: each piece reads the format from its file's first lines, so the merged report
    equals the CLI's, times by request included."""
    import json

    (tmp_path / "iis.log").write_text(_w3c_log(3000))
    caddy = "".join(
        json.dumps({"ts": 1709633730 + i * 61, "status": [200, 404][i % 2], "size": i,
                    "duration": (i % 7) / 1000, "request": {"remote_ip": f"198.51.100.{i % 9}",
                    "method": "GET", "uri": f"/x{i % 11}", "proto": "HTTP/2.0", "host": "h"}}) + "\n"
        for i in range(3000)
    )
    (tmp_path / "caddy.log").write_text(caddy)
    for name in ["iis.log", "caddy.log"]:
        path = str(tmp_path / name)
        out, err, status = cli("logs", "summary", "--json", path)
        assert status == 0, err
        want = json.loads(out)
        assert want["general"]["lines_failed"] == 0 and want["general"]["requests"] == 3000
        got = sd.summary([path], client=client, blocksize="20KiB").json()
        assert got == want, name


NOT_REGULAR = "a byte range needs a regular file, not a pipe or a device"


def _refused(code, cwd):
    """Runs `code` in a Python of its own (so that a call that hangs fails the test at its
    timeout instead of hanging it); returns what it printed."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120
    )
    return out.stdout, out.stderr


@pytest.mark.parametrize(
    "call", ["wc(p)", "summary(p)", "wf2(p)", "grep_count(p, 'x')", "wc([p, 'ok.log'])"]
)
def test_a_fifo_is_refused_at_once(tmp_path, call):
    """A FIFO (opening it for reading would wait for a writer forever) is refused when the
    files are listed, with the message the command gives for a byte range of a pipe."""
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    (tmp_path / "ok.log").write_text("a line\n")
    code = (
        "import swath, swath.dask as sd\n"
        f"p = {str(fifo)!r}\n"
        "try:\n"
        f"    sd.{call}\n"
        "except swath.SwathError as e:\n"
        "    print(e)\n"
    )
    out, err = _refused(code, tmp_path)
    assert out == f"{fifo}: {NOT_REGULAR}\n", err


def test_devices_and_directories_are_refused_as_the_command_refuses_them(tmp_path, cli):
    """A device and a directory: refused at once with the command's messages, each
    once (`NAME: Is a directory`)."""
    _, err, status = cli("wc", "--emit-partial", str(tmp_path / "o"), "/dev/null")
    assert (err, status) == (f"swath wc: /dev/null: {NOT_REGULAR}\n".encode(), 1)
    with pytest.raises(swath.SwathError, match=f"^/dev/null: {NOT_REGULAR}$"):
        sd.wc("/dev/null")
    with pytest.raises(swath.SwathError, match=f"^{tmp_path}: Is a directory$"):
        sd.wc(str(tmp_path))


def test_the_extension_refuses_a_fifo_at_once(tmp_path):
    """swath.partial and swath.partial_of_span, called with a FIFO (as a task would be
    when the file was replaced after it was listed): refused at once."""
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    for call in [
        "swath.partial('wc', p)",
        "swath.partial('summary', p, 0, 10)",
        "swath.partial_of_span('wf2', p, 'x.log', 100, 0)",
    ]:
        code = (
            "import swath\n"
            f"p = {str(fifo)!r}\n"
            "try:\n"
            f"    {call}\n"
            "except swath.SwathError as e:\n"
            "    print(e)\n"
        )
        out, err = _refused(code, tmp_path)
        want = "x.log" if "span" in call else str(fifo)
        assert out == f"{want}: {NOT_REGULAR}\n", (call, err)
