"""``POST /v1/users/{name}/purge``: an admin takes one user's examples out of the model, the
operation log and the checkpoints.

Oracles: a dense solve of ``(K + λW) c = y`` over the other users' uploads only
(``serve_harness.dense_solve_predict``, spec dinuzzo §3.2); the store's own rows; a restart.
"""
import sqlite3

import numpy as np
import pytest
from fastapi.testclient import TestClient

from serve_harness import LEARNER, dense_solve_predict
from stairsense.serve._store import SQLiteStore
from test_serve_api import Api, make_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
D = LEARNER["feature_map"]["n_features_in"]
PROBES = np.random.default_rng(98).normal(size=(4, D))


def fill(api, rng, n=9):
    """Uploads of ann, bob and cy in turn (and one delete of bob's); returns bob's and cy's rows."""
    kept = []
    for i in range(n):
        name = ["ann", "bob", "cy"][i % 3]
        X, y = rng.normal(size=(2, D)), rng.normal(size=2)
        r = api.upload(name, X, y, key=f"u{i}")
        assert r.status_code == 200, r.text
        if name != "ann":
            kept += [(name, x, v, k) for x, v, k in zip(X, y, r.json()["keys"])]
    gone = kept[0]
    assert api.delete(gone[0], gone[3]).status_code == 200
    return kept[1:]


def ann_rows(path):
    with sqlite3.connect(path) as db:
        ann = db.execute("SELECT id FROM users WHERE name = 'ann'").fetchone()[0]
        payloads = db.execute("SELECT COUNT(*) FROM ops WHERE user_id = ? AND y IS NOT NULL", (ann,)).fetchone()[0]
        manifests = [row[0] for row in db.execute("SELECT seq FROM checkpoints")]
        published = db.execute("SELECT COUNT(*) FROM published").fetchone()[0]
    with sqlite3.connect(f"{path}-checkpoints") as db:
        tasks = [row[0] for row in db.execute("SELECT task FROM checkpoint_tasks")]
    return ann, payloads, manifests, published, tasks


def test_purge_removes_a_user_from_the_model_the_log_and_the_checkpoints(tmp_path):
    path = tmp_path / "s.db"
    rng = np.random.default_rng(4)
    app = make_app(path, checkpoint_every=3)
    with TestClient(app) as client:
        api = Api(client, app.state.admin_token)
        for name in ["ann", "bob", "cy"]:
            api.user(name)
        kept = fill(api, rng)
        assert client.post("/v1/snapshot", headers=api.auth(api.admin)).status_code == 200
        assert client.post("/v1/users/ann/purge", headers=api.auth(api.tokens["bob"])).status_code == 403
        assert client.post("/v1/users/zed/purge", headers=api.auth(api.admin)).status_code == 404
        r = client.post("/v1/users/ann/purge", headers=api.auth(api.admin))
        assert r.status_code == 200 and r.json()["removed"] == 6, r.text
        purge_seq = r.json()["seq"]
        assert client.get("/v1/examples", headers=api.auth(api.tokens["ann"])).json()["keys"] == []
        expected = dense_solve_predict(kept, PROBES, ["ann", "bob", "cy"])
        before = {}
        for name in ["ann", "bob", "cy"]:  # ann: the shared part of the others' data only
            before[name] = api.predict(name, PROBES)
            np.testing.assert_allclose(before[name], expected[name], rtol=0, atol=1e-9)
        tokens = api.tokens
    ann, payloads, manifests, published, tasks = ann_rows(path)
    assert payloads == 0 and manifests == [purge_seq] and published == 0
    assert str(ann) not in tasks and tasks  # the others' task states stay
    app = make_app(path, checkpoint_every=3)
    with TestClient(app) as client:  # a restart gives the same model, bit for bit
        api = Api(client, None)
        api.tokens = tokens
        for name in ["ann", "bob", "cy"]:
            np.testing.assert_array_equal(api.predict(name, PROBES), before[name])
        assert api.upload("ann", np.zeros((1, D)), [1.0], key="after").status_code == 200  # the account stays


def test_a_purge_cut_short_is_out_of_the_model_at_once_and_finished_by_sending_it_again(tmp_path, monkeypatch):
    """The store fails after the purge op is logged (503): the model is without the user already,
    also after a restart (the log replays the purge), and the purge sent again removes the rest."""
    path = tmp_path / "s.db"
    app = make_app(path, checkpoint_every=3)
    with TestClient(app) as client:
        api = Api(client, app.state.admin_token)
        for name in ["ann", "bob", "cy"]:
            api.user(name)
        kept = fill(api, np.random.default_rng(5))
        with monkeypatch.context() as patch:
            def broken(self, user, seq):
                raise sqlite3.OperationalError("disk I/O error")
            patch.setattr(SQLiteStore, "forget", broken)
            r = client.post("/v1/users/ann/purge", headers=api.auth(api.admin))
        assert r.status_code == 503 and "send the purge again" in r.json()["error"]
        tokens, admin = api.tokens, api.admin
    ann, _, manifests, _, tasks = ann_rows(path)
    assert len(manifests) == 2 and str(ann) in tasks  # the older checkpoint still holds ann
    expected = dense_solve_predict(kept, PROBES, ["ann", "bob", "cy"])
    app = make_app(path, checkpoint_every=3)
    with TestClient(app) as client:
        api = Api(client, admin)
        api.tokens = tokens
        for name in ["ann", "bob", "cy"]:
            np.testing.assert_allclose(api.predict(name, PROBES), expected[name], rtol=0, atol=1e-9)
        r = client.post("/v1/users/ann/purge", headers=api.auth(api.admin))
        assert r.status_code == 200 and r.json()["removed"] == 0
    _, payloads, manifests, _, _ = ann_rows(path)
    assert payloads == 0 and manifests == [r.json()["seq"]]
