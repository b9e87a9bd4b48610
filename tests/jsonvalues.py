"""JSON values for property tests, and a check that two decoders agree (jsoncore.py
against json, the session-file reader's msgspec path against json)."""

from __future__ import annotations

import json

from hypothesis import strategies as st

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def same_outcome(ours, theirs) -> None:
    """Both give equal values (NaN compared as NaN), or both raise the same error."""
    try:
        want = ("ok", theirs())
    except Exception as exc:
        want = ("err", type(exc), str(exc))
    try:
        got = ("ok", ours())
    except Exception as exc:
        got = ("err", type(exc), str(exc))
    assert json.dumps(got, default=repr) == json.dumps(want, default=repr)
