"""Every pair of an Arrow schema's key-value metadata, a repeated key as often as it is there.

pyarrow's ``Schema.metadata`` is a dict that keeps the *first* value of a repeated key, so a Parquet file whose
footer says ``copter.sense`` = ``max`` and then ``min`` read as a maximisation, and the same bytes with the pairs
swapped as a minimisation, without a word (hunt 37); ``copter.base_round`` and ``copter.objective_offset`` alike.
The keys are read through the Arrow C data interface, the stable ABI every Arrow library exports
(https://arrow.apache.org/docs/format/CDataInterface.html, "The ArrowSchema structure" and "Metadata"): the
schema's ``metadata`` is an int32 pair count, then for each pair an int32 key length, the key's bytes, an int32
value length and the value's bytes, in native byte order; the capsule of pyarrow's ``__arrow_c_schema__`` (the
Arrow PyCapsule interface) releases it when freed.
"""

from __future__ import annotations

import ctypes


class _ArrowSchema(ctypes.Structure):
    """``struct ArrowSchema`` of the C data interface."""


_ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p), ("name", ctypes.c_char_p), ("metadata", ctypes.c_void_p),
    ("flags", ctypes.c_int64), ("n_children", ctypes.c_int64), ("children", ctypes.c_void_p),
    ("dictionary", ctypes.c_void_p), ("release", ctypes.c_void_p), ("private_data", ctypes.c_void_p),
]
_CAPSULE_POINTER = ctypes.pythonapi.PyCapsule_GetPointer
_CAPSULE_POINTER.restype, _CAPSULE_POINTER.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def _int32(address: int) -> int:
    return ctypes.c_int32.from_address(address).value


def metadata_pairs(schema) -> list[tuple[bytes, bytes]]:
    """The (key, value) pairs of ``schema``'s (a ``pyarrow.Schema``) metadata in stored order, repeated keys
    included; ``[]`` without metadata. Exported with the public PyCapsule protocol (``__arrow_c_schema__``), whose
    capsule releases the exported schema when it is freed. O(columns) to export, O(metadata bytes) to walk."""
    capsule = schema.__arrow_c_schema__()
    c = _ArrowSchema.from_address(_CAPSULE_POINTER(capsule, b"arrow_schema"))
    if not c.metadata:
        return []
    pairs, pos = [], c.metadata + 4
    for _ in range(_int32(c.metadata)):
        size = _int32(pos)
        key = ctypes.string_at(pos + 4, size)
        pos += 4 + size
        size = _int32(pos)
        pairs.append((key, ctypes.string_at(pos + 4, size)))
        pos += 4 + size
    del c  # no view of the export may outlive the capsule (freed with it, releasing the schema)
    return pairs


def conflicting_keys(schema, prefix: bytes = b"") -> dict[bytes, list[bytes]]:
    """{key: its values in stored order} for the metadata keys of ``schema`` starting with ``prefix`` that are
    given more than once with different values (a key repeated with one value is no conflict)."""
    values: dict[bytes, list[bytes]] = {}
    for key, value in metadata_pairs(schema):
        if key.startswith(prefix):
            values.setdefault(key, []).append(value)
    return {k: v for k, v in values.items() if len(set(v)) > 1}
