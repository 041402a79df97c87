//! AMDGPU subarchitectures in a triple's arch field (`amdgpu9.42`,
//! `amdgpu9.4`, `amdgpu12.00`): the triples LLVM main writes into bundle
//! entry IDs since llvm#206480/#206482, where the subarch carries the GPU
//! and `amdgcn` is the legacy spelling without one (spec/bundle-id.md ID-7,
//! COMPAT-4).
//!
//! A *minor* subarch names one processor (`amdgpu9.42` is gfx942); a
//! *major* one names a family, and for most families its generic processor
//! (`amdgpu9.4` is gfx9-4-generic); the majors of the oldest families
//! (`amdgpu6`, `amdgpu7`, `amdgpu8`) name no processor. The table follows
//! `llvm::Triple::parseSubArch` and `getArchName(amdgpu, SubArch)` on LLVM
//! main (llvm/lib/TargetParser/Triple.cpp), and the processor of each
//! subarch `AMDGPUSubArchToGPUKind` (llvm/lib/TargetParser/AMDGPUTargetParser.cpp).
//!
//! # Example
//!
//! ```
//! use offload_kit_format::id::subarch::Subarch;
//!
//! let gfx942 = Subarch::parse("amdgpu9.42").unwrap();
//! let generic = Subarch::parse("amdgpu9.4").unwrap();
//! assert_eq!(gfx942.processor(), Some("gfx942"));
//! assert_eq!(generic.processor(), Some("gfx9-4-generic"));
//! // Generic code runs on a GPU of its family; gfx942 code only on gfx942.
//! assert!(generic.serves(gfx942) && !gfx942.serves(generic));
//! assert_eq!(Subarch::parse("amdgpu9.5"), Some(generic)); // an alias
//! assert_eq!(Subarch::parse("amdgpufoo"), None);
//! ```

/// One subarch: its spelling, its family's major, and its processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subarch {
    /// The canonical spelling after `amdgpu` (`9.42`, `9.4`, `12.00`).
    spelling: &'static str,
    /// The spelling of its family's major subarch (itself for a major).
    major: &'static str,
    /// The processor it names, if any.
    processor: Option<&'static str>,
}

/// (spelling, family major, processor), in LLVM main's table order.
const TABLE: &[(&str, &str, Option<&str>)] = &[
    ("6", "6", None),
    ("6.00", "6", Some("gfx600")),
    ("6.01", "6", Some("gfx601")),
    ("6.02", "6", Some("gfx602")),
    ("7", "7", None),
    ("7.00", "7", Some("gfx700")),
    ("7.01", "7", Some("gfx701")),
    ("7.02", "7", Some("gfx702")),
    ("7.03", "7", Some("gfx703")),
    ("7.04", "7", Some("gfx704")),
    ("7.05", "7", Some("gfx705")),
    ("8", "8", None),
    ("8.01", "8", Some("gfx801")),
    ("8.02", "8", Some("gfx802")),
    ("8.03", "8", Some("gfx803")),
    ("8.05", "8", Some("gfx805")),
    ("8.10", "8.10", Some("gfx810")),
    ("9", "9", Some("gfx9-generic")),
    ("9.00", "9", Some("gfx900")),
    ("9.02", "9", Some("gfx902")),
    ("9.04", "9", Some("gfx904")),
    ("9.06", "9", Some("gfx906")),
    ("9.08", "9.08", Some("gfx908")),
    ("9.09", "9", Some("gfx909")),
    ("9.0a", "9.0a", Some("gfx90a")),
    ("9.0c", "9", Some("gfx90c")),
    ("9.4", "9.4", Some("gfx9-4-generic")),
    ("9.42", "9.4", Some("gfx942")),
    ("9.50", "9.4", Some("gfx950")),
    ("10.1", "10.1", Some("gfx10-1-generic")),
    ("10.10", "10.1", Some("gfx1010")),
    ("10.11", "10.1", Some("gfx1011")),
    ("10.12", "10.1", Some("gfx1012")),
    ("10.13", "10.1", Some("gfx1013")),
    ("10.3", "10.3", Some("gfx10-3-generic")),
    ("10.30", "10.3", Some("gfx1030")),
    ("10.31", "10.3", Some("gfx1031")),
    ("10.32", "10.3", Some("gfx1032")),
    ("10.33", "10.3", Some("gfx1033")),
    ("10.34", "10.3", Some("gfx1034")),
    ("10.35", "10.3", Some("gfx1035")),
    ("10.36", "10.3", Some("gfx1036")),
    ("11", "11", Some("gfx11-generic")),
    ("11.00", "11", Some("gfx1100")),
    ("11.01", "11", Some("gfx1101")),
    ("11.02", "11", Some("gfx1102")),
    ("11.03", "11", Some("gfx1103")),
    ("11.50", "11", Some("gfx1150")),
    ("11.51", "11", Some("gfx1151")),
    ("11.52", "11", Some("gfx1152")),
    ("11.53", "11", Some("gfx1153")),
    ("11.54", "11", Some("gfx1154")),
    ("11.7", "11.7", Some("gfx11-7-generic")),
    ("11.70", "11.7", Some("gfx1170")),
    ("11.71", "11.7", Some("gfx1171")),
    ("11.72", "11.7", Some("gfx1172")),
    ("12", "12", Some("gfx12-generic")),
    ("12.00", "12", Some("gfx1200")),
    ("12.01", "12", Some("gfx1201")),
    ("12.5", "12.5", Some("gfx12-5-generic")),
    ("12.50", "12.5", Some("gfx1250")),
    ("12.51", "12.5", Some("gfx1251")),
    ("13", "13", Some("gfx13-generic")),
    ("13.10", "13", Some("gfx1310")),
];

/// Spellings `parseSubArch` also takes, and the subarch each stands for.
const ALIASES: &[(&str, &str)] = &[("9.5", "9.4"), ("10", "10.1")];

impl Subarch {
    /// The subarch of an arch field `amdgpu<subarch>`; `None` for any
    /// other field, bare `amdgpu` included (ID-3, ID-7).
    pub fn parse(arch: &str) -> Option<Subarch> {
        let rest = arch.strip_prefix("amdgpu")?;
        let rest = (ALIASES.iter())
            .find(|(alias, _)| *alias == rest)
            .map_or(rest, |(_, to)| *to);
        Subarch::by_spelling(rest)
    }

    fn by_spelling(spelling: &str) -> Option<Subarch> {
        (TABLE.iter())
            .find(|(s, _, _)| *s == spelling)
            .map(|&(spelling, major, processor)| Subarch {
                spelling,
                major,
                processor,
            })
    }

    /// The subarch whose processor is `processor` (a primary AMDGPU name).
    pub fn of_processor(processor: &str) -> Option<Subarch> {
        (TABLE.iter())
            .find(|(_, _, p)| *p == Some(processor))
            .and_then(|(s, _, _)| Subarch::by_spelling(s))
    }

    /// The canonical arch field: `amdgpu` and the table's spelling (an
    /// alias such as `amdgpu9.5` is written `amdgpu9.4`).
    pub fn arch(self) -> String {
        format!("amdgpu{}", self.spelling)
    }

    /// The processor the subarch names; `None` for the majors of the
    /// families without a generic processor (6, 7, 8).
    pub fn processor(self) -> Option<&'static str> {
        self.processor
    }

    /// Whether this is its family's major subarch.
    pub fn is_major(self) -> bool {
        self.spelling == self.major
    }

    /// Whether code for this subarch runs on a GPU of subarch `gpu`
    /// (COMPAT-4): the same subarch, or this is the major of `gpu`'s family.
    pub fn serves(self, gpu: Subarch) -> bool {
        self == gpu || (self.is_major() && self.major == gpu.major)
    }

    /// Whether a processor named in the target ID fits this subarch
    /// (ID-7): it is the subarch's own processor, or, for a major, one of
    /// its family's.
    pub fn admits(self, processor: &str) -> bool {
        Subarch::of_processor(processor).is_some_and(|p| self.serves(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let sub = |s: &str| Subarch::parse(s).unwrap();
        assert_eq!(sub("amdgpu12.00").processor(), Some("gfx1200"));
        assert_eq!(sub("amdgpu9.0a").processor(), Some("gfx90a"));
        assert_eq!(sub("amdgpu10").arch(), "amdgpu10.1");
        assert_eq!(sub("amdgpu6").processor(), None);
        // Two minors of one family are never compatible.
        assert!(!sub("amdgpu9.00").serves(sub("amdgpu9.06")));
        // gfx908 and gfx90a are families of their own.
        assert!(!sub("amdgpu9").serves(sub("amdgpu9.0a")));
        assert!(sub("amdgpu9").admits("gfx906") && !sub("amdgpu9.42").admits("gfx90a"));
        for bad in ["amdgpu", "amdgpufoo", "amdgpu9.0A", "amdgcn", "amdgpu9.43"] {
            assert_eq!(Subarch::parse(bad), None, "{bad}");
        }
        for (spelling, major, _) in TABLE {
            assert!(
                Subarch::by_spelling(major).is_some_and(Subarch::is_major),
                "{spelling}"
            );
        }
    }
}
