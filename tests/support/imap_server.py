"""A real IMAP server for tests: Debian's Dovecot (`/usr/sbin/dovecot`, package
`dovecot-imapd`) run in the foreground as a child process, with everything
(configuration, base_dir, state, log, Maildirs, the passwd-file of users
with plaintext passwords) under a test's directory, listening on 127.0.0.1
only, on a free port. The system's Dovecot service is not involved.

    with Dovecot(tmp_path, {"ada": "pw"}) as imap:
        imap.deliver("ada", fixtures_mail.message(1, subject="Hi"))
        conn = imaplib.IMAP4("127.0.0.1", imap.port); conn.login("ada", "pw")

Running as root (as in CI containers): Dovecot refuses mail access as uid 0
and login processes as root, so the mail processes run as the `mail` system
user, chrooted (by the root master, before it drops privileges) into the
mail directory: so the test's directory may stay 0700 (pytest's tmp_path is
under a 0700 /tmp/pytest-of-root). The login processes run as `dovenull` in
Dovecot's usual login chroot, the auth process as root (it reads the
passwd-file). Running as another user, everything runs as that user,
without chroots.

With `tls=True`, a self-signed certificate for 127.0.0.1/localhost is made
with the `openssl` command, STARTTLS is offered on `port` and implicit TLS
listens on `tls_port`; `cert_path` is the certificate to trust
(`ssl_context()` builds a client context that trusts it).
"""

from __future__ import annotations

import imaplib
import os
import pwd
import grp
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["Dovecot", "DOVECOT_BIN"]

DOVECOT_BIN = "/usr/sbin/dovecot"

# A bound so that a broken server fails the test instead of hanging it; never
# a statement about how fast anything is.
START_TIMEOUT_S = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _quote(mailbox: str) -> str:
    return '"' + mailbox.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Dovecot:
    """A Dovecot IMAP server for `users` ({name: plaintext password}).

    Attributes: `host` ("127.0.0.1"), `port`, `tls_port` (None without TLS),
    `cert_path` (None without TLS), `root` (tmp_dir/"dovecot"), `config_path`,
    `log_path`, `users`.
    """

    _deliver_lock = threading.Lock()
    _last_stamp = (0, 0)
    _counter = 0

    def __init__(self, tmp_dir: Path, users: dict[str, str], *, tls: bool = False,
                 binary: str = DOVECOT_BIN) -> None:
        self.binary = binary
        self.users = dict(users)
        self.host = "127.0.0.1"
        self.root = Path(tmp_dir) / "dovecot"
        self.config_path = self.root / "dovecot.conf"
        self.log_path = self.root / "dovecot.log"
        self._stdout_path = self.root / "dovecot.stdout"
        self.passwd_path = self.root / "users.passwd"
        self.mail_root = self.root / "mail"
        self.state_dir = self.root / "state"
        self.port = _free_port()
        self.tls = tls
        self.tls_port: int | None = _free_port() if tls else None
        self.cert_path: Path | None = None
        self._key_path: Path | None = None
        self._proc: subprocess.Popen | None = None
        self._passwd_mtime = 0
        self._own_base_dir: Path | None = None
        self.base_dir = self.root / "run"
        self.as_root = os.geteuid() == 0
        if self.as_root:
            mail = pwd.getpwnam("mail")
            self.mail_uid, self.mail_gid = mail.pw_uid, mail.pw_gid
            self.login_user = next(u for u in ("dovenull", "nobody") if _user_exists(u))
            self.internal_user = "root"
        else:
            self.mail_uid, self.mail_gid = os.getuid(), os.getgid()
            self.login_user = self.internal_user = pwd.getpwuid(os.getuid()).pw_name

    # -- lifecycle -------------------------------------------------------

    def start(self) -> "Dovecot":
        if self._proc is not None:
            return self
        if not Path(self.binary).exists():
            raise RuntimeError(f"{self.binary} not found: install the Debian package dovecot-imapd")
        self.root.mkdir(parents=True, exist_ok=True)
        self.state_dir.mkdir(exist_ok=True)
        # Unix sockets' paths are limited to 107 bytes: a long tmp_dir gets a short base_dir in /tmp.
        if len(str(self.base_dir)) > 60:
            self._own_base_dir = Path(tempfile.mkdtemp(prefix="dovecot-", dir="/tmp"))
            self.base_dir = self._own_base_dir
        self.base_dir.mkdir(exist_ok=True)
        self.mail_root.mkdir(exist_ok=True)
        os.chmod(self.mail_root, 0o755)
        self._write_passwd()
        for user in self.users:
            self._maildir(user, "INBOX")
        if self.tls:
            self._make_cert()
        self.config_path.write_text(self._config())
        out = open(self._stdout_path, "ab")
        try:
            self._proc = subprocess.Popen(
                [self.binary, "-F", "-c", str(self.config_path)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )
        finally:
            out.close()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()  # the master stops its children and removes master.pid
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._own_base_dir is not None:
            shutil.rmtree(self._own_base_dir, ignore_errors=True)
            self._own_base_dir = None
            self.base_dir = self.root / "run"

    def __enter__(self) -> "Dovecot":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log(self) -> str:
        parts = []
        for path in (self.log_path, self._stdout_path):
            try:
                parts.append(path.read_text(errors="replace"))
            except FileNotFoundError:
                pass
        return "\n".join(p for p in parts if p)

    # -- helpers for tests -------------------------------------------------

    def add_user(self, user: str, password: str) -> None:
        """Adds (or changes) a user while the server runs. Dovecot rereads the
        passwd-file when its mtime or size changed, at most once a second, so
        this waits for the next second of the clock (at most one second)."""
        self.users[user] = password
        self._write_passwd()
        self._maildir(user, "INBOX")
        written = int(time.time())
        while int(time.time()) <= written:
            time.sleep(0.05)

    def connect(self, user: str | None = None, *, tls: bool = False) -> imaplib.IMAP4:
        """An imaplib connection (implicit TLS on `tls_port` if `tls`),
        logged in as `user` when given. The caller logs out."""
        if tls:
            if self.tls_port is None:
                raise RuntimeError("started without tls=True")
            conn: imaplib.IMAP4 = imaplib.IMAP4_SSL(self.host, self.tls_port, ssl_context=self.ssl_context(),
                                                    timeout=60)
        else:
            conn = imaplib.IMAP4(self.host, self.port, timeout=60)
        if user is not None:
            conn.login(user, self.users[user])
        return conn

    def ssl_context(self) -> ssl.SSLContext:
        if self.cert_path is None:
            raise RuntimeError("started without tls=True")
        return ssl.create_default_context(cafile=str(self.cert_path))

    def deliver(self, user: str, raw_message: bytes, mailbox: str = "INBOX") -> Path:
        """Writes a message into the user's Maildir `new/` (through `tmp/`,
        as a delivery agent does) with a unique name whose timestamp is
        later than every earlier delivery's, so Dovecot gives it the next UID
        when it next syncs the mailbox. A mailbox other than INBOX is made
        if missing (Maildir++: "a/b" is the directory ".a.b"). Returns the
        file's path."""
        folder = self._maildir(user, mailbox)
        with Dovecot._deliver_lock:
            now = time.time_ns() // 1000
            stamp = (now // 1_000_000, now % 1_000_000)
            if stamp <= Dovecot._last_stamp:
                secs, usecs = Dovecot._last_stamp
                stamp = (secs, usecs + 1) if usecs < 999_999 else (secs + 1, 0)
            Dovecot._last_stamp = stamp
            Dovecot._counter += 1
            name = f"{stamp[0]}.M{stamp[1]}P{os.getpid()}Q{Dovecot._counter}.{socket.gethostname().replace('/', '_')}"
        tmp = folder / "tmp" / name
        with open(tmp, "wb") as f:
            f.write(raw_message)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        if self.as_root:
            os.chown(tmp, self.mail_uid, self.mail_gid)
        final = folder / "new" / name
        os.rename(tmp, final)
        return final

    def uidvalidity(self, user: str, mailbox: str = "INBOX") -> int:
        conn = self.connect(user)
        try:
            typ, data = conn.status(_quote(mailbox), "(UIDVALIDITY)")
            if typ != "OK":
                raise RuntimeError(f"STATUS {mailbox}: {typ} {data!r}")
            text = data[0].decode() if isinstance(data[0], bytes) else str(data[0])
            return int(text.rsplit("UIDVALIDITY", 1)[1].strip(" )"))
        finally:
            conn.logout()

    # -- internals ---------------------------------------------------------

    def _home(self, user: str) -> Path:
        return self.mail_root / user

    def _maildir(self, user: str, mailbox: str) -> Path:
        if user not in self.users:
            raise KeyError(f"unknown user {user}")
        base = self._home(user) / "Maildir"
        folder = base if mailbox.upper() == "INBOX" else base / ("." + mailbox.replace("/", "."))
        made = []
        for d in (self._home(user), base, folder, folder / "cur", folder / "new", folder / "tmp"):
            if not d.exists():
                d.mkdir(mode=0o700)
                made.append(d)
        if folder != base and not (folder / "maildirfolder").exists():
            (folder / "maildirfolder").touch(mode=0o600)
            made.append(folder / "maildirfolder")
        if self.as_root:
            for p in made:
                os.chown(p, self.mail_uid, self.mail_gid)
        return folder

    def _write_passwd(self) -> None:
        lines = []
        for user, password in self.users.items():
            if any(c in user + password for c in ":\n"):
                raise ValueError("user names and passwords must not contain ':' or newlines")
            # With root, "<chroot>/./<home>" makes Dovecot chroot into the mail root.
            home = f"{self.mail_root}/./{user}" if self.as_root else f"{self.mail_root}/{user}"
            lines.append(f"{user}:{{PLAIN}}{password}:{self.mail_uid}:{self.mail_gid}::{home}::")
        tmp = self.passwd_path.with_suffix(".tmp")
        tmp.write_text("".join(line + "\n" for line in lines))
        os.chmod(tmp, 0o600)
        # A distinct whole-second mtime each time, so that Dovecot sees every change.
        stamp = max(int(time.time()), self._passwd_mtime + 1)
        os.utime(tmp, (stamp, stamp))
        self._passwd_mtime = stamp
        os.replace(tmp, self.passwd_path)

    def _make_cert(self) -> None:
        openssl = shutil.which("openssl")
        if openssl is None:
            raise RuntimeError("tls=True needs the openssl command")
        tls_dir = self.root / "tls"
        tls_dir.mkdir(exist_ok=True)
        self.cert_path, self._key_path = tls_dir / "cert.pem", tls_dir / "key.pem"
        if self.cert_path.exists() and self._key_path.exists():
            return
        subprocess.run(
            [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30",
             "-keyout", str(self._key_path), "-out", str(self.cert_path),
             "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
            check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        os.chmod(self._key_path, 0o600)

    def _config(self) -> str:
        if self.tls:
            ssl_lines = f"ssl = yes\nssl_cert = <{self.cert_path}\nssl_key = <{self._key_path}\n"
            imaps = (f"  inet_listener imaps {{\n    address = {self.host}\n    port = {self.tls_port}\n"
                     f"    ssl = yes\n  }}\n")
        else:
            ssl_lines = "ssl = no\n"
            imaps = "  inet_listener imaps {\n    port = 0\n  }\n"
        if self.as_root:
            users = (f"default_internal_user = {self.internal_user}\n"
                     f"default_internal_group = {grp.getgrgid(0).gr_name}\n"
                     f"default_login_user = {self.login_user}\n"
                     f"first_valid_uid = {self.mail_uid}\nlast_valid_uid = 0\n"
                     "first_valid_gid = 1\n"
                     f"valid_chroot_dirs = {self.mail_root}\n")
            chroots = ""
        else:
            group = grp.getgrgid(os.getgid()).gr_name
            users = (f"default_internal_user = {self.internal_user}\n"
                     f"default_internal_group = {group}\n"
                     f"default_login_user = {self.login_user}\n"
                     f"first_valid_uid = {self.mail_uid}\nlast_valid_uid = 0\n"
                     f"first_valid_gid = {self.mail_gid}\n")
            # Without root there is no chroot.
            chroots = "service anvil {\n  chroot =\n}\n"
        login_chroot = "" if self.as_root else "  chroot =\n"
        return f"""# Generated by tests/support/imap_server.py
instance_name = dovecot-test-{self.port}
base_dir = {self.base_dir}
state_dir = {self.state_dir}
log_path = {self.log_path}
info_log_path = {self.log_path}
protocols = imap
listen = {self.host}
{ssl_lines}disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
auth_verbose = yes
{users}mail_location = maildir:~/Maildir
mail_privileged_group =
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {self.passwd_path}
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {self.passwd_path}
}}
protocol imap {{
  mail_max_userip_connections = 1000
}}
service imap-login {{
{login_chroot}  inet_listener imap {{
    address = {self.host}
    port = {self.port}
  }}
{imaps}}}
{chroots}"""

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        last_error: Exception | None = None
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise RuntimeError(f"dovecot exited with {self._proc.returncode}:\n{self.log()}")
            try:
                conn = imaplib.IMAP4(self.host, self.port, timeout=10)
                try:
                    if self.users:
                        user = next(iter(self.users))
                        conn.login(user, self.users[user])
                finally:
                    try:
                        conn.logout()
                    except (imaplib.IMAP4.error, OSError):
                        pass
                return
            except (OSError, imaplib.IMAP4.error, EOFError) as e:
                last_error = e
                time.sleep(0.1)
        raise RuntimeError(f"dovecot not ready on {self.host}:{self.port}: {last_error!r}\n{self.log()}")


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False
