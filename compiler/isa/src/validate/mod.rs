//! The PRM validator: checks instructions of the [`crate::model`] against the rules of the
//! Programmer's Reference Manual (BDW/CHV/SKL/BXT/GLK "3D-Media-GPGPU" volume, "Register
//! Region Restrictions", "Special Restrictions for Handling Mixed Mode Float Operations",
//! instruction pages) and reports every violation with the instruction index, the rule and
//! its quote.
//!
//! Rules are entries of one table ([`rules()`], defined in `table.rs`): an id, a
//! [`Category`], the [`Platforms`] it applies to, the PRM section and sentence, and a check
//! function. The list follows docs/gen9.md section 8 (first read from Mesa's
//! `brw_eu_validate.c`, whose comments quote the PRM); the code is our own. Where the PRM
//! wording is ambiguous the rule is not enforced; see [`AMBIGUITIES`].
//!
//! Use: `validate_program(&insts, Gen::Gen9)` on the instructions handed to
//! [`crate::encode_program`] (same branch-offset convention), or [`validate_program_at`]
//! on a decoded binary (real byte offsets); print with [`report`]. Each [`Violation`]
//! displays the instruction, the rule id, the PRM section and sentence, and the detail.
//!
//! Cost: one [`ctx::Ctx`] per instruction (a few dozen bytes, no allocation) and one cheap
//! predicate per applicable rule; allocation only when a rule fails.

mod branch;
mod ctx;
mod insn;
mod mixed;
mod qword;
mod region;
mod send;
mod table;
#[cfg(test)]
mod testutil;
mod types;

pub use table::AMBIGUITIES;

use crate::model::*;
use ctx::{Ctx, ProgPos};
use std::fmt;

/// A hardware platform. Rules differ between the big-core and the low-power parts of a
/// generation: CHV (Gen8 LP) and BXT/GLK ("9LP") carry extra 64-bit restrictions, CHV and
/// Gen9 share the mixed-float rules BDW does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Platform {
    /// Broadwell (Gen8).
    Bdw,
    /// Cherryview / Braswell (Gen8 LP).
    Chv,
    /// Skylake, and the ISA-identical Kaby Lake / Coffee Lake / Whiskey Lake / Comet Lake.
    Skl,
    /// Broxton / Apollo Lake (Gen9 LP).
    Bxt,
    /// Gemini Lake (Gen9 LP).
    Glk,
}

impl Platform {
    pub const ALL: [Platform; 5] = [
        Platform::Bdw,
        Platform::Chv,
        Platform::Skl,
        Platform::Bxt,
        Platform::Glk,
    ];

    pub fn gen(self) -> Gen {
        match self {
            Platform::Bdw | Platform::Chv => Gen::Gen8,
            Platform::Skl | Platform::Bxt | Platform::Glk => Gen::Gen9,
        }
    }

    /// Low-power parts (CHV, BXT, GLK).
    pub fn is_low_power(self) -> bool {
        matches!(self, Platform::Chv | Platform::Bxt | Platform::Glk)
    }

    pub fn name(self) -> &'static str {
        match self {
            Platform::Bdw => "bdw",
            Platform::Chv => "chv",
            Platform::Skl => "skl",
            Platform::Bxt => "bxt",
            Platform::Glk => "glk",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

impl From<Gen> for Platform {
    /// The big-core part of a generation: Gen8 -> BDW, Gen9 -> SKL.
    fn from(g: Gen) -> Platform {
        match g {
            Gen::Gen8 => Platform::Bdw,
            Gen::Gen9 => Platform::Skl,
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of platforms a rule applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Platforms(u8);

impl Platforms {
    const fn of(bits: u8) -> Platforms {
        Platforms(bits)
    }
    /// Every platform.
    pub const ALL: Platforms = Platforms::of(0b11111);
    /// BDW and CHV.
    pub const GEN8: Platforms = Platforms::of(0b00011);
    /// SKL, BXT, GLK.
    pub const GEN9: Platforms = Platforms::of(0b11100);
    /// CHV and every Gen9 part (mixed-float mode).
    pub const CHV_GEN9: Platforms = Platforms::of(0b11110);
    /// CHV, BXT, GLK (the low-power 64-bit restrictions).
    pub const LOW_POWER: Platforms = Platforms::of(0b11010);

    pub fn contains(self, p: Platform) -> bool {
        self.0 & p.bit() != 0
    }
}

impl fmt::Display for Platforms {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let names: Vec<&str> = Platform::ALL
            .iter()
            .filter(|p| self.contains(**p))
            .map(|p| p.name())
            .collect();
        f.write_str(&names.join(","))
    }
}

/// Rule families, in the PRM's own grouping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Opcode availability and encoding mode.
    Encoding,
    /// "General Restrictions on Regioning Parameters" and "Region Alignment Rules".
    Region,
    /// "General Restrictions Based on Operand Types" (conversions, dst stride vs
    /// execution type, byte destinations).
    OperandType,
    /// Immediate vectors (V, UV, VF).
    VectorImm,
    /// "Special Restrictions for Handling Mixed Mode Float Operations" (CHV, SKL+).
    MixedFloat,
    /// "Special Requirements for Handling Double Precision Data Types" and the
    /// low-power 64-bit rules.
    QWord,
    /// Three-source instructions.
    ThreeSrc,
    /// Instruction pages: CMP, SEL, MUL, MATH, logic ops, BFI2, CSEL.
    Instruction,
    /// SEND / SENDC / SENDS / SENDSC.
    Send,
    /// Branch targets (JIP/UIP).
    Branch,
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The check of a rule: `Some(detail)` when the instruction violates it.
pub(crate) type Check = fn(&Ctx) -> Option<String>;

/// One PRM rule.
pub struct Rule {
    /// Stable identifier (`region.width-le-exec`), used in reports and tests.
    pub id: &'static str,
    pub category: Category,
    pub platforms: Platforms,
    /// Where the rule is stated (PRM volume / section or instruction page).
    pub section: &'static str,
    /// The rule's sentence. PRM wording where [`Rule::verbatim`], else our summary of it.
    pub quote: &'static str,
    /// `quote` is the PRM's sentence (as quoted in Mesa's validator comments or in the Gen9
    /// facts the project started from, now docs/gen9.md), not a paraphrase.
    pub verbatim: bool,
    pub(crate) check: Check,
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.debug_struct("Rule")
            .field("id", &self.id)
            .field("category", &self.category)
            .field("platforms", &self.platforms)
            .finish()
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let (open, close) = if self.verbatim {
            ("\"", "\"")
        } else {
            ("(", ")")
        };
        write!(
            f,
            "[{}] {}: {open}{}{close}",
            self.id, self.section, self.quote
        )
    }
}

/// One violated rule.
#[derive(Clone, Debug)]
pub struct Violation {
    /// Index of the instruction in the validated slice.
    pub index: usize,
    /// The instruction itself (for printing).
    pub inst: Instruction,
    pub rule: &'static Rule,
    /// What exactly is wrong (operand, values).
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "instruction {}: {}\n    {} ({})\n    {}",
            self.index, self.inst, self.rule, self.detail, self.rule.platforms
        )
    }
}

/// Every rule, in table order.
pub fn rules() -> &'static [Rule] {
    table::RULES
}

/// Looks a rule up by id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    table::RULES.iter().find(|r| r.id == id)
}

/// The execution data type of an instruction with destination type `dst` and source types
/// `src0` and (two-source instructions) `src1` (docs/gen9.md 8.1):
///
/// * per operand, bytes execute as words (B/UB/V/UV -> W; W/UW -> W), D/UD -> D,
///   Q/UQ -> Q, VF -> F, F/HF/DF unchanged;
/// * one source: that class, except that an HF source executes in the destination type
///   (an HF -> F conversion executes as F, HF -> D as D, HF -> HF as HF);
/// * two sources: F and HF mixed anywhere among dst and sources (mixed-float mode) -> F;
///   equal classes -> that class; otherwise Q, then D, then W, then DF.
///
/// 3-source instructions use src0 and src1 (their sources share a type on Gen9).
pub fn execution_type(dst: Type, src0: Type, src1: Option<Type>) -> Type {
    fn class(t: Type) -> Type {
        match t {
            Type::DF | Type::F | Type::HF => t,
            Type::VF => Type::F,
            Type::Q | Type::UQ => Type::Q,
            Type::D | Type::UD => Type::D,
            Type::W | Type::UW | Type::B | Type::UB | Type::V | Type::UV => Type::W,
        }
    }
    let mixed = |a: Type, b: Type| matches!((a, b), (Type::F, Type::HF) | (Type::HF, Type::F));
    let s0 = class(src0);
    let Some(src1) = src1 else {
        return if s0 == Type::HF { dst } else { s0 };
    };
    let s1 = class(src1);
    if mixed(s0, s1) || mixed(s0, dst) || mixed(s1, dst) {
        return Type::F;
    }
    if s0 == s1 {
        return s0;
    }
    for t in [Type::Q, Type::D, Type::W] {
        if s0 == t || s1 == t {
            return t;
        }
    }
    Type::DF
}

fn run(ctx: &Ctx, index: usize, out: &mut Vec<Violation>) {
    for r in table::RULES {
        if !r.platforms.contains(ctx.platform) {
            continue;
        }
        if let Some(detail) = (r.check)(ctx) {
            out.push(Violation {
                index,
                inst: *ctx.inst,
                rule: r,
                detail,
            });
        }
    }
}

/// Checks one instruction on its own (branch targets only for alignment: a lone
/// instruction has no program to land in). `index` is reported in the violations.
pub fn validate_instruction(
    inst: &Instruction,
    index: usize,
    platform: impl Into<Platform>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    run(&Ctx::new(inst, platform.into(), None), index, &mut out);
    out
}

/// Checks a program given in the *native layout* convention of
/// [`crate::encode_program`]: instruction `i` is at byte `16 * i` and JIP/UIP are byte
/// distances in that layout.
pub fn validate_program(insts: &[Instruction], platform: impl Into<Platform>) -> Vec<Violation> {
    let offsets: Vec<usize> = (0..insts.len()).map(|i| i * 16).collect();
    validate_program_at(insts, &offsets, insts.len() * 16, platform)
}

/// Checks a program whose instructions sit at the given byte `offsets` (ascending; e.g.
/// a decoded, partly compacted binary) in a program of `size` bytes. JIP/UIP are real byte
/// distances from each branch.
///
/// # Panics
/// If `offsets.len() != insts.len()`.
pub fn validate_program_at(
    insts: &[Instruction],
    offsets: &[usize],
    size: usize,
    platform: impl Into<Platform>,
) -> Vec<Violation> {
    assert_eq!(insts.len(), offsets.len(), "one offset per instruction");
    let platform = platform.into();
    let mut out = Vec::new();
    for (i, inst) in insts.iter().enumerate() {
        let pos = ProgPos {
            offset: offsets[i],
            offsets,
            end: size,
        };
        run(&Ctx::new(inst, platform, Some(pos)), i, &mut out);
    }
    out
}

/// Formats violations one per paragraph (for logs and `--validate`).
pub fn report(violations: &[Violation]) -> String {
    let mut s = String::new();
    for v in violations {
        s.push_str(&v.to_string());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn rule_ids_are_unique_and_quoted() {
        let mut seen = HashSet::new();
        for r in rules() {
            assert!(seen.insert(r.id), "duplicate rule id {}", r.id);
            assert!(!r.quote.is_empty() && !r.section.is_empty(), "{}", r.id);
            assert!(r.platforms.0 != 0, "{} applies nowhere", r.id);
        }
    }

    #[test]
    fn every_rule_has_a_passing_and_a_failing_case() {
        let cases = testutil::all_cases();
        for r in rules() {
            let n = cases.iter().filter(|c| c.rule == r.id).count();
            assert!(n > 0, "rule {} has no test case", r.id);
        }
        for c in &cases {
            assert!(rule(c.rule).is_some(), "case for unknown rule {}", c.rule);
        }
    }

    #[test]
    fn all_rule_cases() {
        let mut failures = Vec::new();
        let cases = testutil::all_cases();
        let pass: usize = cases.iter().map(|c| c.pass.len()).sum();
        let fail: usize = cases.iter().map(|c| c.fail.len()).sum();
        eprintln!(
            "{} cases: {pass} passing and {fail} failing programs",
            cases.len()
        );
        for c in cases {
            if let Err(e) = c.check() {
                failures.push(e);
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }

    #[test]
    fn execution_type_follows_the_table() {
        use Type::*;
        assert_eq!(execution_type(F, HF, None), F);
        assert_eq!(execution_type(B, HF, None), B);
        assert_eq!(execution_type(HF, HF, Some(HF)), HF);
        assert_eq!(execution_type(HF, F, None), F);
        assert_eq!(execution_type(HF, HF, Some(F)), F);
        assert_eq!(execution_type(F, HF, Some(HF)), F);
        assert_eq!(execution_type(B, UB, None), W);
        assert_eq!(execution_type(D, UW, Some(D)), D);
        assert_eq!(execution_type(UD, UV, None), W);
        assert_eq!(execution_type(F, VF, None), F);
        assert_eq!(execution_type(Q, D, Some(Q)), Q);
        assert_eq!(execution_type(DF, DF, Some(DF)), DF);
        assert_eq!(execution_type(DF, F, None), F);
        assert_eq!(execution_type(D, W, Some(B)), W);
    }

    #[test]
    fn violation_display_names_instruction_rule_and_quote() {
        let i = testutil::mov(
            8,
            testutil::d(10, 0, Type::UB, 1),
            testutil::s(12, 0, Type::UD, 8, 8, 1),
        );
        let v = validate_instruction(&i, 7, Gen::Gen9);
        let v = v
            .iter()
            .find(|v| v.rule.id == "type.packed-byte-dst")
            .expect("packed byte dst violation");
        let text = v.to_string();
        assert!(text.starts_with("instruction 7: mov(8)"), "{text}");
        assert!(text.contains("[type.packed-byte-dst]"), "{text}");
        assert!(text.contains(v.rule.quote), "{text}");
    }

    #[test]
    fn gen_maps_to_big_core_platform() {
        assert_eq!(Platform::from(Gen::Gen9), Platform::Skl);
        assert_eq!(Platform::from(Gen::Gen8), Platform::Bdw);
        assert!(Platforms::LOW_POWER.contains(Platform::Glk));
        assert!(!Platforms::LOW_POWER.contains(Platform::Skl));
        assert!(Platforms::CHV_GEN9.contains(Platform::Chv));
        assert!(!Platforms::CHV_GEN9.contains(Platform::Bdw));
    }
}
