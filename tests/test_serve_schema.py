"""The served OpenAPI schema is true: schemathesis generates requests from ``/openapi.json`` of
a running server and checks every answer against it (status documented, body and headers as
described, never a server error).  Bounded: at most 50 examples per operation.
"""
import threading
import time

import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings

from serve_harness import free_port
from stairsense.serve._http import DeadlineProtocol
from test_serve_api import make_app

schemathesis = pytest.importorskip("schemathesis")
from schemathesis.specs.openapi.checks import positive_data_acceptance  # noqa: E402
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """A served app (uvicorn in a thread, as ``stairsense serve`` runs it) with a user and its tokens."""
    app = make_app(tmp_path_factory.mktemp("schema") / "s.db")
    port = free_port()
    running = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, http=DeadlineProtocol,
                                            log_level="warning"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    while not running.started:
        time.sleep(0.02)
    url = f"http://127.0.0.1:{port}"
    import httpx

    admin = app.state.admin_token
    user = httpx.post(url + "/v1/users", json={"name": "ann"}, headers={"Authorization": f"Bearer {admin}"}).json()
    yield {"url": url, "admin": admin, "user": user["token"]}
    running.should_exit = True
    thread.join(10)


def test_the_served_api_answers_as_its_schema_says(live):
    schema = schemathesis.openapi.from_url(live["url"] + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 9
    for operation in operations:
        admin = operation.path.startswith("/v1/users") or (operation.path, operation.method) == ("/v1/snapshot", "POST")
        token = live["admin"] if admin else live["user"]

        @given(case=operation.as_strategy())
        @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def answers_as_described(case):
            # An upload needs one label (and weight) per row: an equality of lengths that JSON Schema
            # cannot state, so "schema-valid" bodies with other lengths are refused (422) rightly.
            case.call_and_validate(headers={"Authorization": f"Bearer {token}"},
                                   excluded_checks=[positive_data_acceptance])

        answers_as_described()
