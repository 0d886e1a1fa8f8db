#!/usr/bin/python3
"""Drive a headless Chromium over the DevTools protocol (CDP) to check Perimeter's live map page.

Needs Debian's `chromium` and `python3-websocket` (scripts/deps.sh installs both); run it with
/usr/bin/python3 (the system interpreter that sees python3-websocket).

Two modes:

  browser-check.py --check
      prints "ok" and exits 0 when chromium and the websocket module are available, otherwise prints
      what is missing and exits 3.

  browser-check.py URL [--screenshot FILE] [--timeout SECONDS]
      opens URL, waits until the page has drawn its fences (<body data-fences="ready">) and its event
      stream is open, prints a JSON summary (fence count, fills, banner) and saves a screenshot.

  browser-check.py --commands
      reads one JSON command per line on stdin and answers one JSON line on stdout, so a test written
      in another language can drive the browser step by step:
        {"cmd": "open", "url": "http://…"}              -> {"ok": true}
        {"cmd": "eval", "expr": "document.title"}        -> {"ok": true, "value": …}
        {"cmd": "wait", "expr": "…", "timeout": 20}      -> {"ok": true, "value": …} once the expression
                                                            is truthy, else {"ok": false, "error": …}
        {"cmd": "screenshot", "path": "out.png"}        -> {"ok": true, "bytes": n}
        {"cmd": "console"}                               -> {"ok": true, "value": [messages and errors]}
        {"cmd": "quit"}                                  -> {"ok": true}, then exits
      The first line written (before any command) is {"ok": true, "ready": true, "browser": "…"} or
      {"ok": false, "error": "…"}. The browser runs with the UTC time zone and a 1280×800 window.
"""

import argparse
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium():
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


def missing_requirements():
    missing = []
    if find_chromium() is None:
        missing.append("chromium (apt-get install chromium)")
    try:
        import websocket  # noqa: F401
    except ImportError:
        missing.append("the websocket module (apt-get install python3-websocket; run with /usr/bin/python3)")
    return missing


class Browser:
    """A headless Chromium with one page, driven over CDP."""

    def __init__(self, width=1280, height=800, startup_timeout=40):
        import websocket

        self.profile = tempfile.mkdtemp(prefix="perimeter-chromium-")
        command = [
            find_chromium(), "--headless=new", "--remote-debugging-port=0", "--user-data-dir=" + self.profile,
            "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
            "--remote-allow-origins=*", "--window-size=%d,%d" % (width, height), "about:blank",
        ]
        environment = dict(os.environ, TZ="UTC")
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self.log,
                                        env=environment, start_new_session=True)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + startup_timeout
        port = None
        while time.time() < deadline:
            if self.process.poll() is not None:
                self.log.seek(0)
                error = self.log.read().decode("utf-8", "replace")[-2000:]
                raise RuntimeError("chromium exited with status %s: %s" % (self.process.returncode, error))
            try:
                with open(port_file) as handle:
                    lines = handle.read().split("\n")
                if lines and lines[0].strip().isdigit():
                    port = int(lines[0].strip())
                    break
            except OSError:
                pass
            time.sleep(0.05)
        if port is None:
            self.close()
            raise RuntimeError("chromium wrote no DevToolsActivePort file within %d s" % startup_timeout)
        self.port = port
        page = None
        while time.time() < deadline and page is None:
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10) as response:
                targets = json.load(response)
            page = next((t for t in targets if t.get("type") == "page" and t.get("webSocketDebuggerUrl")), None)
            if page is None:
                time.sleep(0.1)
        if page is None:
            self.close()
            raise RuntimeError("chromium offers no page target")
        with urllib.request.urlopen("http://127.0.0.1:%d/json/version" % port, timeout=10) as response:
            self.version = json.load(response).get("Browser", "chromium")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self.next_id = 0
        self.console = []
        self.call("Runtime.enable")
        self.call("Page.enable")
        self.call("Emulation.setTimezoneOverride", timezoneId="UTC")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def call(self, method, **params):
        self.next_id += 1
        ident = self.next_id
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError("%s failed: %s" % (method, message["error"].get("message")))
                return message.get("result", {})
            self.note(message)

    def note(self, message):
        method = message.get("method")
        params = message.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.console.append("console.%s: %s" % (params.get("type"), text))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            exception = details.get("exception", {})
            self.console.append("exception: %s" % (exception.get("description") or details.get("text")))
        del self.console[:-200]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError("JavaScript error: %s" % (details.get("exception", {}).get("description") or details.get("text")))
        return result.get("result", {}).get("value")

    def open(self, url):
        self.call("Page.navigate", url=url)

    def wait(self, expression, timeout=20):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            try:
                last = self.evaluate(expression)
            except RuntimeError as error:
                last = str(error)
            else:
                if last:
                    return last
            time.sleep(0.1)
        raise RuntimeError("timed out after %s s waiting for %s (last value: %r)" % (timeout, expression, last))

    def screenshot(self, path):
        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)
        return len(data)

    def close(self):
        try:
            if getattr(self, "socket", None):
                self.socket.close()
        except Exception:
            pass
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        shutil.rmtree(self.profile, ignore_errors=True)
        self.log.close()


READY = "document.body && document.body.dataset.fences === 'ready' && document.body.dataset.stream === 'open'"
SUMMARY = """(() => ({
  fences: Number(document.body.dataset.fenceCount),
  fills: Object.fromEntries([...document.querySelectorAll('[data-fence-id]')].map(g => [g.dataset.fenceId, g.dataset.fill])),
  banner: document.getElementById('banner').textContent,
  devices: [...document.querySelectorAll('[data-device-id]')].map(g => g.dataset.deviceId),
}))()"""


def answer(value):
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def serve_commands():
    try:
        browser = Browser()
    except Exception as error:  # report, do not crash: the caller reads one line
        answer({"ok": False, "error": str(error)})
        return 1
    answer({"ok": True, "ready": True, "browser": browser.version})
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                command = json.loads(line)
                name = command.get("cmd")
                if name == "open":
                    browser.open(command["url"])
                    answer({"ok": True})
                elif name == "eval":
                    answer({"ok": True, "value": browser.evaluate(command["expr"])})
                elif name == "wait":
                    answer({"ok": True, "value": browser.wait(command["expr"], float(command.get("timeout", 20)))})
                elif name == "screenshot":
                    answer({"ok": True, "bytes": browser.screenshot(command["path"])})
                elif name == "console":
                    answer({"ok": True, "value": list(browser.console)})
                elif name == "quit":
                    answer({"ok": True})
                    break
                else:
                    answer({"ok": False, "error": "unknown command %r" % name})
            except Exception as error:
                answer({"ok": False, "error": str(error)})
    finally:
        browser.close()
    return 0


def check_page(url, screenshot, timeout):
    browser = Browser()
    try:
        browser.open(url)
        browser.wait(READY, timeout)
        summary = browser.evaluate(SUMMARY)
        if screenshot:
            summary["screenshot"] = screenshot
            browser.screenshot(screenshot)
        summary["console"] = browser.console
        print(json.dumps(summary, indent=2))
    finally:
        browser.close()
    return 0


def main():
    parser = argparse.ArgumentParser(description="Check Perimeter's live map page in headless Chromium.")
    parser.add_argument("url", nargs="?", help="the page, e.g. http://127.0.0.1:8080/")
    parser.add_argument("--check", action="store_true", help="only say whether chromium and websocket are available")
    parser.add_argument("--commands", action="store_true", help="JSON-lines command mode on stdin/stdout")
    parser.add_argument("--screenshot", help="where to save a PNG screenshot")
    parser.add_argument("--timeout", type=float, default=30, help="seconds to wait for the page (30)")
    arguments = parser.parse_args()
    missing = missing_requirements()
    if arguments.check:
        print("ok" if not missing else "missing: " + "; ".join(missing))
        return 0 if not missing else 3
    if missing:
        print("browser-check: missing " + "; ".join(missing), file=sys.stderr)
        return 3
    if arguments.commands:
        return serve_commands()
    if not arguments.url:
        parser.error("give the page URL, --check or --commands")
    return check_page(arguments.url, arguments.screenshot, arguments.timeout)


if __name__ == "__main__":
    sys.exit(main())
