"""Property tests: every event type, and arbitrary blob bytes, survive the store unchanged."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from eventlog import ANY, Redactor, Store
from eventlog.events import EVENT_TYPES

from .strategies import for_struct

_streams = itertools.count()
PROPERTY = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path: Path = tmp_path_factory.mktemp("roundtrip") / "store.db"
    with Store(path, durable=False, redactor=Redactor()) as store:
        yield store


@pytest.mark.parametrize("event_type", EVENT_TYPES, ids=lambda t: t.__name__)
def test_every_event_type_round_trips_through_the_store(
    shared_store: Store, event_type: type
) -> None:
    @PROPERTY
    @given(events=st.lists(for_struct(event_type), min_size=1, max_size=3))
    def check(events: list) -> None:
        redactor = shared_store.redactor
        assume(all(redactor.redact_value(e) == e for e in events))
        stream = f"t:{next(_streams)}"
        shared_store.append(stream, events, expected_version=ANY)
        back = [r.event for r in shared_store.read_stream(stream)]
        assert back == events

    check()


@PROPERTY
@given(data=st.binary(max_size=4096) | st.just(b"") | st.just(b"\xff\xfe\x00\x80"))
def test_blobs_round_trip_arbitrary_bytes(shared_store: Store, data: bytes) -> None:
    assume(shared_store.redactor.redact_bytes(data) == data)
    ref = shared_store.put_blob(data)
    assert shared_store.blob_bytes(ref.sha256) == data
    assert ref.size == len(data)
    assert ref.sha256 == hashlib.sha256(data).hexdigest()
