"""``stairsense serve`` refuses bad settings with one stderr line and exit status 2 (no server starts)."""
import json

from serve_harness import LEARNER
from stairsense.cli import main
from stairsense.serve import SQLiteStore


def test_serve_bad_settings_exit_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"alpha": 0.5,\n "lam": }')
    assert main(["serve", "--store", str(tmp_path / "a.db"), "--learner", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.json: line 2" in err and "\n" not in err

    assert main(["serve", "--store", str(tmp_path / "a.db"), "--workers", "0"]) == 2
    assert "--workers" in capsys.readouterr().err

    store = SQLiteStore(tmp_path / "b.db")
    store.setup(LEARNER)
    store.close()
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**LEARNER, "lam": 5.0}))
    assert main(["serve", "--store", str(tmp_path / "b.db"), "--learner", str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert "created with other learner parameters" in err and "\n" not in err
