"""ncnn networks in ncnn's own param format with generated weights, run through ncnn's Vulkan
back end on whatever device the loader picks (VK_DRIVER_FILES), compared with ncnn's CPU path.

Usage: python ncnn_nets.py OUT.json [--quick] [--fp32 | --fp16] [--only NAME[,NAME...]]
Writes one record per (network, mode): name, mode, pass, err (max |gpu - cpu| / max |cpu|),
tol, seconds (Vulkan run, pipeline creation included) and the device name.
Modes: fp32 (ncnn's fp16/bf16 storage and arithmetic off) and fp16 (fp16 packed, storage and
arithmetic on where the device has them). Seeds are fixed; a failure prints them.
"""
import json
import struct
import sys
import time

import ncnn
import numpy as np

SEED = 20261126
# Tolerances on max |gpu - cpu| / max |cpu|: fp32 differs from the CPU only by summation
# order and by the shaders' exp/tanh/erf approximations; fp16 stores every blob in binary16
# (2^-11 relative) and, with fp16 arithmetic, accumulates in it.
TOL = {"fp32": 1e-3, "fp16": 3e-2}


class Net:
    """Builds a param text and a weight blob layer by layer."""

    def __init__(self, rng):
        self.rng = rng
        self.layers = []
        self.blobs = set()
        self.weights = bytearray()
        self.inputs = {}

    def add(self, kind, name, bottoms, tops, params=""):
        self.layers.append(f"{kind} {name} {len(bottoms)} {len(tops)} {' '.join(bottoms)} {' '.join(tops)} {params}".rstrip())
        self.blobs.update(bottoms)
        self.blobs.update(tops)

    def input(self, name, shape):
        # shape in ncnn order (c, h, w) / (h, w) / (w,)
        self.inputs[name] = self.rng.uniform(-1, 1, size=shape).astype(np.float32)
        dims = list(reversed(shape))
        p = " ".join(f"{i}={d}" for i, d in enumerate(dims))
        self.add("Input", name, [], [name], p)

    def w_tagged(self, n, scale):
        """Weights read with ncnn's type-0 loader: a zero tag, then raw float32."""
        self.weights += struct.pack("<I", 0)
        self.weights += (self.rng.uniform(-scale, scale, n).astype(np.float32)).tobytes()

    def w_raw(self, n, lo=-0.5, hi=0.5):
        self.weights += self.rng.uniform(lo, hi, n).astype(np.float32).tobytes()

    def conv(self, name, b, t, cin, cout, k, stride=1, dil=1, pad=0, group=1, act=0, deconv=False):
        wn = cout * (cin // group) * k * k
        kind = ("Deconvolution" if deconv else "Convolution") + ("DepthWise" if group > 1 else "")
        p = f"0={cout} 1={k} 2={dil} 3={stride} 4={pad} 5=1 6={wn} 9={act}"
        if group > 1:
            p += f" 7={group}"
        self.add(kind, name, [b], [t], p)
        self.w_tagged(wn, 1.0 / np.sqrt(cin // group * k * k))
        self.w_raw(cout)

    def param(self):
        return "7767517\n%d %d\n%s\n" % (len(self.layers), len(self.blobs), "\n".join(self.layers))


def nets(quick):
    """(name, builder, output blob); each builder fills a Net."""
    out = []

    def net(name):
        def deco(f):
            out.append((name, f))
            return f
        return deco

    for k, s, d, pad in [(1, 1, 1, 0), (3, 1, 1, 1), (3, 2, 1, 1), (3, 1, 2, 2), (5, 1, 1, -233), (7, 2, 1, 3), (3, 1, 1, -233), (2, 2, 1, 0)]:
        def conv(n, k=k, s=s, d=d, pad=pad):
            n.input("data", (8, 17, 15))
            n.conv("c", "data", "out", 8, 16, k, stride=s, dil=d, pad=pad)
        net(f"conv k{k} s{s} d{d} p{pad}")(conv)

    @net("conv 3->4 channels relu")
    def conv_odd(n):
        n.input("data", (3, 12, 12))
        n.conv("c", "data", "out", 3, 4, 3, pad=1, act=1)

    @net("depthwise 3x3")
    def dw(n):
        n.input("data", (16, 14, 14))
        n.conv("dw", "data", "out", 16, 16, 3, pad=1, group=16)

    @net("grouped conv g4")
    def grouped(n):
        n.input("data", (16, 10, 10))
        n.conv("g", "data", "out", 16, 16, 3, pad=1, group=4)

    @net("deconv 4x4 s2")
    def deconv(n):
        n.input("data", (8, 7, 7))
        n.conv("d", "data", "out", 8, 8, 4, stride=2, pad=1, deconv=True)

    @net("deconv depthwise 3x3 s2")
    def deconv_dw(n):
        n.input("data", (8, 6, 6))
        n.conv("d", "data", "out", 8, 8, 3, stride=2, group=8, deconv=True)

    for ptype, name in [(0, "max"), (1, "avg")]:
        def pool(n, ptype=ptype):
            n.input("data", (8, 15, 15))
            n.add("Pooling", "p", ["data"], ["out"], f"0={ptype} 1=3 2=2 3=1")
        net(f"pooling {name} 3x3 s2")(pool)

    @net("pooling global avg")
    def gpool(n):
        n.input("data", (16, 9, 9))
        n.add("Pooling", "p", ["data"], ["out"], "0=1 4=1")

    @net("inner product")
    def ip(n):
        n.input("data", (8, 6, 6))
        n.add("InnerProduct", "fc", ["data"], ["out"], f"0=20 1=1 2={20 * 288}")
        n.w_tagged(20 * 288, 1 / np.sqrt(288))
        n.w_raw(20)

    # Gemm, not MatMul: ncnn has no Vulkan MatMul, which would run on the CPU.
    @net("gemm")
    def gemm(n):
        n.input("a", (24, 32))
        n.input("b", (32, 20))
        n.add("Gemm", "mm", ["a", "b"], ["out"], "0=1.0 1=0.0 2=0 3=0")

    @net("gemm transB alpha")
    def gemm_t(n):
        n.input("a", (17, 40))
        n.input("b", (12, 40))
        n.add("Gemm", "mm", ["a", "b"], ["out"], "0=0.5 1=0.0 2=0 3=1")

    @net("softmax")
    def softmax(n):
        n.input("data", (4, 10, 16))
        n.add("Softmax", "sm", ["data"], ["out"], "0=0 1=1")

    @net("layer norm")
    def layernorm(n):
        n.input("data", (12, 32))
        n.add("LayerNorm", "ln", ["data"], ["out"], "0=32 1=0.00001 2=1")
        n.w_raw(32, 0.5, 1.5)
        n.w_raw(32)

    @net("batch norm")
    def batchnorm(n):
        n.input("data", (8, 9, 9))
        n.add("BatchNorm", "bn", ["data"], ["out"], "0=8 1=0.00001")
        n.w_raw(8, 0.5, 1.5)
        n.w_raw(8)
        n.w_raw(8, 0.5, 1.5)
        n.w_raw(8)

    for op in [0, 1, 2, 3, 4, 5]:  # add sub mul div max min
        def binop(n, op=op):
            n.input("a", (8, 9, 10))
            n.input("b", (8, 9, 10))
            if op == 3:
                n.inputs["b"] = np.where(np.abs(n.inputs["b"]) < 0.1, 0.5, n.inputs["b"]).astype(np.float32)
            n.add("BinaryOp", "bo", ["a", "b"], ["out"], f"0={op}")
        net(f"binary op {op}")(binop)

    for op in [0, 1, 4, 7, 16]:  # abs neg square exp tanh
        def unop(n, op=op):
            n.input("data", (8, 9, 10))
            n.add("UnaryOp", "uo", ["data"], ["out"], f"0={op}")
        net(f"unary op {op}")(unop)

    for act in ["ReLU", "Sigmoid", "Swish", "GELU"]:
        def actf(n, act=act):
            n.input("data", (8, 9, 10))
            n.add(act, "act", ["data"], ["out"])
        net(act.lower())(actf)

    @net("concat")
    def concat(n):
        n.input("a", (4, 9, 10))
        n.input("b", (8, 9, 10))
        n.add("Concat", "cc", ["a", "b"], ["out"], "0=0")

    @net("reshape")
    def reshape(n):
        n.input("data", (8, 6, 10))
        n.add("Reshape", "r", ["data"], ["out"], "0=20 1=12 2=2")

    @net("permute")
    def permute(n):
        n.input("data", (8, 6, 10))
        n.add("Permute", "p", ["data"], ["out"], "0=3")

    @net("padding")
    def padding(n):
        n.input("data", (8, 6, 10))
        n.add("Padding", "p", ["data"], ["out"], "0=1 1=2 2=3 3=1 4=0 5=0.25")

    for rt, name in [(1, "nearest"), (2, "bilinear")]:
        def interp(n, rt=rt):
            n.input("data", (8, 7, 9))
            n.add("Interp", "i", ["data"], ["out"], f"0={rt} 1=2.0 2=2.0")
        net(f"interp {name}")(interp)

    @net("residual net")
    def resnet(n):
        n.input("data", (3, 24, 24))
        n.conv("c1", "data", "c1", 3, 16, 3, pad=1, act=1)
        n.add("Split", "s1", ["c1"], ["c1a", "c1b"])
        n.conv("c2", "c1a", "c2", 16, 16, 3, pad=1, act=1)
        n.conv("c3", "c2", "c3", 16, 16, 3, pad=1)
        n.add("BinaryOp", "add", ["c3", "c1b"], ["sum"], "0=0")
        n.add("ReLU", "r", ["sum"], ["r"])
        n.add("Pooling", "p", ["r"], ["p"], "0=0 1=2 2=2")
        n.conv("dw", "p", "dw", 16, 16, 3, pad=1, group=16, act=1)
        n.conv("pw", "dw", "pw", 16, 32, 1, act=1)
        n.add("Pooling", "gp", ["pw"], ["gp"], "0=1 4=1")
        n.add("InnerProduct", "fc", ["gp"], ["fc"], f"0=10 1=1 2={10 * 32}")
        n.w_tagged(10 * 32, 1 / np.sqrt(32))
        n.w_raw(10)
        n.add("Softmax", "sm", ["fc"], ["out"], "0=0 1=1")

    if quick:
        keep = {"conv k3 s1 d1 p1", "depthwise 3x3", "pooling max 3x3 s2", "inner product", "residual net"}
        out = [o for o in out if o[0] in keep]
    return out


def run(n, vulkan, mode):
    net = ncnn.Net()
    net.opt.use_vulkan_compute = vulkan
    fp16 = mode == "fp16"
    net.opt.use_fp16_packed = fp16
    net.opt.use_fp16_storage = fp16
    net.opt.use_fp16_arithmetic = fp16
    net.opt.use_bf16_packed = False
    net.opt.use_bf16_storage = False
    net.load_param_mem(n.param())
    net.load_model_mem(bytes(n.weights))
    ex = net.create_extractor()
    for name, x in n.inputs.items():
        # clone(): a Mat made from a numpy array has an unaligned channel step that ncnn's
        # Vulkan upload does not expect.
        ex.input(name, ncnn.Mat(x).clone())
    ret, out = ex.extract("out")
    if ret != 0:
        raise RuntimeError(f"extract returned {ret}")
    return np.array(out).copy()


def main():
    args = sys.argv[1:]
    out_path = args[0]
    quick = "--quick" in args
    only = None
    if "--only" in args:
        only = set(args[args.index("--only") + 1].split(","))
    gpu_name = ""
    if ncnn.get_gpu_count() > 0:
        gpu_name = ncnn.get_gpu_info(0).device_name()
    records = []
    for i, (name, build) in enumerate(nets(quick)):
        if only and name not in only:
            continue
        for mode in ("fp32",) if "--fp32" in args else ("fp16",) if "--fp16" in args else ("fp32", "fp16"):
            n = Net(np.random.default_rng(SEED + i))
            build(n)
            rec = {"name": name, "mode": mode, "device": gpu_name, "tol": TOL[mode], "seed": SEED + i}
            try:
                cpu = run(n, False, mode)
                t = time.time()
                gpu = run(n, True, mode)
                rec["seconds"] = time.time() - t
                if cpu.shape != gpu.shape:
                    raise RuntimeError(f"shape {gpu.shape}, CPU {cpu.shape}")
                err = float(np.abs(cpu - gpu).max() / max(np.abs(cpu).max(), 1e-6))
                rec["err"] = err
                rec["pass"] = bool(np.isfinite(err) and err <= TOL[mode])
            except Exception as e:  # a framework error is a failed row, not a crash
                rec["pass"] = False
                rec["error"] = str(e)
            records.append(rec)
            if not rec["pass"]:
                print(f"  {name} {mode}: FAIL {rec.get('error', rec.get('err'))} (seed {SEED + i})", flush=True)
    with open(out_path, "w") as f:
        json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
