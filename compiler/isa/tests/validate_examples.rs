//! The validator on assembly text: the examples and the packed-HF code a compiler
//! emits, parsed by the assembler (an independent path from the model constructors used
//! by the unit tests).

use ferrite_isa::asm::parse_program;
use ferrite_isa::validate::{report, validate_program_at, Platform};
use ferrite_isa::Gen;

/// Rule ids violated by the one-instruction program `text` on `platform`.
fn violations(text: &str, platform: Platform) -> Vec<&'static str> {
    let prog = parse_program(text, Gen::Gen9).unwrap_or_else(|e| panic!("{text}: {e}"));
    let insts: Vec<_> = prog.iter().map(|p| p.inst).collect();
    let offsets: Vec<usize> = (0..insts.len()).map(|i| i * 16).collect();
    let v = validate_program_at(&insts, &offsets, insts.len() * 16, platform);
    eprintln!("{text}\n{}", report(&v));
    v.iter().map(|v| v.rule.id).collect()
}

fn valid(text: &str) {
    let v = violations(text, Platform::Skl);
    assert!(v.is_empty(), "{text}: {v:?}");
}

fn invalid(text: &str, rule: &str) {
    let v = violations(text, Platform::Skl);
    assert!(v.contains(&rule), "{text}: expected {rule}, got {v:?}");
}

#[test]
fn hf_to_byte_with_dword_destination_stride_is_valid() {
    // Integer <-> HF conversion: "DWord-aligned and strided by a DWord on the destination":
    // B with stride 4 is one DWord per channel; the source rows stay inside one GRF each.
    valid("mov(16) g9<4>B g3<16,8,2>HF { align1 1H };");
    invalid(
        "mov(16) g9<2>B g3<16,8,2>HF { align1 1H };",
        "type.int-hf-dst-stride",
    );
    invalid(
        "mov(16) g9.1<4>B g3<16,8,2>HF { align1 1H };",
        "type.int-hf-dst-align",
    );
    invalid(
        "mov(16) g9<1>B g3<16,8,2>HF { align1 1H };",
        "type.packed-byte-dst",
    );
}

#[test]
fn packed_hf_arithmetic_is_valid() {
    valid("add(8) g10<1>HF g11<8,8,1>HF g12<8,8,1>HF { align1 1Q };");
    valid("add(16) g10<1>HF g12<16,16,1>HF g14<16,16,1>HF { align1 1H };");
    valid("mul(8) g10<1>HF g12<8,8,1>HF 0x3c00HF { align1 1Q };");
    valid("mad(8) g10<1>HF g2<4,4,1>HF g4<4,4,1>HF g6<4,4,1>HF { align16 1Q };");
    valid("mov(8) g10<2>HF g12<8,8,1>F { align1 1Q };");
    valid("mov(8) g10<1>HF g12<8,8,1>F { align1 1Q };");
    valid("mov(16) g6<1>F g2<0,1,0>HF { align1 1H };");
    valid("add(8) g10<1>F g12<8,8,1>HF g14<8,8,1>F { align1 1Q };");
}

#[test]
fn mixed_float_limits_are_reported() {
    invalid(
        "mov(16) g10<1>HF g12<8,8,1>F { align1 1H };",
        "mixed.align1-packed-hf-oword",
    );
    invalid(
        "add(16) g10<1>F g12<16,16,1>HF g14<8,8,1>F { align1 1H };",
        "mixed.f-dst-simd8",
    );
    invalid(
        "mov(8) g10<4>HF g12<8,8,1>F { align1 1Q };",
        "type.to-hf-word-location",
    );
}

#[test]
fn dword_to_byte_needs_stride_4() {
    valid("mov(8) g10<4>UB g12<8,8,1>UD { align1 1Q };");
    invalid(
        "mov(8) g10<2>UB g12<8,8,1>UD { align1 1Q };",
        "type.dst-stride-exec-ratio",
    );
    invalid(
        "mov(8) g10<1>UB g12<8,8,1>UD { align1 1Q };",
        "type.packed-byte-dst",
    );
}

#[test]
fn low_power_64bit_rules_only_on_9lp() {
    let text = "mov(8) g10<1>DF g12<8,8,1>F { align1 1Q };";
    assert!(violations(text, Platform::Skl).is_empty());
    assert!(violations(text, Platform::Bxt).contains(&"lp64.stride"));
    assert!(violations(text, Platform::Glk).contains(&"lp64.stride"));
}
