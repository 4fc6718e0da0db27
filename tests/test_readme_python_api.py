"""The README's "Python API" block runs as written (in a scratch folder) and stays short."""
from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_api_block() -> str:
    section = README.read_text().split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_python_api_block_runs(tmp_path, monkeypatch, capsys):
    code = python_api_block()
    assert len(code.strip().splitlines()) <= 15 + 5  # 15 lines of work, 4 imports and a blank line
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md (Python API)", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"\d+ stair steps", printed[0])
    assert "'f1'" in printed[1] and (tmp_path / "stairs.onnx").is_file() and (tmp_path / "walk.csv.gz").is_file()
