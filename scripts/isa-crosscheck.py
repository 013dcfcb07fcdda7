#!/usr/bin/env python3
"""Differential test of Ferrite's Gen9 ISA layer against Mesa 22.3.6's i965_asm/i965_disasm.

Driven by scripts/isa-crosscheck (which builds the tools and generates the instructions); see
docs/isa-crosscheck.md for what is compared and every normalization applied. Python stdlib only.

usage: isa-crosscheck.py --asm I965_ASM --disasm I965_DISASM --ferrite DIR --vectors DIR BATCH_DIR...
Each BATCH_DIR holds ferrite-isa-gen's native.bin/.asm and compacted.bin/.asm.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

BRANCH_PAD = 256  # compacted nops (8 bytes) each side of a branch: covers JIP/UIP in [-2048, 2048]
ASM_PAD = 128  # native nops (16 bytes) each side of a branch in assembler input
CHUNK = 100  # instructions per i965_asm run (a rejected line costs one re-run of its chunk)
CNOP = bytes([0x7E, 0, 0, 0x20, 0, 0, 0, 0])
THREE_SRC = {"mad", "lrp", "bfe", "bfi2", "csel", "madm"}
TYPE_SIZE = {"UB": 1, "B": 1, "UW": 2, "W": 2, "HF": 2, "UD": 4, "D": 4, "F": 4,
             "UQ": 8, "Q": 8, "DF": 8}
MESA_BAD = re.compile(r"illegal|\*\*\*|invalid|not supported")


def ws(s):
    return " ".join(s.split())


def statements(text):
    """Splits assembly text into (labels defined just before, statement text) pairs.
    A statement ends at a line ending in ';' (sends span two lines)."""
    out, labels, cur = [], [], []
    for line in text.splitlines():
        s = line.strip()
        if not s and not cur:
            continue
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*):", s)
        if m and not cur:
            labels.append(m.group(1))
            continue
        cur.append(line)
        if s.endswith(";"):
            out.append((labels, "\n".join(cur)))
            labels, cur = [], []
    if cur:
        out.append((labels, "\n".join(cur)))
    return out


def opcode_of(stmt):
    m = re.match(r"\s*(?:\([^)]*\)\s+)?([a-z0-9]+)", stmt)
    return m.group(1) if m else ""


def is_branch(stmt):
    return "JIP:" in stmt


def inst_size(b, off):
    return 8 if b[off + 3] & 0x20 else 16


def split_bin(b):
    out, off = [], 0
    while off < len(b):
        n = inst_size(b, off)
        out.append(b[off:off + n])
        off += n
    return out


def hexs(b):
    return " ".join(f"{x:02x}" for x in b)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


class Ctx:
    def __init__(self, a):
        self.a = a
        self.tmp = tempfile.mkdtemp(prefix="isa-crosscheck-")
        self.counts = {}
        self.disagreements = []
        self.rejected = []
        self.mesa_text = {}  # (batch, form, index) -> (decode agreed, normalizations, i965_disasm text)

    def checked_unchecked(self, where, why):
        self.count(f"{where}: unchecked")
        self.count(f"{where}: unchecked: {why}")

    def count(self, key, n=1):
        self.counts[key] = self.counts.get(key, 0) + n

    def disagree(self, where, data, ferrite, mesa, note=""):
        self.count(f"{where}: disagree")
        self.disagreements.append((where, data, ferrite, mesa, note))

    def mesa_disasm(self, data):
        p = os.path.join(self.tmp, "in.bin")
        with open(p, "wb") as f:
            f.write(data)
        r = run([self.a.disasm, "-g", "skl", "-t", "bin", "-i", p])
        if r.returncode != 0:
            raise SystemExit(f"i965_disasm failed: {r.stderr}")
        return statements(r.stdout)

    def mesa_asm(self, text, compact):
        self.count("i965_asm runs")
        """Returns (bytes, None) or (None, failing 1-based line number)."""
        src = os.path.join(self.tmp, "in.asm")
        out = os.path.join(self.tmp, "out.bin")
        with open(src, "w") as f:
            f.write(text)
        if os.path.exists(out):
            os.unlink(out)
        cmd = [self.a.asm, "-g", "skl", "-t", "bin", "-o", out] + (["--compact"] if compact else []) + [src]
        r = run(cmd)
        self.last_stdout = ws(r.stdout)
        # Some errors (e.g. "Flag subregister number 7 out of range") are printed with exit
        # status 0 and an instruction emitted anyway: any message on stderr is a rejection.
        if r.returncode == 0 and os.path.exists(out) and not r.stderr.strip():
            with open(out, "rb") as f:
                return f.read(), None
        m = re.search(r":\s*(\d+):", r.stderr)
        return None, (int(m.group(1)) if m else -1, r.stderr.strip().splitlines()[:1])

    def ferrite_disasm(self, data):
        p = os.path.join(self.tmp, "f.bin")
        with open(p, "wb") as f:
            f.write(data)
        r = run([os.path.join(self.a.ferrite, "ferrite-disasm"), "--gen", "9", p])
        return r.stdout if r.returncode == 0 else f"<ferrite-disasm error: {r.stderr.strip()}>"

    def ferrite_asm(self, text):
        p = os.path.join(self.tmp, "f.asm")
        o = os.path.join(self.tmp, "f.out")
        with open(p, "w") as f:
            f.write(text)
        r = run([os.path.join(self.a.ferrite, "ferrite-asm"), "--gen", "9", p, "-o", o])
        if r.returncode != 0:
            return None, r.stderr.strip()
        with open(o, "rb") as f:
            return f.read(), None


# ---------------------------------------------------------------------------------------------
# Normalization (docs/isa-crosscheck.md, "Normalizations")


def labels_to_offsets(stmts, sizes):
    """Rewrites `JIP: LABELn` / `UIP: LABELn` into relative byte offsets, given each statement's
    size in bytes. Labels that name no statement stay as they are (and then disagree)."""
    pos, off = {}, 0
    offs = []
    for (labels, _), n in zip(stmts, sizes):
        for lab in labels:
            pos[lab] = off
        offs.append(off)
        off += n
    out = []
    for (_, s), o in zip(stmts, offs):
        s = re.sub(r"\b(JIP|UIP):\s+([A-Za-z_][A-Za-z0-9_]*)\b",
                   lambda m: f"{m.group(1)}: {pos[m.group(2)] - o}" if m.group(2) in pos else m.group(0), s)
        out.append(s)
    return out


def mesa_223_to_250(s):
    """Message-descriptor decode text: Mesa 22.3.6 wording -> 25.0.7 wording (Ferrite's)."""
    if re.search(r"\bdata (1 )?MsgDesc: \((?![ *])", s) and not re.search(r"MsgDesc: \(bti ", s):
        s = s.replace("MsgDesc: (", "MsgDesc: ( ", 1)
    s = re.sub(r"urb MsgDesc: offset ", "urb MsgDesc: ", s)
    s = s.replace("MsgDesc: ((null))", "MsgDesc: ()")


    def strip_names(m):
        return re.sub(r"\b(bti|msg_ctrl|msg_type|write_commit) ", "", m.group(0))
    s = re.sub(r"MsgDesc: \([^)]*\)", strip_names, s)
    return s


SRC3 = re.compile(r"^(-?)(\(abs\))?g(\d+)(?:\.(\d+))?(<[^>]*>)(\.[xyzw]+)?([A-Z]+)$")


def three_src_mesa_view(s):
    """Mesa's disassembler types every 3-src source with the shared source type (bits 45:43)
    and reads the sub-register as a DWord index: it ignores the src1/src2 HF bits (36/35) and
    the odd-word bits (84/105/126). Rewrites Ferrite's 3-src text the way Mesa would print the
    same bits. Returns (text, changed)."""
    if opcode_of(s).split(".")[0] not in THREE_SRC:
        return s, False
    head, sep, tail = s.partition("{")
    toks = head.split()
    # tokens: [pred] op dst src0 src1 src2
    idx = [i for i, t in enumerate(toks) if SRC3.match(t)]
    if len(idx) < 3:
        return s, False
    srcs = idx[-3:]
    shared = SRC3.match(toks[srcs[0]]).group(7)
    changed = False
    for i in srcs:
        m = SRC3.match(toks[i])
        neg, ab, nr, sub, reg, swz, ty = m.groups()
        sub = int(sub or 0)
        byte = sub * TYPE_SIZE.get(ty, 4)
        msub = (byte // 4 * 4) // TYPE_SIZE.get(shared, 4)
        if ty != shared or byte % 4:
            changed = True
        scalar = reg == "<0,1,0>"
        subtxt = f".{msub}" if (msub or scalar) else ""
        toks[i] = f"{neg}{ab or ''}g{nr}{subtxt}{reg}{swz or ''}{shared}"
    return " ".join(toks) + (" " + sep + tail if sep else ""), changed


def n_ia_signed(f, m):
    """Mesa 22.3.6 prints a register-indirect address immediate (10 bits) unsigned."""
    return f, re.sub(r"\[a0(\.\d+)? (\d+)\]",
                     lambda x: f"[a0{x.group(1) or ''} {int(x.group(2)) - 1024 if int(x.group(2)) >= 512 else x.group(2)}]", m)


def n_tdr(f, m):
    """Mesa prints the TDR and IP ARFs bare (`tdr0`, `ip`: no number, sub-register, region
    or type)."""
    if re.search(r"(?<![.\w])(tdr0|ip)(?=[ ;{])", m):
        f = re.sub(r"(?<![.\w])tdr\d+[^ ]*", "tdr0", f)
        f = re.sub(r"(?<![.\w])ip[.<][^ ]*", "ip", f)
    return f, m


NO_OPERANDS = r"(?:smov|call|calla|ret)"


def n_no_operands(f, m):
    """Mesa 22.3.6 prints no operands for SMOV, CALL, CALLA and RET."""
    pat = r"^((?:\([^)]*\) )?" + NO_OPERANDS + r"[.(][^ ]*) .*? (\{.*)$"
    if re.match(r"^(?:\([^)]*\) )?" + NO_OPERANDS + r"[.(][^ ]* \{", m):
        f = re.sub(pat, r"\1 \2", f)
    return f, m


def n_no_jip(f, m):
    """Mesa 22.3.6 prints no JIP/UIP for BRD, BRC and GOTO."""
    if re.match(r"^(?:\([^)]*\) )?(?:brd|brc|goto)[.(]", f) and "JIP:" not in m:
        f = re.sub(r" JIP: -?\d+( UIP: -?\d+)?", "", f)
    return f, m


def n_three_src(f, m):
    return three_src_mesa_view(f)[0], m


def n_hf_imm(f, m):
    """Mesa 22.3.6 prints every HF immediate as `Half Float IMM` (no value)."""
    if "Half Float IMM" in m:
        f = re.sub(r"0x[0-9a-f]{4}HF /\* [^*]* \*/", "Half Float IMM", f)
    return f, m


def n_goto_branch_ctrl(f, m):
    """Mesa 22.3.6 calls bit 28 of GOTO/BRD/BRC AccWrEnable (BranchCtrl for IF/ELSE only)."""
    if re.match(r"^(?:\([^)]*\) )?(?:goto|brd|brc)[.(]", f) and "AccWrEnable" in m:
        f = f.replace("BranchCtrl", "AccWrEnable")
    return f, m


def n_desc_decode(f, m):
    """Message-descriptor decode line: where Ferrite prints a message generically
    (`desc 0x...`), or Mesa finds the random descriptor invalid (`***`) or prints `(null)`,
    compare only the lengths and options (the descriptor bits are in the first line)."""
    fl, ml = f.split("\n"), m.split("\n")
    if len(fl) == 2 and len(ml) == 2 and (
        re.search(r"MsgDesc: desc 0x", fl[1]) or re.search(r"\*\*\*|\(null\)", ml[1])
    ):
        tail = re.compile(r"^(.*?) MsgDesc:.*?\s*(?=mlen )")
        fl[1] = tail.sub(r"\1 MsgDesc: ... ", fl[1])
        ml[1] = tail.sub(r"\1 MsgDesc: ... ", ml[1])
    return "\n".join(fl), "\n".join(ml)


def n_self_target(f, m):
    """A JIP/UIP of 8 on a native branch points inside the branch itself: no label line."""
    for fld in ("JIP", "UIP"):
        if re.search(fld + r": 8\b", f):
            m = re.sub(fld + r": LABEL\d+", fld + ": 8", m)
    return f, m


def n_far_target(f, m):
    """Targets beyond the padding (only the `compact` kind's random offsets reach them) get a
    label Mesa never prints: such an offset cannot be checked through the text."""
    for fld in ("JIP", "UIP"):
        x = re.search(fld + r": (-?\d+)", f)
        if x and (int(x.group(1)) % 8 or not -BRANCH_PAD * 8 <= int(x.group(1)) <= BRANCH_PAD * 8):
            m = re.sub(fld + r": LABEL\d+", f"{fld}: {x.group(1)}", m)
    return f, m


def n_nop(f, m):
    """Mesa prints a NOP's modifiers but no exec size, operands or options."""
    if re.match(r"^(?:\([^)]*\) )?nop\S* ;$", m):
        f = re.sub(r"^((?:\([^)]*\) )?nop[^ (]*).*$", r"\1 ;", f)
    return f, m


def n_group(f, m):
    """Mesa prints the channel group of a SIMD16 instruction as 1H (quarter 0/1) or 2H (2/3)
    and none for SIMD32; Ferrite's text keeps the other quarters (`2Q`, `4Q`, ...)."""
    x = re.match(r"^(?:\([^)]*\) )?[a-z0-9.]+(?: [a-z0-9]+)?\((16|32)\)", f)
    if not x:
        return f, m
    head, sep, tail = f.rpartition("{")
    if x.group(1) == "16":
        tail = re.sub(r"(?<= )([1-4])Q\b", lambda q: "1H" if q.group(1) in "12" else "2H", tail)
    else:
        tail = re.sub(r" [1-4][QH]\b", "", tail)
    return head + sep + tail, m


OWORDS = ["1-low", "1-high", "2", "4", "8"]


def n_oword(f, m):
    """OWORD block messages: 22.3.6 prints `owords = <table[ctrl & 7]>, aligned = <(ctrl >> 3) & 3>`,
    25.0.7 (and Ferrite) the raw 6-bit message control. Equal when the raw value gives both."""
    fx = re.search(r"OWORD block (?:read|write), \d+, (\d+)\)", f)
    mx = re.search(r"(OWORD block (?:read|write), \d+, )owords = ([^,]*), aligned = (\d+)\)", m)
    if fx and mx:
        v = int(fx.group(1))
        if (v & 7) < len(OWORDS) and OWORDS[v & 7] == mx.group(2) and (v >> 3) & 3 == int(mx.group(3)):
            m = m[:mx.start()] + mx.group(1) + f"{v})" + m[mx.end():]
    return f, m


# Applied in order; an instruction agrees when the texts are equal after the normalizations,
# and is counted under the names of those that changed something.
NORMALIZATIONS = [
    ("indirect immediate printed unsigned", n_ia_signed),
    ("branch target inside the branch", n_self_target),
    ("branch target outside the padding or not 8-aligned (unchecked)", n_far_target),
    ("NOP printed without operands", n_nop),
    ("SIMD16/32 quarter printed as 1H/2H/none", n_group),
    ("OWORD block size decoded (22.3.6) vs raw (25.0.7)", n_oword),
    ("bare tdr0/ip", n_tdr),
    ("no operands printed for smov/call/calla/ret", n_no_operands),
    ("no JIP/UIP printed for brd/brc/goto", n_no_jip),
    ("Mesa ignores 3-src HF/odd-word bits", n_three_src),
    ("HF immediate printed as `Half Float IMM`", n_hf_imm),
    ("GOTO/BRD/BRC BranchCtrl printed as AccWrEnable", n_goto_branch_ctrl),
    ("descriptor decode: generic in Ferrite or invalid in Mesa", n_desc_decode),
]


def compare_text(ctx, where, data, ftext, mtext):
    """Compares one instruction's Ferrite and Mesa text after the documented normalizations."""
    f = "\n".join(ws(x) for x in ftext.split("\n"))
    m = "\n".join(ws(mesa_223_to_250(x)) for x in mtext.split("\n"))
    if MESA_BAD.search(mtext):
        ctx.count(f"{where}: Mesa prints illegal/invalid")
    used = []
    for name, fn in NORMALIZATIONS:
        if f == m:
            break
        f2, m2 = fn(f, m)
        if (f2, m2) != (f, m):
            used.append(name)
            f, m = f2, m2
    if f == m:
        ctx.count(f"{where}: agree" + (f" (normalized: {', '.join(used)})" if used else ""))
        return True, used
    ctx.disagree(where, data, ftext, mtext)
    return False, used


# ---------------------------------------------------------------------------------------------
# Direction 1: Ferrite bytes -> i965_disasm text == Ferrite text


def decode_direction(ctx, batch, form):
    with open(os.path.join(batch, f"{form}.bin"), "rb") as f:
        insts = split_bin(f.read())
    with open(os.path.join(batch, f"{form}.asm")) as f:
        ftexts = [s for _, s in statements(f.read())]
    assert len(insts) == len(ftexts), (batch, form, len(insts), len(ftexts))
    data, sizes, test_at = bytearray(), [], []
    for k, (b, t) in enumerate(zip(insts, ftexts)):
        pad = is_branch(t)
        if pad:
            data += CNOP * BRANCH_PAD
            sizes += [8] * BRANCH_PAD
        test_at.append(len(sizes))
        data += b
        sizes.append(len(b))
        if pad:
            data += CNOP * BRANCH_PAD
            sizes += [8] * BRANCH_PAD
    mst = ctx.mesa_disasm(bytes(data))
    if len(mst) != len(sizes):
        raise SystemExit(f"i965_disasm printed {len(mst)} statements for {len(sizes)} instructions")
    mtexts = labels_to_offsets(mst, sizes)
    where = f"decode {form}"
    for k, (b, t) in enumerate(zip(insts, ftexts)):
        ctx.count(f"{where}: checked")
        if len(b) == 8:
            ctx.count(f"{where}: compacted instructions")
        ok, used = compare_text(ctx, where, b, t, mtexts[test_at[k]])
        ctx.mesa_text[(batch, form, k)] = (ok, used, mtexts[test_at[k]])


# ---------------------------------------------------------------------------------------------
# Direction 2: Ferrite text -> i965_asm bytes == Ferrite bytes


def branch_chunk(k, text):
    """Native-nop padded program around one branch, its offsets turned into labels.
    Returns (lines, index of the branch among the chunk's instructions) or None when an
    offset is not a multiple of 16 (labels only name native-instruction boundaries)."""
    offs = {}
    for fld in ("JIP", "UIP"):
        m = re.search(fld + r":\s*(-?\d+)", text)
        if m:
            v = int(m.group(1))
            if v % 16 or not -ASM_PAD * 16 <= v <= ASM_PAD * 16:
                return None
            offs[fld] = v // 16
    lines = []
    for p in range(-ASM_PAD, ASM_PAD + 1):
        if p in offs.values():
            lines.append(f"L{k}at{p + ASM_PAD}:")
        if p == 0:
            t = text
            for fld, v in offs.items():
                t = re.sub(fld + r":\s*-?\d+", f"{fld}: L{k}at{v + ASM_PAD}", t)
            lines.append(ws(t))
        else:
            lines.append("nop;")
    return lines, ASM_PAD


def asm_entries(ctx, where, texts, compact):
    """Assembles each text (one instruction; branches with numeric JIP/UIP) with i965_asm, many
    per run. Returns {key: bytes}; keys whose text i965_asm rejects are counted and left out."""
    entries = []
    for k, t in texts.items():
        t = t.replace(" compacted", "")
        if is_branch(t):
            c = branch_chunk(k, t)
            if c is None:
                ctx.count(f"{where}: skipped (branch offset not a multiple of 16: no label can name it)")
                continue
            lines, at = c
            entries.append((k, lines, 2 * ASM_PAD + 1, at))
        else:
            # A send's descriptor decode line is commentary to i965_asm. Spaces collapsed
            # (trap: the lexer echoes extra whitespace after labels).
            entries.append((k, [ws(x) for x in t.split("\n")], 1, 0))

    def reject(e, why):
        ctx.count(f"{where}: rejected by i965_asm")
        ctx.count(f"{where}: rejected: {re.sub(r'[0-9]+', 'N', why)}")
        ctx.rejected.append((where, texts[e[0]], why))

    def one(e):
        out, err = ctx.mesa_asm("".join(l + "\n" for l in e[1]), compact)
        parts = split_bin(out) if out is not None else []
        if len(parts) == e[2]:
            return parts, None
        return None, (err[1][0] if err and err[1] else ctx.last_stdout or "no output").split(":", 2)[-1].strip()

    result = {}
    for c0 in range(0, len(entries), CHUNK):
        chunk = entries[c0:c0 + CHUNK]
        got = []
        while chunk:
            text = "".join(l + "\n" for e in chunk for l in e[1])
            out, err = ctx.mesa_asm(text, compact)
            if out is not None:
                got = split_bin(out)
                if len(got) == sum(e[2] for e in chunk):
                    break
                # i965_asm drops some statements silently (exit 0, "Unsupported binary
                # opcode" on stdout): find them by bisection.
                keep, got = [], []

                def bisect(es):
                    if len(es) == 1:
                        parts, why = one(es[0])
                        if parts is None:
                            reject(es[0], why)
                        else:
                            keep.append(es[0])
                            got.extend(parts)
                        return
                    out, _ = ctx.mesa_asm("".join(l + "\n" for e in es for l in e[1]), compact)
                    parts = split_bin(out) if out is not None else []
                    if len(parts) == sum(e[2] for e in es):
                        keep.extend(es)
                        got.extend(parts)
                    else:
                        bisect(es[:len(es) // 2])
                        bisect(es[len(es) // 2:])
                bisect(chunk)
                chunk = keep
                break
            line, msg = err
            ln, at = 0, None
            for j, e in enumerate(chunk):
                ln += len(e[1])
                if line <= ln:
                    at = j
                    break
            if at is None:
                raise SystemExit(f"i965_asm failed outside any instruction: {msg}")
            # The parser may notice an error a statement or two later (at the next token,
            # or a range check when the statement is complete): find the culprit nearby.
            order = [at, at - 1, at + 1, at - 2, at + 2] + list(range(len(chunk)))
            bad = None
            for n, j in enumerate(order):
                if n == 5:
                    ctx.count("i965_asm error attribution: full scan")
                if 0 <= j < len(chunk):
                    parts, why = one(chunk[j])
                    if parts is None:
                        bad = j
                        break
            if bad is None:
                raise SystemExit(f"i965_asm: cannot attribute error {msg}")

            reject(chunk[bad], why)
            chunk = chunk[:bad] + chunk[bad + 1:]
        i = 0
        for k, _, n, at in chunk:
            result[k] = got[i + at]
            i += n
    return result


def assemble_direction(ctx, batch, form):
    """Ferrite's text through i965_asm must give Ferrite's bytes. Where it does not, Mesa's own
    disassembly of Ferrite's bytes (which matched Ferrite's text in the decode step) is assembled
    too: if i965_asm turns it into the same wrong bytes, i965_asm does not reproduce what
    i965_disasm decoded -- Mesa's own round trip fails on that instruction, so the difference is
    Mesa's, and it is counted by the bits that differ (docs/isa-crosscheck.md)."""
    compact = form == "compacted"
    with open(os.path.join(batch, f"{form}.bin"), "rb") as f:
        insts = split_bin(f.read())
    with open(os.path.join(batch, f"{form}.asm")) as f:
        ftexts = [s for _, s in statements(f.read())]
    where = f"assemble {form}"
    texts = {}
    for k, t in enumerate(ftexts):
        if compact and is_branch(t):
            ctx.count(f"{where}: skipped (branch; compaction moves its targets)")
            continue
        texts[k] = t
    got = asm_entries(ctx, where, texts, compact)
    mism = {}
    for k, mb in got.items():
        ctx.count(f"{where}: checked")
        if mb == insts[k]:
            ctx.count(f"{where}: agree (byte-equal)")
        else:
            mism[k] = mb
    # Mesa's round trip on the mismatches.
    mtexts = {k: ctx.mesa_text[(batch, form, k)][2] for k in mism if (batch, form, k) in ctx.mesa_text}
    again = asm_entries(ctx, f"{where} (Mesa's own text)", mtexts, compact) if mtexts else {}
    for k, mb in sorted(mism.items()):
        fb = insts[k]
        ok, used, _ = ctx.mesa_text.get((batch, form, k), (False, [], None))
        op = opcode_of(ftexts[k]).split(".")[0]
        # What Mesa cannot express at all (its disassembler prints neither these bits nor these
        # values, and its assembler cannot encode them) is not checked by this direction.
        if ok and NOT_EXPRESSIBLE.intersection(used):
            ctx.checked_unchecked(where, "not expressible in Mesa: " + ", ".join(sorted(NOT_EXPRESSIBLE.intersection(used))))
            continue
        if again.get(k) == mb:
            if ok:
                ctx.count(f"{where}: agree (Mesa's own round trip fails the same way)")
                cls = ("3-src" if op in THREE_SRC else "send" if op.startswith("send")
                       else "branch" if is_branch(ftexts[k]) else "other")
                ctx.count(f"{where}: Mesa round-trip loss: {cls}: {diff_fields(fb, mb, op)}")
            else:
                ctx.checked_unchecked(where, "decode step already reports it (Mesa's round trip fails the same way)")
            continue
        note = ""
        if compact and len(mb) != len(fb):
            note = "Mesa compacted, Ferrite did not" if len(mb) == 8 else "Ferrite compacted, Mesa did not"
        ctx.disagree(where, fb, ftexts[k],
                     f"i965_asm: {hexs(mb)}\nFerrite decodes that as: {ws(ctx.ferrite_disasm(mb))}", note)


NOT_EXPRESSIBLE = {"Mesa ignores 3-src HF/odd-word bits", "HF immediate printed as `Half Float IMM`",
                   "bare tdr0/ip", "SIMD16/32 quarter printed as 1H/2H/none"}

# Gen9 native field names by bit (PRM / docs/gen9.md), for the round-trip-loss summary only.
FIELDS_COMMON = [(0, 6, "opcode"), (8, 8, "access mode"), (9, 10, "dep ctrl"), (11, 11, "nib ctrl"),
                 (12, 13, "qtr ctrl"), (14, 15, "thread ctrl"), (16, 19, "pred ctrl"), (20, 20, "pred inv"),
                 (21, 23, "exec size"), (24, 27, "cond mod"), (28, 28, "acc wr/branch ctrl"),
                 (29, 29, "CmptCtrl"), (30, 30, "debug"), (31, 31, "saturate"), (32, 33, "flag reg")]
FIELDS_2SRC = [(34, 34, "mask ctrl"), (35, 36, "dst file"), (37, 40, "dst type"), (41, 42, "src0 file"),
               (43, 46, "src0 type"), (47, 47, "dst addr imm[9]"), (48, 52, "dst subreg/addr"),
               (53, 60, "dst reg"), (61, 62, "dst hstride"), (63, 63, "dst addr mode"),
               (64, 68, "src0 subreg"), (69, 76, "src0 reg"), (77, 78, "src0 abs/neg"),
               (79, 79, "src0 addr mode"), (80, 84, "src0 width/hstride"), (85, 88, "src0 vstride"),
               (89, 90, "src1 file"), (91, 94, "src1 type"), (95, 95, "src0 addr imm[9]"),
               (96, 127, "src1 or immediate")]
FIELDS_3SRC = [(34, 34, "mask ctrl"), (35, 36, "src1/src2 HF"), (37, 42, "abs/neg"), (43, 45, "src type"),
               (46, 48, "dst type"), (49, 52, "writemask"), (53, 55, "dst subreg"), (56, 63, "dst reg"),
               (64, 64, "src0 rep"), (65, 72, "src0 swizzle"), (73, 75, "src0 subreg"), (76, 83, "src0 reg"),
               (84, 84, "src0 word"), (85, 85, "src1 rep"), (86, 93, "src1 swizzle"), (94, 96, "src1 subreg"),
               (97, 104, "src1 reg"), (105, 105, "src1 word"), (106, 106, "src2 rep"),
               (107, 114, "src2 swizzle"), (115, 117, "src2 subreg"), (118, 125, "src2 reg"),
               (126, 126, "src2 word")]


def diff_fields(fb, mb, op):
    if len(fb) != len(mb):
        return "Mesa compacted" if len(mb) == 8 else "Mesa did not compact"
    if len(fb) == 8:
        return "compact bits " + ",".join(
            str(i) for i in range(64) if (int.from_bytes(fb, "little") ^ int.from_bytes(mb, "little")) >> i & 1)
    x = int.from_bytes(fb, "little") ^ int.from_bytes(mb, "little")
    table = FIELDS_COMMON + (FIELDS_3SRC if op in THREE_SRC else FIELDS_2SRC)
    names = [n for lo, hi, n in table if (x >> lo) & ((1 << (hi - lo + 1)) - 1)]
    return ", ".join(names)


# ---------------------------------------------------------------------------------------------
# Vectors: i965_asm of the Gen9 .asm files == Ferrite's assembly; Mesa-compacted vectors decode in
# Ferrite to Mesa's own text and re-encode to the same bytes.

NOPS4 = "nop;\n" * 4


def vectors(ctx, vdir):
    for name in sorted(os.listdir(vdir)):
        if not name.endswith(".asm"):
            continue
        with open(os.path.join(vdir, name)) as f:
            text = f.read()
        # 1. native: i965_asm bytes == ferrite-asm bytes.
        mb, err = ctx.mesa_asm(text + NOPS4, False)
        fb, ferr = ctx.ferrite_asm(text + NOPS4)
        where = "vectors native"
        if mb is None or fb is None:
            ctx.disagree(where, b"", f"{name}: {ferr}", f"{name}: {err}")
            continue
        for x, y in zip(split_bin(fb), split_bin(mb)):
            ctx.count(f"{where}: checked")
            if x == y:
                ctx.count(f"{where}: agree (byte-equal)")
            else:
                ctx.disagree(where, x, ws(ctx.ferrite_disasm(x)), f"i965_asm: {hexs(y)}", name)
        # 2. compacted by Mesa: Ferrite's decoding == i965_disasm's, and Ferrite re-encodes it.
        where = "vectors compacted"
        cb, err = ctx.mesa_asm(text + NOPS4, True)
        if cb is None:
            ctx.disagree(where, b"", name, str(err))
            continue
        parts = split_bin(cb)
        sizes = [len(p) for p in parts]
        ftext = ctx.ferrite_disasm(cb)
        fst = statements(ftext)
        mst = ctx.mesa_disasm(cb)
        if len(fst) != len(parts) or len(mst) != len(parts):
            ctx.disagree(where, b"", f"{name}: {len(fst)} statements", f"{len(mst)} statements")
            continue
        ftexts = labels_to_offsets(fst, sizes)
        mtexts = labels_to_offsets(mst, sizes)
        for p, ft, mt in zip(parts, ftexts, mtexts):
            ctx.count(f"{where}: checked")
            if len(p) == 8:
                ctx.count(f"{where}: compacted instructions")
            compare_text(ctx, where, p, ft, mt)
        rb, rerr = ctx.ferrite_asm(ftext)
        ctx.count("vectors compacted: files re-encoded")
        if rb == cb:
            ctx.count("vectors compacted: files re-encoded byte-equal")
        else:
            ctx.disagree("vectors compacted re-encode", b"", f"{name}: {rerr or 'bytes differ'}", "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--asm", required=True)
    ap.add_argument("--disasm", required=True)
    ap.add_argument("--ferrite", required=True)
    ap.add_argument("--vectors")
    ap.add_argument("--show", type=int, default=20)
    ap.add_argument("batches", nargs="*")
    a = ap.parse_args()
    ctx = Ctx(a)
    for b in a.batches:
        for form in ("native", "compacted"):
            decode_direction(ctx, b, form)
            assemble_direction(ctx, b, form)
    if a.vectors:
        vectors(ctx, a.vectors)
    checked = sum(v for k, v in ctx.counts.items() if k.endswith(": checked"))
    unchecked = sum(v for k, v in ctx.counts.items() if k.endswith(": unchecked"))
    dis = len(ctx.disagreements)
    print("isa-crosscheck summary (counters; `rejected:` and `round-trip loss:` lists show the 12 most frequent)")
    groups = {}
    for k, v in ctx.counts.items():
        g = re.sub(r": (rejected|Mesa round-trip loss): .*", r": \1: ...", k)
        groups.setdefault(g, []).append((v, k))
    for g in sorted(groups):
        items = sorted(groups[g], reverse=True)
        if g.endswith(": ..."):
            for v, k in items[:12]:
                print(f"  {k}: {v}")
            if len(items) > 12:
                print(f"  {g[:-5]} ({len(items) - 12} more kinds, {sum(v for v, _ in items[12:])} instructions)")
        else:
            for v, k in items:
                print(f"  {k}: {v}")
    print(f"checked {checked}, agree {checked - dis - unchecked}, disagree {dis}, "
          f"unchecked {unchecked}")
    for where, data, f, m, note in ctx.disagreements[:a.show]:
        print(f"--- {where}{' (' + note + ')' if note else ''}")
        if data:
            print(f"  bytes:   {hexs(data)}")
        print("  Ferrite: " + "\n           ".join(ws(x) for x in f.split("\n")))
        print("  Mesa:    " + "\n           ".join(ws(x) for x in m.split("\n")))
    subprocess.run(["rm", "-rf", ctx.tmp])
    return 1 if dis else 0


if __name__ == "__main__":
    sys.exit(main())
