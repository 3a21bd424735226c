"""RFC 5322 messages for mail tests: CRLF line endings, a Message-ID derived
from the fixture's number (`<fixture-n@example.com>`)."""

from __future__ import annotations

from email.header import Header
from email.utils import formataddr, parseaddr

__all__ = ["message", "message_id"]


def message_id(n: int) -> str:
    return f"<fixture-{n}@example.com>"


def _header_value(value: str) -> str:
    """ASCII as is; anything else as an RFC 2047 encoded word."""
    try:
        value.encode("ascii")
        return value
    except UnicodeEncodeError:
        return Header(value, "utf-8").encode()


def _address(value: str) -> str:
    name, addr = parseaddr(value)
    if not name:
        return addr or value
    try:
        name.encode("ascii")
        return formataddr((name, addr))
    except UnicodeEncodeError:
        return f"{Header(name, 'utf-8').encode()} <{addr}>"


def message(
    n: int,
    *,
    subject: str,
    sender: str = "Ada <ada@example.com>",
    to: str = "me@example.com",
    date: str = "Mon, 23 Nov 2026 10:00:00 +0000",
    body: str = "Hello,\n\nthis is a fixture message.\n",
    headers: dict[str, str] | None = None,
) -> bytes:
    """A complete text/plain message. `body` may use any line endings (they
    become CRLF); non-ASCII in the body is sent as UTF-8 quoted-printable,
    non-ASCII in the subject or a display name as an RFC 2047 encoded word.
    `headers` adds further header fields (after the standard ones)."""
    lines = [
        f"Message-ID: {message_id(n)}",
        f"Date: {date}",
        f"From: {_address(sender)}",
        f"To: {_address(to)}",
        f"Subject: {_header_value(subject)}",
        "MIME-Version: 1.0",
    ]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {_header_value(value)}")
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    try:
        text.encode("ascii")
        lines += ["Content-Type: text/plain; charset=us-ascii", "Content-Transfer-Encoding: 7bit"]
        body_lines = text.split("\n")
    except UnicodeEncodeError:
        import quopri

        lines += ["Content-Type: text/plain; charset=utf-8", "Content-Transfer-Encoding: quoted-printable"]
        encoded = quopri.encodestring(text.encode("utf-8")).decode("ascii")
        body_lines = encoded.replace("\r\n", "\n").split("\n")
    if body_lines and body_lines[-1] == "":
        body_lines = body_lines[:-1]
    return ("\r\n".join(lines) + "\r\n\r\n" + "".join(line + "\r\n" for line in body_lines)).encode("ascii")
