"""VkFFT transforms through vkfft_check on the loader's device, compared with numpy.fft.
Usage: vkfft_cases.py VKFFT_CHECK WORKDIR OUT.json [--quick]
Relative L2 error ||gpu - ref|| / ||ref||, the reference computed in float64 from the input
as stored (rounded to the precision). Tolerances: binary16 storage rounds every element once
more on the way out (2^-11 relative, growing slowly with the number of passes); single and
double carry log2(N) rounding steps of their epsilon."""
import json
import os
import subprocess
import sys
import time

import numpy as np

TOL = {"h": 5e-3, "s": 1e-5, "d": 1e-12}
CASES = [
    ("s", "c2c", [256]), ("s", "c2c", [1000]), ("s", "c2c", [97]), ("s", "c2c", [4096]),
    ("s", "c2c", [64, 60]), ("s", "c2c", [16, 12, 10]), ("s", "r2c", [512]), ("s", "r2c", [64, 30]),
    ("s", "c2c", [131072]), ("s", "c2c", [1031]),
    ("d", "c2c", [256]), ("d", "c2c", [1000]), ("d", "c2c", [97]), ("d", "r2c", [128, 16]),
    ("h", "c2c", [256]), ("h", "c2c", [64, 64]), ("h", "r2c", [512]),
]
QUICK = [("s", "c2c", [256]), ("s", "c2c", [97]), ("d", "c2c", [100]), ("h", "c2c", [256])]


def main():
    exe, work, out_path = sys.argv[1:4]
    cases = QUICK if "--quick" in sys.argv else CASES
    rng = np.random.default_rng(12345)
    records = []
    for prec, typ, n in cases:
        name = f"{typ} {'x'.join(map(str, n))}"
        dt = {"h": np.float16, "s": np.float32, "d": np.float64}[prec]
        shape = list(reversed(n))
        if typ == "c2c":
            x = (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape))
            buf = np.stack([x.real, x.imag], axis=-1).astype(dt)
            xs = buf[..., 0].astype(np.float64) + 1j * buf[..., 1].astype(np.float64)
            ref = np.fft.fftn(xs)
        else:
            x = rng.uniform(-1, 1, shape)
            buf = np.zeros(shape[:-1] + [2 * (n[0] // 2 + 1)], dtype=dt)
            buf[..., : n[0]] = x.astype(dt)
            ref = np.fft.rfftn(buf[..., : n[0]].astype(np.float64))
        fin, fout = os.path.join(work, "in.bin"), os.path.join(work, "out.bin")
        buf.tofile(fin)
        rec = {"name": name, "mode": {"h": "half", "s": "float", "d": "double"}[prec], "tol": TOL[prec]}
        t = time.time()
        p = subprocess.run([exe, prec, typ, *map(str, n), fin, fout], capture_output=True, text=True)
        rec["seconds"] = time.time() - t
        if p.returncode != 0:
            rec["pass"] = False
            rec["error"] = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
            if p.returncode == 4:
                # vkfft_check's verdict: the device's Vulkan version is below what VkFFT needs.
                rec["blocked"] = rec["error"]
        else:
            o = np.fromfile(fout, dtype=dt).astype(np.float64)
            o = o.reshape(ref.shape + (2,))
            got = o[..., 0] + 1j * o[..., 1]
            err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
            rec["err"] = err
            rec["pass"] = bool(np.isfinite(err) and err <= TOL[prec])
            # The validation layer prints to stdout by default.
            layer = [l for l in (p.stdout + p.stderr).splitlines() if "Validation Error" in l]
            if layer:
                rec["pass"] = False
                rec["error"] = f"validation layer: {layer[0][:160]}"
        records.append(rec)
    json.dump(records, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
