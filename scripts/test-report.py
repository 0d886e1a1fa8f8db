#!/usr/bin/env python3
"""Prints what a failed `swift test` run's output says went wrong, in a few lines, at its end.

A CI log is often read from its tail only, and a crash's backtrace ends with registers and images, so
the frames and the test that crashed were out of sight. This prints, from the saved output:
  - the tests that failed (Swift Testing and XCTest), each with the rest of a multi-line message,
  - the crash report, if any: its headline, the fatal-error or library message before it, and the
    crashed thread's frames (registers and images left out),
  - the tests that had started and not ended when the output stops: after a crash, one of them is the
    test that crashed (Swift Testing runs tests in parallel, so there may be several).

Usage: scripts/test-report.py OUTPUT_FILE  (Python 3's standard library only).
"""
import re
import sys

MAX_LINES = 60
MESSAGE_LINES = 20
# A line the test runner writes itself (Swift Testing's status symbols; XCTest's "Test Case"/"Test Suite").
RUNNER_LINE = re.compile(r"^([✔✘◇➜↳]|Test (Case|Suite) |\[\d+/\d+\]|Building|Compiling|Linking)")


def main(path: str) -> None:
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = [line.rstrip("\n") for line in f]

    failed = [l for l in lines if l.startswith("✘ Test ") or re.search(r"Test Case '.*' failed", l)]
    started: dict[str, int] = {}
    for l in lines:
        m = re.match(r"◇ Test (.*) started\.$", l)
        # "Test run" is the whole run; a parameterized test's cases end unreported.
        if m and m.group(1) != "run" and not m.group(1).startswith("case passing "):
            started[m.group(1)] = started.get(m.group(1), 0) + 1
            continue
        m = (re.match(r"[✔✘] Test (.*?)( with \d+ test cases?)? (passed|failed) after [\d.]+ seconds", l)
             or re.match(r"➜ Test (.*?) skipped", l))
        if m and m.group(1) in started:
            started[m.group(1)] -= 1
            if started[m.group(1)] == 0:
                del started[m.group(1)]

    print("\n==== test report (scripts/test-report.py) ====")
    if failed:
        print(f"failed ({len(failed)}):")
        shown = 0
        for k, l in enumerate(lines):
            if not (l.startswith("✘ Test ") or re.search(r"Test Case '.*' failed", l)):
                continue
            print("  " + l)
            shown += 1
            # A multi-line issue message (e.g. a check's message with a child process's output) goes on
            # in the lines that follow, up to the next line of the test runner's own.
            for more in lines[k + 1:k + 1 + MESSAGE_LINES]:
                if RUNNER_LINE.match(more):
                    break
                print("    " + more)
                shown += 1
            if shown >= MAX_LINES:
                break

    crash = next((k for k, l in enumerate(lines) if "Program crashed" in l), None)
    if crash is not None:
        print("crash:")
        # What the runtime or a library said just before the crash report (fatal error, abort message).
        for l in lines[max(0, crash - 200):crash]:
            if re.search(r"[Ff]atal|abort|panic|Assertion|Precondition|free\(\)|malloc|corrupt|Simultaneous|"
                         r"ERROR: AddressSanitizer|libmicrohttpd", l):
                print("  " + l)
        shown = 0
        in_frames = False
        for l in lines[crash:]:
            if re.match(r"Thread \d+( \".*\")? crashed:", l) or "Program crashed" in l:
                in_frames = True
            elif re.match(r"^(Registers|Images|Thread \d+( \".*\")?:$|Backtrace took)", l):
                in_frames = False
            if in_frames and l.strip():
                print("  " + l)
                shown += 1
                if shown >= MAX_LINES:
                    break

    if started:
        print("started and not ended when the output stops:")
        for name in list(started)[:MAX_LINES]:
            print("  " + name)
    if not failed and crash is None and not started:
        print("no failed test and no crash in the output: see the lines above it")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/test-report.py OUTPUT_FILE")
    main(sys.argv[1])
