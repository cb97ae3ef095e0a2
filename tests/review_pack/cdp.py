"""A headless Chromium driven over the Chrome DevTools Protocol on a pipe (``--remote-debugging-pipe``:
NUL-separated JSON on file descriptors 3 and 4), standard library only.

Every event the browser sends is kept, so a test can look at the network requests (``Network.requestWillBeSent``),
console messages (``Runtime.consoleAPICalled``), exceptions (``Runtime.exceptionThrown``) and log entries
(``Log.entryAdded``) of a page load.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Optional

# Debian's chromium package, found on the PATH like the other tools the tests need (None: not installed)
CHROMIUM: Optional[str] = shutil.which("chromium") or shutil.which("chromium-browser")

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # belt and braces: a request could not reach anything anyway
    "--remote-debugging-pipe",
)


class Browser:
    """One Chromium process with one page attached (flat session)."""

    def __init__(self, user_data_dir: Path, width: int = 1280, height: int = 900, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.log = user_data_dir.with_name(user_data_dir.name + ".log")  # Chromium's own stderr (D-Bus noise)
        log = self.log.open("wb")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4: bash (which, unlike dash, takes fds above 9)
        # moves the pipe ends there in the child.
        script = f'exec 3<&{to_chrome_r} 4>&{from_chrome_w} {to_chrome_r}<&- {from_chrome_w}>&-; exec "$0" "$@"'
        self.proc = subprocess.Popen(
            ["bash", "-c", script, str(CHROMIUM or "chromium"), *FLAGS, f"--user-data-dir={user_data_dir}",
             f"--window-size={width},{height}", "about:blank"],
            pass_fds=(to_chrome_r, from_chrome_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        log.close()
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._next = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self.events: list[dict[str, Any]] = []
        self._inbox: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.session = ""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _read(self) -> None:
        buf = b""
        while True:
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                self._inbox.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                self._inbox.put(json.loads(raw))

    def _pump(self, deadline: float) -> Optional[dict[str, Any]]:
        try:
            msg = self._inbox.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            return None
        if msg is None:
            raise RuntimeError("Chromium closed the pipe: " + self._stderr())
        if "id" in msg:
            self._replies[msg["id"]] = msg
        else:
            self.events.append(msg)
        return msg

    def _stderr(self) -> str:
        return self.log.read_text(errors="replace")[-2000:]

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send a command (to the page's session once attached) and wait for its reply."""
        self._next += 1
        ident = self._next
        msg: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if self.session:
            msg["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while ident not in self._replies:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no reply to {method} within {self.timeout}s")
            self._pump(deadline)
        reply = self._replies.pop(ident)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def wait_for(self, method: str) -> dict[str, Any]:
        """The first event named ``method`` (already received or coming)."""
        deadline = time.monotonic() + self.timeout
        while True:
            for e in self.events:
                if e.get("method") == method:
                    return e
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {method} within {self.timeout}s")
            self._pump(deadline)

    def settle(self, seconds: float = 0.5) -> None:
        """Collect whatever events come within ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._pump(deadline)

    def load(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        self.settle()

    def evaluate(self, expression: str) -> Any:
        """The JSON value of an expression evaluated in the page (the page itself has no script)."""
        found = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in found:
            raise RuntimeError(f"{expression}: {found['exceptionDetails']}")
        return found["result"].get("value")

    def screenshot(self, x: float, y: float, width: float, height: float) -> bytes:
        """PNG of a rectangle of the page in CSS pixels (beyond the viewport too)."""
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={"x": x, "y": y, "width": width, "height": height, "scale": 1})
        return base64.b64decode(shot["data"])

    def close(self) -> None:
        try:
            self.session = ""
            self.call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
