"""The long connection's frame: protobuf `pbbp2.Frame`, encoded and decoded by hand.

The message has nine scalar fields and a repeated (key, value) header, so a few lines of wire format
replace a protobuf runtime (lark-oapi vendors one; importing it loads the whole SDK, ~160 MB).
Field numbers: SeqID 1, LogID 2, service 3, method 4, headers 5 (Header: key 1, value 2),
payload_encoding 6, payload_type 7, payload 8, LogIDNew 9. `tests/adapters/feishu/test_frames.py` checks
both directions against the SDK's generated class.
"""

from __future__ import annotations

from dataclasses import dataclass, field

CONTROL, DATA = 0, 1  # Frame.method
_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5
_STRINGS = {6: "payload_encoding", 7: "payload_type", 9: "log_id_new"}


@dataclass(slots=True)
class Frame:
    seq_id: int = 0
    log_id: int = 0
    service: int = 0
    method: int = CONTROL
    headers: list[tuple[str, str]] = field(default_factory=list)
    payload_encoding: str | None = None
    payload_type: str | None = None
    payload: bytes | None = None
    log_id_new: str | None = None

    def header(self, key: str) -> str | None:
        return next((v for k, v in self.headers if k == key), None)

    def encode(self) -> bytes:
        out = bytearray()
        for number, scalar in ((1, self.seq_id), (2, self.log_id), (3, self.service), (4, self.method)):
            out += _varint(number << 3 | _VARINT) + _varint(scalar % (1 << 64))  # int32 < 0: ten bytes, as protobuf
        for key, value in self.headers:
            _put_bytes(out, 5, _text(1, key) + _text(2, value))
        optional = (self.payload_encoding, self.payload_type, self.payload, self.log_id_new)
        for number, field_value in zip((6, 7, 8, 9), optional, strict=True):  # in field order, as protobuf writes
            if field_value is not None:
                _put_bytes(out, number, field_value if isinstance(field_value, bytes) else field_value.encode())
        return bytes(out)

    @classmethod
    def decode(cls, data: bytes) -> Frame:
        """Raises ValueError for anything that is not a well-formed frame."""
        frame = cls()
        for number, value in _fields(data):
            if number in (1, 2, 3, 4) and isinstance(value, int):
                signed = value - (1 << 64) if number in (3, 4) and value >= 1 << 63 else value
                setattr(frame, ("seq_id", "log_id", "service", "method")[number - 1], signed)
            elif number == 5 and isinstance(value, bytes):
                pair = {n: v for n, v in _fields(value) if isinstance(v, bytes)}
                frame.headers.append((pair.get(1, b"").decode(), pair.get(2, b"").decode()))
            elif number in _STRINGS and isinstance(value, bytes):
                setattr(frame, _STRINGS[number], value.decode())
            elif number == 8 and isinstance(value, bytes):
                frame.payload = value
        return frame


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _put_bytes(out: bytearray, number: int, value: bytes) -> None:
    out += _varint(number << 3 | _BYTES) + _varint(len(value)) + value


def _text(number: int, value: str) -> bytes:
    out = bytearray()
    _put_bytes(out, number, value.encode())
    return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("truncated or overlong varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) in order; unknown fields are read past, as protobuf does."""
    fields: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        number, kind = key >> 3, key & 7
        value: int | bytes
        if kind == _VARINT:
            value, pos = _read_varint(data, pos)
        elif kind == _BYTES:
            size, pos = _read_varint(data, pos)
            if pos + size > len(data):
                raise ValueError("truncated field")
            value, pos = data[pos:pos + size], pos + size
        elif kind in (_FIXED64, _FIXED32):
            width = 8 if kind == _FIXED64 else 4
            if pos + width > len(data):
                raise ValueError("truncated field")
            value, pos = int.from_bytes(data[pos:pos + width], "little"), pos + width
        else:
            raise ValueError(f"unsupported wire type {kind}")
        fields.append((number, value))
    return fields
