"""Files the package writes: ``Result.html()`` writes its page as every swath output (the
command's ``logs summary --html`` included) is written: with the umask's mode, where
``tempfile.mkstemp`` made every page 0600, unreadable to the web server's user."""

import os
import stat

import pytest

import swath
from swath.dask import Result


@pytest.fixture
def umask():
    """Sets the process's umask for the test, restoring it after."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


def test_page_gets_the_umasks_mode(chdir_logs, tmp_path, umask):
    result = Result([swath.partial("summary", "a.log")])
    for mask, want in [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)]:
        umask(mask)
        page = tmp_path / f"page-{mask:03o}.html"
        result.html(page)
        assert stat.S_IMODE(page.stat().st_mode) == want, f"umask {mask:03o}"
        assert page.read_bytes().startswith(b"<!DOCTYPE html>")
    # A page replaced keeps its mode; nothing else is left in the directory.
    umask(0o022)
    page = tmp_path / "page-022.html"
    page.chmod(0o640)
    result.html(str(page))
    assert stat.S_IMODE(page.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "page-002.html",
        "page-022.html",
        "page-077.html",
    ]


def test_page_in_a_missing_directory_names_the_page(tmp_path, chdir_logs):
    result = Result([swath.partial("summary", "a.log")])
    where = tmp_path / "nowhere" / "page.html"
    with pytest.raises(swath.SwathError, match=f"^{where}: No such file or directory$"):
        result.html(where)
