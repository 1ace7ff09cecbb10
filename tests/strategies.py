"""Hypothesis strategies built from msgspec's own type information, so every event type (and
any type added later) gets a generator that honours its constraints without listing fields."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
import msgspec.inspect as mi
from hypothesis import strategies as st

from eventlog.events import EVENT_TYPES

_text = st.text(max_size=40)
_datetimes = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.replace(tzinfo=UTC))


def for_type(info: mi.Type) -> st.SearchStrategy:
    match info:
        case mi.Metadata():
            return for_type(info.type)
        case mi.BoolType():
            return st.booleans()
        case mi.IntType():
            low = info.ge if info.ge is not None else -(2**53)
            high = info.le if info.le is not None else 2**53
            return st.integers(min_value=low, max_value=high)
        case mi.FloatType():
            return st.floats(
                min_value=info.ge, max_value=info.le, allow_nan=False, allow_infinity=False
            )
        case mi.StrType():
            if info.pattern == "^[0-9a-f]{64}$":
                return st.binary(min_size=32, max_size=32).map(bytes.hex)
            return _text
        case mi.NoneType():
            return st.none()
        case mi.LiteralType():
            return st.sampled_from(info.values)
        case mi.DateTimeType():
            return _datetimes
        case mi.UnionType():
            return st.one_of([for_type(t) for t in info.types])
        case mi.VarTupleType() | mi.ListType():
            items = st.lists(for_type(info.item_type), max_size=3)
            return items.map(tuple) if isinstance(info, mi.VarTupleType) else items
        case mi.StructType():
            return for_struct(info.cls)
    raise TypeError(f"no strategy for {info!r}")


def for_struct(cls: type[msgspec.Struct]) -> st.SearchStrategy:
    info = mi.type_info(cls)
    fields = {f.name: for_type(f.type) for f in info.fields}
    required = {f.name for f in info.fields if f.required}
    optional = {name: s for name, s in fields.items() if name not in required}
    return st.fixed_dictionaries({n: fields[n] for n in required}, optional=optional).map(
        lambda kw: cls(**kw)
    )


any_event = st.one_of([for_struct(t) for t in EVENT_TYPES])
recorded_times = _datetimes.map(lambda d: d + timedelta(microseconds=0))
