#!/usr/bin/env python3
"""Compiles every SPIR-V file of llama.cpp's Vulkan back end with ferrite-cc and groups the
failures by error (docs/apps.md, "llama.cpp's shaders through ferrite-cc").

usage: llama_cc.py FERRITE_CC SPV_DIR OUT_TSV [TIMEOUT_SECONDS]

Each file is compiled on its own with the default specialization values. OUT_TSV gets one
row per file: name, OK / FAIL / TIMEOUT, seconds, first error line. The table printed at the
end gives each distinct error (numbers in it kept, the file name removed) with its count and
a few file names. The exit status is 0: the files Ferrite rightly refuses are listed, not
failed (docs/apps.md says why each group is refused).
"""
import os
import re
import subprocess
import sys
import time


def error_class(line, path):
    """The error without the file's path, so that files failing alike group together."""
    line = line.replace(path, "FILE").replace("ferrite-cc: FILE: ", "")
    return line.strip()[:160]


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    cc, spv_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
    tmo = float(sys.argv[4]) if len(sys.argv) > 4 else 300.0
    files = sorted(f for f in os.listdir(spv_dir) if f.endswith(".spv"))
    groups = {}
    ok = 0
    t_start = time.monotonic()
    with open(out, "w") as tsv:
        for name in files:
            path = os.path.join(spv_dir, name)
            t0 = time.monotonic()
            try:
                r = subprocess.run([cc, path, "-o", os.devnull], capture_output=True,
                                   text=True, timeout=tmo)
                status = "OK" if r.returncode == 0 else "FAIL"
                err = "" if r.returncode == 0 else (r.stderr.strip().splitlines() or [
                    f"exit status {r.returncode}"])[-1]
            except subprocess.TimeoutExpired:
                status, err = "TIMEOUT", f"no result within {tmo:.0f} s"
            secs = time.monotonic() - t0
            tsv.write(f"{name}\t{status}\t{secs:.1f}\t{err}\n")
            tsv.flush()
            if status == "OK":
                ok += 1
            else:
                groups.setdefault(error_class(err, path), []).append(name)
    print(f"  {ok} of {len(files)} compile ({time.monotonic() - t_start:.0f} s); "
          f"per-file results in {out}")
    for err, names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        print(f"  {len(names):5d}  {err}\n         {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
