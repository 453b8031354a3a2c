"""Our long-connection frame codec against lark-oapi's generated protobuf class, in both directions.

The SDK runs in a child process: importing any part of it loads ~10 000 modules (a minute under coverage
on a loaded machine), which the test process itself should not carry.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from adapters.feishu.frames import CONTROL, DATA, Frame

REPO = Path(__file__).resolve().parents[3]
CASES: list[dict[str, Any]] = [
    {"SeqID": 0, "LogID": 0, "service": 7, "method": CONTROL, "headers": [["type", "ping"]]},
    {"SeqID": 1, "LogID": 2**40 + 3, "service": 123456, "method": DATA,
     "headers": [["type", "event"], ["message_id", "m-1"], ["sum", "2"], ["seq", "1"], ["trace_id", "t"]],
     "payload": '{"text": "你好 🙂"}'},
    {"SeqID": 2**64 - 1, "LogID": 5, "service": -7, "method": DATA, "headers": [],
     "payload_encoding": "gzip", "payload_type": "json", "payload": "", "LogIDNew": "log-9"},
]
OURS = {"SeqID": "seq_id", "LogID": "log_id", "LogIDNew": "log_id_new"}
SDK_SIDE = """
import json, sys
import lark_oapi.ws.client as ws_client
from lark_oapi.ws.pb.pbbp2_pb2 import Frame
ws_client.loop.close()  # the SDK makes an event loop at import
cases, ours = json.loads(sys.stdin.read())
def build(fields):
    frame = Frame()
    for key, value in fields.pop("headers"):
        header = frame.headers.add()
        header.key, header.value = key, value
    for name, value in fields.items():
        setattr(frame, name, value.encode() if name == "payload" else value)
    return frame
wires, same = [], []
for fields, wire in zip(cases, ours):
    expected = build(dict(fields))
    wires.append(expected.SerializeToString().hex())
    parsed = Frame()
    parsed.ParseFromString(bytes.fromhex(wire))
    same.append(parsed == expected)
print(json.dumps([wires, same]))
"""


def ours(fields: dict[str, Any]) -> Frame:
    values = {OURS.get(name, name): value for name, value in fields.items()}
    values["headers"] = [tuple(h) for h in values["headers"]]
    if "payload" in values:
        values["payload"] = values["payload"].encode()
    return Frame(**values)


@pytest.fixture(scope="module")
def sdk() -> tuple[list[bytes], list[bool]]:
    """What the SDK serializes for each case, and whether it parses our encoding into the same frame."""
    given = json.dumps([CASES, [ours(c).encode().hex() for c in CASES]])
    done = subprocess.run([sys.executable, "-c", SDK_SIDE], input=given, capture_output=True, text=True,
                          cwd=REPO, timeout=240, check=True)
    wires, same = json.loads(done.stdout)
    return [bytes.fromhex(w) for w in wires], same


@pytest.mark.timeout(300)
def test_sdk_frames_decode_to_the_same_fields_and_encode_back_byte_for_byte(sdk: tuple[list[bytes], list[bool]]
                                                                             ) -> None:
    for fields, wire in zip(CASES, sdk[0], strict=True):
        assert Frame.decode(wire) == ours(fields)
        assert ours(fields).encode() == wire


@pytest.mark.timeout(300)
def test_the_sdk_parses_our_frames_into_the_same_message(sdk: tuple[list[bytes], list[bool]]) -> None:
    assert sdk[1] == [True, True, True]


def test_unknown_fields_are_skipped_and_garbage_is_refused() -> None:
    extra = Frame(service=1, headers=[("type", "pong")]).encode() + bytes([0x58, 0x05, 0x65, 1, 2, 3, 4])  # 11, 12
    assert Frame.decode(extra).header("type") == "pong"
    for garbage in (b"\x0a\x05ab", b"\x08", b"\x0b", b"\x08" + b"\xff" * 11):
        with pytest.raises(ValueError):
            Frame.decode(garbage)
