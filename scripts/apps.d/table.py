"""Prints scripts/apps' table from the per-driver JSON records of one framework.
Usage: table.py FERRITE.json [LAVAPIPE.json]; exit status 1 when a Ferrite row failed."""
import json
import sys

fer = json.load(open(sys.argv[1]))
lvp = {}
if len(sys.argv) > 2:
    try:
        lvp = {(r["name"], r["mode"]): r for r in json.load(open(sys.argv[2]))}
    except (OSError, ValueError):
        lvp = {}
print(f"  {'workload':<30} {'mode':<5} {'result':<6} {'error':>9} {'tol':>7} {'ferrite(sim)':>13} {'lavapipe':>9}")
failed = 0
blocked = 0
for r in fer:
    l = lvp.get((r["name"], r["mode"]), {})
    res = "pass" if r["pass"] else ("BLOCK" if r.get("blocked") else "FAIL")
    failed += not r["pass"] and not r.get("blocked")
    blocked += bool(r.get("blocked")) and not r["pass"]
    err = f"{r['err']:.2e}" if "err" in r else "-"
    t = f"{r['seconds']:.2f}s" if "seconds" in r else "-"
    tl = f"{l['seconds']:.2f}s" if "seconds" in l else "-"
    print(f"  {r['name']:<30} {r['mode']:<5} {res:<6} {err:>9} {r['tol']:>7.0e} {t:>13} {tl:>9}")
    if r.get("blocked") and not r["pass"]:
        print(f"      blocked: {r['blocked']}")
    elif "error" in r:
        print(f"      error: {r['error']}" + (f" (seed {r['seed']})" if "seed" in r else ""))
    elif not r["pass"]:
        print(f"      over tolerance (seed {r.get('seed')})")
total_f = sum(r.get("seconds", 0) for r in fer)
total_l = sum(r.get("seconds", 0) for r in lvp.values())
print(f"  {len(fer) - failed - blocked} passed, {failed} failed, {blocked} blocked; Vulkan time {total_f:.1f}s on Ferrite's simulator"
      + (f", {total_l:.1f}s on lavapipe" if lvp else ""))
sys.exit(1 if failed else 0)
