"""Attachments through the real hub and app: saved, checked, shown to the model, refused politely."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

from PIL import Image

from bot.chats.sessions import SessionKey
from bot.i18n import t
from bot.messages import Attachment
from bot.tree.jsonl import export_jsonl, import_jsonl
from tests.fakes.openai_api import MODEL, FakeOpenAI, Text, ToolCalls
from tests.harness import RecordingAdapter, running_app

VISION = {"llm": {"vision_models": [MODEL]}}


def jpeg(width: int = 3000, height: int = 1500, exif: bool = True) -> bytes:
    image = Image.new("RGB", (width, height), (200, 30, 30))
    out = io.BytesIO()
    if exif:
        data = Image.Exif()
        data[0x010F] = "SpyCam"  # Make
        image.save(out, "JPEG", exif=data.tobytes())
    else:
        image.save(out, "JPEG")
    return out.getvalue()


def chat_folder(app: object) -> Path:
    session = app.lanes.session(SessionKey("recording", "c1"))  # type: ignore[attr-defined]
    return app.hub.runner.workdir(session)  # type: ignore[attr-defined]


async def send(rec: RecordingAdapter, app: object, text: str, *files: tuple[Attachment, bytes]) -> None:
    assert rec.files is not None
    for attachment, data in files:
        rec.files.served[attachment.handle] = data
    await rec.say(text, attachments=tuple(a for a, _ in files))
    await app.hub.idle()  # type: ignore[attr-defined]


async def test_a_photo_reaches_a_vision_model_as_an_image_part(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=VISION) as app:
        fake.script(Text("a red rectangle"))
        photo = Attachment("image", "photo.jpg", "image/jpeg", None, "h1")
        await send(rec, app, "what is this?", (photo, jpeg()))
        folder = chat_folder(app)
    user = fake.requests[0]["body"]["messages"][-1]
    text, image = user["content"]
    assert text["type"] == "text" and text["text"].startswith("what is this?\n[image attached: photo.jpg (image/jpeg")
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/jpeg;base64,")
    saved = sorted((folder / "uploads").iterdir())
    assert [p.name.endswith("-photo.jpg") for p in saved] == [True]
    with Image.open(saved[0]) as stored:
        assert max(stored.size) == 2048 and "Make" not in str(dict(stored.getexif()))  # resized, EXIF gone
    assert rec.texts() == ["a red rectangle"]


async def test_a_non_vision_model_hears_where_the_image_was_saved(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        fake.script(Text("noted"))
        await send(rec, app, "", (Attachment("image", "cat.png", "image/jpeg", None, "h1"), jpeg(40, 40)))
        path = app.lanes.session(SessionKey("recording", "c1")).path
    content = fake.requests[0]["body"]["messages"][-1]["content"]
    assert isinstance(content, str) and content.startswith("[image attached: cat.png (image/jpeg, ")
    assert content.endswith("-cat.png]") and "saved as uploads/" in content
    assert path[0].files[0].sha256 == hashlib.sha256((chat_folder_of(path, tmp_path)).read_bytes()).hexdigest()


def chat_folder_of(path: list, tmp_path: Path) -> Path:  # type: ignore[type-arg]
    return next((tmp_path / "data" / "chats").iterdir()) / path[0].files[0].path


async def test_a_document_is_saved_and_the_file_tools_read_it(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        notes = b"line one\nthe secret word is tangerine\n"
        await send(rec, app, "", (Attachment("file", "../../notes.txt", "text/plain", None, "h1"), notes))
        saved = next((chat_folder(app) / "uploads").iterdir()).name
        fake.script(ToolCalls([("c1", "read_document", f'{{"filepath": "uploads/{saved}"}}')]), Text("tangerine"))
        await rec.say("what is the secret word?")
        await app.hub.idle()
    assert saved.endswith("-notes.txt")  # the name lost its path: nothing lands outside uploads/
    tool_result = fake.requests[-1]["body"]["messages"][-1]
    assert tool_result["role"] == "tool" and "the secret word is tangerine" in tool_result["content"]


async def test_a_voice_message_is_transcribed_and_answered(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    config = {"llm": {"transcription_model": "whisper-1"}}
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        fake.transcript = "remind me to call Li"
        fake.script(Text("I will."))
        voice = b"OggS" + bytes(2000)
        await send(rec, app, "", (Attachment("audio", "voice.ogg", "audio/ogg", None, "v1"), voice))
    assert [(t["model"], t["data"]) for t in fake.transcriptions] == [("whisper-1", voice)]
    assert rec.texts() == ["🎤 remind me to call Li", "I will."]
    assert fake.requests[0]["body"]["messages"][-1]["content"].startswith("remind me to call Li\n[audio attached")


async def test_voice_without_a_transcription_model_gets_a_polite_line(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await send(rec, app, "", (Attachment("audio", "voice.ogg", "audio/ogg", None, "v1"), b"OggS" + bytes(99)))
    assert rec.texts() == ["Voice messages aren't enabled here (no transcription model is configured); "
                           "please type it."]
    assert fake.requests == []


async def test_bad_files_get_a_clear_line_and_leave_nothing(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    config = {"media": {"max_bytes": 100_000, "max_files": 3}}
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=config) as app:
        bomb = io.BytesIO()
        Image.new("1", (20_000, 20_000)).save(bomb, "PNG")  # tiny file, 400 million pixels
        cases = [
            (Attachment("file", "big.bin", "", None, "a"), bytes(100_001)),
            (Attachment("file", "empty.txt", "text/plain", None, "b"), b""),
            (Attachment("image", "fake.jpg", "image/jpeg", None, "c"), b"MZ\x90\x00 not a picture"),
            (Attachment("image", "bomb.png", "image/png", None, "d"), bomb.getvalue()),
        ]
        for attachment, data in cases:
            await send(rec, app, "", (attachment, data))
        await send(rec, app, "", *[(Attachment("file", f"{n}.txt", "text/plain", None, f"m{n}"), b"x")
                                   for n in range(4)])
        folder = chat_folder(app)
    assert rec.texts() == [
        "big.bin is larger than 0.1 MB, so I didn't take it.",
        "empty.txt is empty (0 bytes), so I didn't take it.",
        "fake.jpg says it is image/jpeg, but its contents are something else, so I didn't take it.",
        "bomb.png is not an image I can open (broken, or far too many pixels).",
        "That's more than 3 files in one message; please send at most 3 at a time.",
    ]
    assert list((folder / "uploads").iterdir()) == []  # nothing half-written
    assert fake.requests == []


async def test_send_file_posts_the_bytes_intact(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await rec.say("hello")
        await app.hub.idle()
        report = jpeg(64, 64, exif=False)
        chat_folder(app).mkdir(parents=True, exist_ok=True)
        (chat_folder(app) / "chart.jpg").write_bytes(report)
        fake.script(ToolCalls([("c1", "send_file", '{"filepath": "chart.jpg", "caption": "the chart"}')]),
                    ToolCalls([("c2", "send_file", '{"filepath": "../../bothub.sqlite3"}')]), Text("done"))
        await rec.say("send me the chart")
        await app.hub.idle()
    assert rec.files is not None
    [(chat, file, data)] = rec.files.uploads
    assert (file.name, file.mime, file.caption, file.is_image) == ("chart.jpg", "image/jpeg", "the chart", True)
    assert hashlib.sha256(data).digest() == hashlib.sha256(report).digest() and chat.chat_id == "c1"
    results = [m["content"] for m in fake.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert results[-2:] == ["Sent chart.jpg to the chat.", results[-1]]
    assert results[-1].startswith("Error:") and "outside" in results[-1]


async def test_the_tree_keeps_files_across_jsonl_and_retry(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,), config=VISION) as app:
        fake.script(Text("red"), Text("still red"))
        await send(rec, app, "colour?", (Attachment("image", "p.jpg", "image/jpeg", None, "h1"), jpeg(50, 50)))
        await rec.say("/retry")
        await app.hub.idle()
        await rec.say("/tree")
        await app.hub.idle()
        session = app.lanes.session(SessionKey("recording", "c1"))
        conv = await app.conversations.tree(session, "")
    exported = export_jsonl(conv, {})
    again = import_jsonl(exported, "")
    [user] = [m for m in again.messages.values() if m.role == "user"]
    assert user.files == session.path[0].files and user.files[0].kind == "image"
    first, retried = (r["body"]["messages"][-1]["content"] for r in fake.requests)
    assert retried == first and first[1]["type"] == "image_url"  # /retry shows the model the same image
    assert "[1] You: 🖼 colour?" in rec.texts()[-1]


def tiny_pdf(text: str) -> bytes:
    """A one-page PDF with one line of text, written by hand (objects, xref table, trailer)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    return pdf_file(objects)


def pdf_file(objects: list[bytes]) -> bytes:
    """A PDF file of these objects (numbered from 1, the first the catalog): xref table and trailer added."""
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


async def test_read_document_extracts_a_pdfs_text(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        pdf = tiny_pdf("Quarterly revenue rose by 12 percent")
        await send(rec, app, "", (Attachment("file", "q3.pdf", "application/pdf", None, "h1"), pdf))
        saved = next((chat_folder(app) / "uploads").iterdir()).name
        fake.script(ToolCalls([("c1", "read_document", f'{{"filepath": "uploads/{saved}"}}')]), Text("12%"))
        await rec.say("how much did revenue rise?")
        await app.hub.idle()
    assert fake.requests[-1]["body"]["messages"][-1]["content"] == "[page 1]\nQuarterly revenue rose by 12 percent"


async def test_something_that_is_no_file_gets_the_text_only_line(tmp_path: Path, fake: FakeOpenAI) -> None:
    rec = RecordingAdapter()
    async with running_app(tmp_path, fake.base_url, adapters=(rec,)) as app:
        await send(rec, app, "", (Attachment("other", "shared chat card"), b""))
        await send(rec, app, "", (Attachment("sticker", "sticker.webp", "image/webp", None, "st"), b"RIFF"))
    assert rec.texts() == [t("en", "text_only")] * 2 and fake.requests == []
