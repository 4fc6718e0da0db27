"""``stairsense serve`` refuses bad settings with one stderr line and exit status 2 (no server starts)."""
import json

import pytest
import uvicorn

from serve_harness import LEARNER
from stairsense.cli import main
from stairsense.serve import SQLiteStore


def test_serve_bad_settings_exit_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"alpha": 0.5,\n "lam": }')
    assert main(["serve", "--store", str(tmp_path / "a.db"), "--learner", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.json: line 2" in err and "\n" not in err

    with pytest.raises(SystemExit, match="2"):  # refused by the flag's type, before anything runs
        main(["serve", "--store", str(tmp_path / "a.db"), "--workers", "0"])
    assert "--workers" in capsys.readouterr().err

    store = SQLiteStore(tmp_path / "b.db")
    store.setup(LEARNER)
    store.close()
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**LEARNER, "lam": 5.0}))
    assert main(["serve", "--store", str(tmp_path / "b.db"), "--learner", str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert "created with other learner parameters" in err and "\n" not in err


def test_admin_token_file_is_0600_even_over_a_stale_temp_file(tmp_path):
    from stairsense._cli_serve import _write_secret

    target = tmp_path / "s.db.admin-token"
    stale = tmp_path / "s.db.admin-token.tmp"
    stale.write_text("left by a crash")
    stale.chmod(0o644)
    _write_secret(target, "ss1.admin.secret")
    assert target.read_text() == "ss1.admin.secret\n"
    assert target.stat().st_mode & 0o777 == 0o600
    assert {p.name for p in tmp_path.iterdir()} == {target.name, stale.name}  # no new temp file left


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "example.org"])
def test_serve_refuses_a_non_loopback_host_without_allow_remote(tmp_path, capsys, monkeypatch, host):
    started = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: started.append(kwargs))
    assert main(["serve", "--store", str(tmp_path / "a.db"), "--host", host]) == 2
    err = capsys.readouterr().err.strip()
    assert "--allow-remote" in err and host in err and "\n" not in err and started == []


def test_serve_with_allow_remote_listens_there_with_deadlines(tmp_path, capsys, monkeypatch):
    from stairsense.serve._http import DeadlineProtocol

    started = []
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: started.append(kwargs))
    assert main(["serve", "--store", str(tmp_path / "a.db"), "--host", "0.0.0.0", "--allow-remote"]) == 0
    assert main(["serve", "--store", str(tmp_path / "a.db"), "--host", "::1"]) == 0  # loopback needs no flag
    assert [run["host"] for run in started] == ["0.0.0.0", "::1"]
    assert started[0]["http"] is DeadlineProtocol and started[0]["timeout_keep_alive"] == 5
