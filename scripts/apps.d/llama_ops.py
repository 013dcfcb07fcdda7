#!/usr/bin/env python3
"""Runs llama.cpp's test-backend-ops (mode test: each op on the Vulkan back end against ggml's
CPU back end) one op at a time on the current Vulkan driver and prints pass/fail/unsupported
per op, with the first failing case and the time taken.

Usage: llama_ops.py TEST_BACKEND_OPS LOG_DIR RESULTS_JSON "OP[:PARAMS_REGEX] ..."
(the specs are split on white space, so regexes must not contain any)
Each op runs as `test-backend-ops test -b Vulkan0 -o OP [-p PARAMS_REGEX]` under a time limit
(LLAMA_OP_TIMEOUT seconds, default 600); its full output goes to LOG_DIR/OP.log.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

# A case's verdict line; a failing case's line starts with its error ("[OP] ERR = ... > ...").
CASE = re.compile(r"^(\[[A-Z_0-9]+\] .*?)?\s+([A-Z][A-Z_0-9]*)\((.*)\): (.*)$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run_op(exe, log_dir, op, params, timeout):
    cmd = [exe, "test", "-b", "Vulkan0", "-o", op]
    if params:
        cmd += ["-p", params]
    # Line-buffered output, so that a run stopped at the time limit still shows the cases it
    # finished (a pipe is block-buffered: without this a timeout showed nothing past the
    # device line).
    if shutil.which("stdbuf"):
        cmd = ["stdbuf", "-oL", "-eL"] + cmd
    t0 = time.monotonic()
    log = os.path.join(log_dir, re.sub(r"[^A-Za-z0-9_]", "_", op) + ".log")
    timed_out = False
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        out = p.stdout
        code = p.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout or b""
        code = None
        timed_out = True
    secs = time.monotonic() - t0
    text = ANSI.sub("", out.decode("utf-8", "replace"))
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n" + text)
    row = {"op": op, "params": params or "", "ok": 0, "fail": 0, "unsupported": 0,
           "seconds": round(secs, 1), "exit": code, "timeout": timed_out, "first_fail": "",
           "device": "", "log": log}
    # Error lines (NMSE/MAA, Vulkan errors) come before the verdict on the case's line.
    for line in text.splitlines():
        if line.startswith("  Device description:"):
            row["device"] = line.split(":", 1)[1].strip()
        m = CASE.match(line)
        if not m:
            continue
        error, name, params, verdict = m.groups()
        if verdict.startswith("not supported"):
            row["unsupported"] += 1
        elif verdict.rstrip().endswith("OK"):
            row["ok"] += 1
        elif verdict.rstrip().endswith("FAIL"):
            row["fail"] += 1
            if not row["first_fail"]:
                row["first_fail"] = f"{name}({params}): {(error or verdict).strip()}"[:300]
    if row["ok"] + row["fail"] + row["unsupported"] == 0 and not row["first_fail"]:
        # Nothing ran: the back end did not come up, or the process died; keep its last words.
        tail = [l for l in text.splitlines() if l.strip()][-3:]
        row["first_fail"] = " | ".join(tail)[:300]
    return row


def main():
    exe, log_dir, results = sys.argv[1:4]
    specs = " ".join(sys.argv[4:]).split()
    timeout = float(os.environ.get("LLAMA_OP_TIMEOUT", "600"))
    os.makedirs(log_dir, exist_ok=True)
    rows = []
    print(f"  {'op':<12} {'pass':>5} {'fail':>5} {'unsup':>5} {'seconds':>8}  first failure / note")
    for spec in specs:
        op, _, params = spec.partition(":")
        r = run_op(exe, log_dir, op, params, timeout)
        rows.append(r)
        note = r["first_fail"]
        if r["timeout"]:
            note = f"time limit {timeout:.0f} s reached; " + note
        elif r["exit"] not in (0, 1):
            note = f"exit status {r['exit']}; " + note
        print(f"  {op:<12} {r['ok']:>5} {r['fail']:>5} {r['unsupported']:>5} {r['seconds']:>8.1f}  {note}",
              flush=True)
    devices = sorted({r["device"] for r in rows if r["device"]})
    print(f"  device: {', '.join(devices) or 'none reported'}; logs in {log_dir}")
    with open(results, "w") as f:
        json.dump(rows, f, indent=1)
    bad = [r for r in rows if r["fail"] or r["timeout"] or r["ok"] + r["unsupported"] == 0]
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
