"""The personalisation server's HTTP API (issue 13), in-process through FastAPI's TestClient.

Oracles: a dense solve of ``(K + λW) c = y`` over the uploads (``serve_harness.dense_solve_predict``,
spec dinuzzo §3.2) for the predictions; the state before/after for every refused request.
"""
import json
import os
import sqlite3
import time
from types import SimpleNamespace
from unittest.mock import patch

import numpy as np
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from serve_harness import LEARNER, dense_solve_predict
from stairsense.models.multitask import OnlineMultiTaskLearner
from stairsense.serve import ServeConfig, SQLiteStore, _fastpath, create_app
from stairsense.serve._engine import Rejected
from stairsense.serve._fastpath import parse_upload

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
D = LEARNER["feature_map"]["n_features_in"]


def make_app(path, body_timeout_s=20.0, **config):
    settings = {"learner": LEARNER, "publish_interval_s": 0, "min_contributors": 1, **config}
    return create_app(lambda: SQLiteStore(path), ServeConfig(**settings), max_body_bytes=20_000,
                      body_timeout_s=body_timeout_s)


class Api:
    """A TestClient with the admin token and helpers to make users and send as them."""

    def __init__(self, client, admin_token):
        self.client, self.admin = client, admin_token
        self.tokens = {}
        self.counter = 0

    def auth(self, token):
        return {"Authorization": f"Bearer {token}"}

    def user(self, name):
        r = self.client.post("/v1/users", json={"name": name}, headers=self.auth(self.admin))
        assert r.status_code == 201, r.text
        self.tokens[name] = r.json()["token"]
        return self.tokens[name]

    def upload(self, name, X, y, key=None):
        self.counter += 1
        return self.client.post("/v1/examples", json={"X": np.asarray(X).tolist(), "y": list(y)},
                                headers={**self.auth(self.tokens[name]), "Idempotency-Key": key or f"k{self.counter}"})

    def delete(self, name, key, idem=None):
        self.counter += 1
        return self.client.delete(f"/v1/examples/{key}",
                                  headers={**self.auth(self.tokens[name]), "Idempotency-Key": idem or f"d{self.counter}"})

    def predict(self, name, X):
        r = self.client.post("/v1/predict", json={"X": np.asarray(X).tolist()}, headers=self.auth(self.tokens[name]))
        assert r.status_code == 200, r.text
        return np.array(r.json()["y"])

    def state(self):
        """Everything a refused request must leave unchanged."""
        probes = np.linspace(-1, 1, 3 * D).reshape(3, D)
        examples = {n: self.client.get("/v1/examples", headers=self.auth(t)).json() for n, t in self.tokens.items()}
        return (self.client.get("/v1/health").json()["seq"], examples,
                {n: self.predict(n, probes).tolist() for n in self.tokens})


@pytest.fixture
def api(tmp_path):
    app = make_app(tmp_path / "s.db")
    with TestClient(app) as client:
        api = Api(client, app.state.admin_token)
        api.user("ann")
        api.user("bob")
        yield api


def test_uploads_and_deletes_give_the_dense_solution(api):
    rng = np.random.default_rng(0)
    rows = []
    for name in ["ann", "bob", "ann", "ann", "bob"]:
        X, y = rng.normal(size=(3, D)), rng.normal(size=3)
        r = api.upload(name, X, y)
        assert r.status_code == 200, r.text
        rows += [(name, x, v, k) for x, v, k in zip(X, y, r.json()["keys"])]
    gone = rows[7]
    assert api.delete("ann", gone[3]).status_code == 200
    rows = [row for row in rows if not (row[0] == "ann" and row[3] == gone[3])]
    probes = rng.normal(size=(6, D))
    expected = dense_solve_predict(rows, probes, ["ann", "bob", "carl"])
    api.user("carl")  # no data: the shared part only
    for name in ["ann", "bob", "carl"]:
        np.testing.assert_allclose(api.predict(name, probes), expected[name], rtol=0, atol=1e-10)


def test_a_user_sees_and_deletes_only_its_own_task(api):
    key = api.upload("ann", [[0.1, 0.2, 0.3]], [1.0]).json()["keys"][0]
    assert api.client.get("/v1/examples", headers=api.auth(api.tokens["bob"])).json()["keys"] == []
    before = api.state()
    r = api.delete("bob", key)
    assert r.status_code == 404 and "no examples at key" in r.json()["error"]
    assert api.state() == before


def test_input_keys_are_each_users_own_and_tell_nothing_of_other_users_rows(api):
    """The learner numbers the distinct inputs of all users; a user must not learn from its keys
    that another user sent the same row, nor how many rows the server holds."""
    rows = np.random.default_rng(3).normal(size=(5, D))
    ann = api.upload("ann", rows, np.ones(5)).json()["keys"]
    bob = api.upload("bob", rows[[4, 0]], [1.0, 1.0]).json()["keys"]  # rows ann sent
    carl = api.user("carl") and api.upload("carl", np.full((1, D), 0.25), [1.0]).json()["keys"]  # a new row
    assert len(set(ann) | set(bob) | set(carl)) == 8  # the same row, unrelated keys
    assert carl != [5] and bob != [4, 0] and ann != [0, 1, 2, 3, 4]  # not the server's count of rows
    assert all(0 <= k < 2**53 for k in ann + bob + carl)  # exact in every JSON client
    listed = api.client.get("/v1/examples", headers=api.auth(api.tokens["bob"])).json()
    assert sorted(listed["keys"]) == sorted(bob)
    assert api.delete("bob", ann[0]).status_code == 404  # ann's key is nothing to bob
    assert api.delete("bob", 2**60).status_code == 404
    r = api.delete("bob", bob[1])
    assert r.status_code == 200 and r.json()["keys"] == [bob[1]]
    assert api.client.get("/v1/examples", headers=api.auth(api.tokens["ann"])).json()["keys"] == ann


def _raw(api, body, token="ann", idem="fresh", **headers):
    base = {"content-type": "application/json", "Idempotency-Key": idem}
    if token is not None:
        base["Authorization"] = f"Bearer {api.tokens.get(token, token)}"
    return api.client.post("/v1/examples", content=body, headers={**base, **headers})


BAD_REQUESTS = {
    "malformed JSON": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [1'), 400, "malformed JSON"),
    "wrong dimension": (lambda a: _raw(a, b'{"X": [[0, 1]], "y": [1]}'), 422, "takes 3"),
    "ragged rows": (lambda a: _raw(a, b'{"X": [[0, 1, 2], [0, 1]], "y": [1, 2]}'), 422, "features"),
    "NaN input": (lambda a: _raw(a, b'{"X": [[0, 1, NaN]], "y": [1]}'), 422, "finite"),
    "infinite label": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [Infinity]}'), 422, "finite"),
    "label count": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [1, 2]}'), 422, "one entry per row"),
    "zero weight": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [1], "w": [0]}'), 422, "w row 0 is 0; weights"),
    # Finite but outside what the learner digests (serve/_limits.py): each used to be accepted and
    # then broke every user's predictions (500), also after a restart (the log replays it).
    "huge label, tiny weight": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [1e308], "w": [1e-320]}'), 422,
                                "y row 0 is 1e+308; labels must be finite numbers in [-1000, 1000]"),
    "label above the range": (lambda a: _raw(a, b'{"X": [[0, 1, 2], [0, 1, 3]], "y": [1, 1000.5]}'), 422,
                              "y row 1 is 1000.5"),
    "opposite huge labels": (lambda a: _raw(a, b'{"X": [[0, 1, 2], [0, 1, 2]], "y": [1e308, -1e308]}'), 422,
                             "y row 0"),
    "huge feature": (lambda a: _raw(a, b'{"X": [[0, 1e154, 2]], "y": [1]}'), 422,
                     "X row 0 feature 1 is 1e+154; inputs must be finite numbers in [-1000, 1000]"),
    "subnormal weights": (lambda a: _raw(a, b'{"X": [[0, 1, 2], [0, 1, 2]], "y": [1, 1], "w": [5e-324, 5e-324]}'),
                          422, "w row 0 is 4.94066e-324; weights must be finite numbers in [1e-06, 1e+06]"),
    "weight above the range": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [1], "w": [1e7]}'), 422, "w row 0"),
    "309-digit label": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [' + b"9" * 309 + b']}'), 422,
                        "y row 0 is an integer too large"),
    "309-digit feature": (lambda a: _raw(a, b'{"X": [[0, 1, 2], [0, 1, ' + b"9" * 309 + b']], "y": [1, 2]}'), 422,
                          "X row 1 feature 2 is an integer too large"),
    "nested 1,025 deep": (lambda a: _raw(a, b"[" * 1025 + b"]" * 1025), 400, "nested"),
    "no token before a bad body": (lambda a: a.client.post("/v1/predict", content=b'{"X": 5}'), 401, "missing token"),
    "no token, bad key": (lambda a: a.client.delete("/v1/examples/abc"), 401, "missing token"),
    "predict huge feature": (lambda a: a.client.post("/v1/predict", json={"X": [[0, 1e154, 2]]},
                                                     headers=a.auth(a.tokens["ann"])), 422, "X row 0 feature 1"),
    "unknown field": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [1], "task": "bob"}'), 422, "task"),
    "text number": (lambda a: _raw(a, b'{"X": [["0", 1, 2]], "y": [1]}'), 422, "X.0.0"),
    "boolean number": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [true]}'), 422, "y.0"),
    "not an object": (lambda a: _raw(a, b'[[0, 1, 2]]'), 422, "object"),
    "missing labels": (lambda a: _raw(a, b'{"X": [[0, 1, 2]]}'), 422, "y: Field required"),
    "no rows": (lambda a: _raw(a, b'{"X": [], "y": []}'), 422, "at least 1"),
    "no token": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [1]}', token=None), 401, "missing token"),
    "unknown user": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [1]}', token="ss1.zed.abc"), 401, "invalid token"),
    "wrong secret": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [1]}',
                                    token=a.tokens["ann"][:-2] + "xx"), 401, "invalid token"),
    "not a token": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [1]}', token="hello"), 401, "invalid token"),
    "admin uploads": (lambda a: _raw(a, b'{"X": [[0, 1, 2]], "y": [1]}', token=a.admin), 403, "admin token"),
    "user makes users": (lambda a: a.client.post("/v1/users", json={"name": "eve"},
                                                 headers=a.auth(a.tokens["ann"])), 403, "admin token"),
    "bad user name": (lambda a: a.client.post("/v1/users", json={"name": "a.b"}, headers=a.auth(a.admin)),
                      422, "name"),
    "existing user": (lambda a: a.client.post("/v1/users", json={"name": "bob"}, headers=a.auth(a.admin)),
                      409, "exists"),
    "no idempotency key": (lambda a: a.client.post("/v1/examples", json={"X": [[0, 1, 2]], "y": [1]},
                                                   headers=a.auth(a.tokens["ann"])), 400, "Idempotency-Key"),
    "replayed idempotency key": (lambda a: _raw(a, b'{"X": [[5, 5, 5]], "y": [9]}', idem="first"), 409,
                                 "already used"),
    "too large (declared)": (lambda a: _raw(a, b'{"X": [' + b"[0, 1, 2]," * 3000 + b'[0, 1, 2]], "y": [1]}'),
                             413, "larger than"),
    "too large (streamed)": (lambda a: _raw(a, iter([b'{"X": [', b"[0, 1, 2]," * 3000, b'[0, 1, 2]], "y": [1]}'])),
                             413, "larger than"),
    "unknown key delete": (lambda a: a.delete("ann", 999), 404, "no examples"),
    "snapshot not enough users": (lambda a: a.client.post("/v1/snapshot", headers=a.auth(a.admin)), 409,
                                  "nothing changed"),
}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One server for all bad requests: each case checks that it changed nothing, so they cannot
    affect one another."""
    app = make_app(tmp_path_factory.mktemp("bad") / "s.db")
    with TestClient(app) as client:
        api = Api(client, app.state.admin_token)
        api.user("ann")
        api.user("bob")
        assert api.upload("ann", [[0.5, 0.5, 0.5]], [1.0], key="first").status_code == 200
        assert api.client.post("/v1/snapshot", headers=api.auth(api.admin)).status_code == 200
        yield api


@pytest.mark.parametrize("case", list(BAD_REQUESTS))
def test_bad_request_is_refused_with_one_line_and_no_state_change(served, case):
    api = served
    send, status, words = BAD_REQUESTS[case]
    before = api.state()
    r = send(api)
    assert r.status_code == status, r.text
    reason = r.json()["error"]
    assert words in reason and "\n" not in reason
    assert api.state() == before


def test_replayed_key_returns_the_first_result_and_applies_once(api):
    first = api.upload("ann", [[1.0, 2.0, 3.0]], [1.0], key="same")
    again = api.upload("ann", [[1.0, 2.0, 3.0]], [1.0], key="same")
    assert again.status_code == 409 and again.json()["applied"]["keys"] == first.json()["keys"]
    ex = api.client.get("/v1/examples", headers=api.auth(api.tokens["ann"])).json()
    assert ex["w"] == [1.0]  # applied twice it would merge to w = 1/2 (spec §3.3)
    # the same key is another user's own namespace
    assert api.upload("bob", [[1.0, 2.0, 3.0]], [1.0], key="same").status_code == 200


def test_restart_replays_log_and_checkpoint_bit_identically(tmp_path):
    rng = np.random.default_rng(1)
    probes = rng.normal(size=(4, D))
    path = tmp_path / "s.db"
    app = make_app(path, checkpoint_every=4)
    with TestClient(app) as client:
        api = Api(client, app.state.admin_token)
        for name in ["ann", "bob"]:
            api.user(name)
        for i in range(11):  # a checkpoint every >= 4 ops (written in the background), then the log
            r = api.upload(["ann", "bob"][i % 2], rng.normal(size=(2, D)), rng.normal(size=2))
            assert r.status_code == 200
            if i == 0:
                first = r.json()["keys"][0]
        assert api.delete("ann", first).status_code == 200
        before = {n: api.predict(n, probes) for n in api.tokens}
        tokens = api.tokens
    with sqlite3.connect(path) as db:
        kept = [row[0] for row in db.execute("SELECT seq FROM checkpoints ORDER BY seq")]
    assert 1 <= len(kept) <= 2 and kept[0] >= 4 and kept[-1] <= 12, kept
    app = make_app(path, checkpoint_every=4)
    with TestClient(app) as client:
        assert app.state.admin_token is None  # the admin exists already
        api = Api(client, None)
        api.tokens = tokens
        for name in tokens:
            np.testing.assert_array_equal(api.predict(name, probes), before[name])


def test_two_workers_on_one_store_stay_serialised(tmp_path):
    """Two engines (as two API worker processes would) write one SQLite file alternately: each
    replays the other's ops under the writer lock, so both equal one learner fed the log in order."""
    path = tmp_path / "s.db"
    rng = np.random.default_rng(2)
    first, second = make_app(path, follow=True), make_app(path, follow=True)
    with TestClient(first) as c1, TestClient(second) as c2:
        admin = first.state.admin_token or second.state.admin_token
        a1, a2 = Api(c1, admin), Api(c2, admin)
        a1.user("ann")
        a2.tokens = {"ann": a1.tokens["ann"], "bob": a2.user("bob")}
        a1.tokens["bob"] = a2.tokens["bob"]
        direct = OnlineMultiTaskLearner(**LEARNER)
        ids = {}
        for i in range(8):
            api, name = [(a1, "ann"), (a2, "bob"), (a2, "ann"), (a1, "bob")][i % 4]
            X, y = rng.normal(size=(2, D)), rng.normal(size=2)
            r = api.upload(name, X, y, key=f"w{i}")
            assert r.status_code == 200, r.text
            assert r.json()["seq"] == i + 1  # one gap-free sequence across both workers
            ids.setdefault(name, len(ids))
            with sqlite3.connect(path) as db:
                user_id = db.execute("SELECT id FROM users WHERE name = ?", (name,)).fetchone()[0]
            assert first.state.engine.public_keys(user_id, direct.update_many([ids[name]] * 2, X, y)) == r.json()["keys"]
        probes = rng.normal(size=(3, D))
        for name in ["ann", "bob"]:
            np.testing.assert_array_equal(a1.predict(name, probes), a2.predict(name, probes))
            np.testing.assert_allclose(a1.predict(name, probes), direct.predict(ids[name], probes), atol=1e-12)


def test_snapshot_waits_for_enough_contributors(tmp_path):
    app = make_app(tmp_path / "s.db", min_contributors=2)
    with TestClient(app) as client:
        api = Api(client, app.state.admin_token)
        for name in ["ann", "bob"]:
            api.user(name)
        assert client.get("/v1/snapshot", headers=api.auth(api.tokens["ann"])).status_code == 404
        api.upload("ann", [[0.1, 0.2, 0.3]], [1.0])
        r = client.post("/v1/snapshot", headers=api.auth(api.admin))
        assert r.status_code == 409 and "1 user(s) contributed" in r.json()["error"]
        api.upload("bob", [[0.3, 0.2, 0.1]], [2.0])
        r = client.post("/v1/snapshot", headers=api.auth(api.admin))
        assert r.status_code == 200 and r.json()["contributors"] == 2
        snap = client.get("/v1/snapshot", headers=api.auth(api.tokens["bob"])).json()
        direct = OnlineMultiTaskLearner(**LEARNER)
        direct.update(0, [0.1, 0.2, 0.3], 1.0)
        direct.update(1, [0.3, 0.2, 0.1], 2.0)
        for name, value in direct.published().items():
            np.testing.assert_allclose(np.array(snap[name]).reshape(value.shape), value, atol=1e-12)
        assert snap["seq"] == 2 and snap["params"]["alpha"] == LEARNER["alpha"]


def test_tokens_are_stored_only_as_hashes(tmp_path, api):
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("s.db*"))
    for token in [api.admin, *api.tokens.values()]:
        assert token.encode() not in blob and token.split(".")[2].encode() not in blob


def test_store_refuses_other_learner_parameters(tmp_path):
    with TestClient(make_app(tmp_path / "s.db")):
        pass
    other = make_app(tmp_path / "s.db", learner={**LEARNER, "alpha": 0.9})
    with pytest.raises(ValueError, match="created with learner parameters"):
        with TestClient(other):
            pass


def test_a_failed_commit_is_answered_503_and_leaves_no_trace(tmp_path, monkeypatch):
    """The store fails mid-commit: the batch is refused (503), memory is rebuilt from the log, and
    the same request succeeds once the store works again."""
    app = make_app(tmp_path / "s.db")
    with TestClient(app) as client:
        api = Api(client, app.state.admin_token)
        api.user("ann")
        assert api.upload("ann", [[0.1, 0.2, 0.3]], [1.0]).status_code == 200
        before = api.state()
        from stairsense.serve._store import WriteTransaction

        def broken(self, ops):  # after the learner applied the op, before the commit
            raise sqlite3.OperationalError("disk I/O error")
        monkeypatch.setattr(WriteTransaction, "append", broken)
        r = api.upload("ann", [[0.4, 0.5, 0.6]], [2.0], key="again")
        assert r.status_code == 503 and "retry with the same Idempotency-Key" in r.json()["error"]
        monkeypatch.undo()
        assert api.state() == before
        assert api.upload("ann", [[0.4, 0.5, 0.6]], [2.0], key="again").status_code == 200


def test_openapi_page_documents_every_endpoint_and_the_bearer_scheme(served):
    schema = served.client.get("/openapi.json").json()
    assert {"/v1/users", "/v1/examples", "/v1/examples/{key}", "/v1/predict", "/v1/snapshot",
            "/v1/health"} <= set(schema["paths"])
    assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    upload = schema["paths"]["/v1/examples"]["post"]
    assert [p["name"] for p in upload["parameters"]] == ["Idempotency-Key"]
    assert "retrying" in upload["parameters"][0]["description"]
    body = upload["requestBody"]["content"]["application/json"]["schema"]
    row = body["properties"]["X"]["items"]
    assert row["minItems"] == row["maxItems"] == D and row["items"]["maximum"] == 1000
    assert body["properties"]["w"]["items"]["minimum"] == 1e-6
    assert set(upload["responses"]) == {"200", "400", "401", "403", "408", "409", "413", "422", "503"}
    assert upload["responses"]["409"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    assert served.client.get("/docs").status_code == 200


def test_a_wrong_method_is_405_with_allow_and_one_line(served):
    r = served.client.put("/v1/predict")
    assert r.status_code == 405 and r.headers["allow"] == "POST" and r.json() == {"error": "Method Not Allowed"}


# An upload body as a client might get it wrong: JSON values (huge integers, 1e999, NaN, lone
# surrogates, nesting, duplicate keys) serialised by the standard library, sometimes mangled.
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.floats(allow_nan=True) | st.text(max_size=3),
    lambda inner: (st.lists(inner, max_size=4)
                   | st.dictionaries(st.sampled_from(["X", "y", "w", "z"]), inner, max_size=4)),
    max_leaves=12)
_upload_like = st.fixed_dictionaries(
    {"X": st.lists(st.lists(st.integers(-(10**25), 10**25) | st.floats(), min_size=D, max_size=D), min_size=1,
                   max_size=3),
     "y": st.lists(st.floats(), min_size=1, max_size=3)},
    optional={"w": st.lists(st.floats(), max_size=3) | st.none()})


def _outcome(body: bytes):
    try:
        X, y, w = parse_upload(body)
    except Rejected as rejected:
        return ("refused", rejected.status, rejected.reason)
    return ("parsed", np.asarray(X, dtype=np.float64).tobytes(), np.asarray(y, dtype=np.float64).tobytes(),
            None if w is None else np.asarray(w, dtype=np.float64).tobytes())


@settings(max_examples=300, deadline=None)
@given(value=_json_values | _upload_like, cut=st.integers(0, 6), junk=st.sampled_from([b"", b"x", b"\xff", b"}"]))
def test_the_fast_json_parser_decides_uploads_as_the_standard_library(value, cut, junk):
    """Oracle: the same checks over the standard library's parse (orjson's speed must not change
    what is accepted, what is refused with which one-line reason, or any value's float64 bits)."""
    body = json.dumps(value).encode()
    body = body[:len(body) - cut] + junk if cut or junk else body
    fast = _outcome(body)
    with patch.object(_fastpath, "orjson", SimpleNamespace(loads=_always_refuse, JSONDecodeError=ValueError)):
        standard = _outcome(body)
    assert fast == standard


def _always_refuse(body):
    raise ValueError("standard library only")


def test_every_store_file_is_created_owner_only_under_umask_022(tmp_path):
    """The store, its WAL and shared memory and the checkpoint side file (with its own) hold every
    user's inputs and labels: 0600 whatever the umask."""
    old = os.umask(0o022)
    try:
        app = make_app(tmp_path / "s.db", checkpoint_every=2)
        with TestClient(app) as client:
            api = Api(client, app.state.admin_token)
            api.user("ann")
            for i in range(5):
                assert api.upload("ann", np.full((1, D), i / 10), [1.0]).status_code == 200
            wait_for(lambda: (tmp_path / "s.db-checkpoints-wal").exists())
            modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    finally:
        os.umask(old)
    assert {"s.db", "s.db-wal", "s.db-shm", "s.db-checkpoints", "s.db-checkpoints-wal"} <= set(modes), modes
    assert set(modes.values()) == {0o600}, modes


def test_a_store_made_world_readable_before_is_tightened_on_open(tmp_path):
    path = tmp_path / "s.db"
    SQLiteStore(path).close()
    path.chmod(0o644)
    SQLiteStore(path).close()
    assert path.stat().st_mode & 0o777 == 0o600


def wait_for(condition, seconds=20.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)
