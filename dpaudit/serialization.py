"""Events as plain JSON-ready values, and back: type name + fields, composed events nested.

:func:`event_to_dict` writes ``{"type": "<class name>", <field>: <value>, ...}`` for every event
class of :mod:`dpaudit.events`; nested events (``ComposedEvent.events``, ``SelfComposedEvent.event``,
``PoissonSampledEvent.event``, ...) are nested dicts, tuples and arrays are lists, enums their
value. :func:`event_from_dict` rebuilds the event through its constructor (so every value is
validated again) and refuses an unknown type by name; :func:`event_types` lists them all (it loads
:mod:`dpaudit.events_ml`, which reading one of its events back does too, and nothing else here).

Floats are exact: Python's ``json`` writes a float as its shortest ``repr``, which reads back to
the same double. Infinite and NaN values (no event holds one today, but a caller's field might)
are written as ``{"float": "inf"}``, ``{"float": "-inf"}`` or ``{"float": "nan"}``, so
``json.dumps(..., allow_nan=False)`` always works and the output is strict JSON.

Example:
    >>> import json
    >>> from dpaudit.events import GaussianEvent, LaplaceEvent, ComposedEvent
    >>> e = ComposedEvent((GaussianEvent(sigma=0.1), LaplaceEvent(scale=3.0).repeat(4)))
    >>> text = json.dumps(event_to_dict(e), allow_nan=False)
    >>> text[:60]
    '{"type": "ComposedEvent", "events": [{"type": "GaussianEvent'
    >>> event_from_dict(json.loads(text)) == e
    True
"""

from __future__ import annotations

import dataclasses
import functools
import math
from enum import Enum
from types import ModuleType
from typing import Any

import numpy as np

from dpaudit import events as _events
from dpaudit.events import PrivacyEvent, loaded_ml_events

__all__ = ["event_to_dict", "event_from_dict", "encode_value", "decode_value", "event_types"]


def _types_of(module: ModuleType) -> dict[str, type[PrivacyEvent]]:
    return {
        name: cls
        for name in module.__all__
        if isinstance(cls := getattr(module, name), type)
        and issubclass(cls, PrivacyEvent)
        and cls is not PrivacyEvent
    }


_CORE_TYPES = _types_of(_events)


@functools.cache
def event_types() -> dict[str, type[PrivacyEvent]]:
    """Every event class, by name: those of :mod:`dpaudit.events` and of :mod:`dpaudit.events_ml`,
    which this loads (a run that records none of the latter does not)."""
    from dpaudit import events_ml

    return {**_CORE_TYPES, **_types_of(events_ml)}


def encode_value(value: Any) -> Any:
    """A JSON-ready form of one field value (see the module docstring).

    >>> encode_value(float("inf")), encode_value((1.5, 2)), encode_value(np.float64(0.25))
    ({'float': 'inf'}, [1.5, 2], 0.25)
    """
    if isinstance(value, PrivacyEvent):
        return event_to_dict(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isfinite(v):
            return v
        return {"float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
    if isinstance(value, str) or value is None:
        return value
    if isinstance(value, np.ndarray):
        return [encode_value(v) for v in value.tolist()]
    if isinstance(value, (tuple, list)):
        return [encode_value(v) for v in value]
    raise ValueError(f"cannot serialise a value of type {type(value).__name__}: {value!r}")


def decode_value(value: Any) -> Any:
    """The inverse of :func:`encode_value` (lists come back as tuples; constructors convert)."""
    if isinstance(value, dict):
        if set(value) == {"float"}:
            return float(value["float"])
        return event_from_dict(value)
    if isinstance(value, list):
        return tuple(decode_value(v) for v in value)
    return value


def event_to_dict(event: PrivacyEvent) -> dict[str, Any]:
    """``{"type": name, field: value, ...}`` for an event (nested for composed events).

    >>> from dpaudit.events import GaussianEvent
    >>> event_to_dict(GaussianEvent(sigma=2.0))
    {'type': 'GaussianEvent', 'sigma': 2.0, 'sensitivity': 1.0}
    """
    name = type(event).__name__
    known = _CORE_TYPES if loaded_ml_events() is None else event_types()  # else no ML event exists
    if known.get(name) is not type(event):
        raise ValueError(f"cannot serialise an event of unknown type: {name}")
    out: dict[str, Any] = {"type": name}
    for f in dataclasses.fields(event):
        out[f.name] = encode_value(getattr(event, f.name))
    return out


def event_from_dict(data: dict[str, Any]) -> PrivacyEvent:
    """The event written by :func:`event_to_dict`; ``ValueError`` for an unknown type, naming it.

    >>> event_from_dict({"type": "LaplaceEvent", "scale": 2.0, "sensitivity": 1.0})
    LaplaceEvent(scale=2.0, sensitivity=1.0)
    >>> event_from_dict({"type": "MysteryEvent"})
    Traceback (most recent call last):
    ...
    ValueError: unknown event type: MysteryEvent
    """
    if not isinstance(data, dict) or "type" not in data:
        raise ValueError(f"an event must be a dict with a 'type', got {data!r}")
    name = data["type"]
    cls = _CORE_TYPES.get(name) or event_types().get(name)
    if cls is None:
        raise ValueError(f"unknown event type: {name}")
    names = {f.name for f in dataclasses.fields(cls)}
    extra = set(data) - names - {"type"}
    if extra:
        raise ValueError(f"unknown fields for {name}: {sorted(extra)}")
    kwargs = {k: decode_value(v) for k, v in data.items() if k != "type"}
    return cls(**kwargs)
