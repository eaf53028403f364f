"""The README's Python example, run as written (issue 30): in a directory with a `logs/`
of access logs, its printed report is byte for byte what `swath logs wf2 logs/*.log`
prints (the README once printed it with a blank line more)."""

import glob
import re
import shutil
import subprocess
import sys

from conftest import ROOT


def readme_python():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1, blocks
    return blocks[0]


def test_the_readme_example_prints_what_the_cli_prints(logs, cli, tmp_path):
    (tmp_path / "logs").mkdir()
    for name in ["a.log", "b.log"]:
        shutil.copy(logs / name, tmp_path / "logs" / name)
    p = subprocess.run(
        [sys.executable, "-c", readme_python()], capture_output=True, cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr.decode()
    files = sorted(glob.glob("logs/*.log", root_dir=tmp_path))
    out, err, status = cli("logs", "wf2", *files, cwd=tmp_path)
    assert status == 0, err
    assert out.count(b"\n") > 5
    assert p.stdout == out
