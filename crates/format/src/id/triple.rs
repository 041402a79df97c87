//! Target triples: the subset of `llvm::Triple` that bundle entry IDs need.
//!
//! LLVM classifies each of the four components (arch, vendor, OS,
//! environment) into an enum; two triples are "compatible" when the enums
//! agree, so `amdgcn-amd-amdhsa` and `amdgcn-amd-amdhsa-unknown` are the same
//! triple (spec rule COMPAT-2). [`normalize`] ports `Triple::normalize`,
//! which LLVM 22 applies when it writes an ID.
//!
//! # Example
//!
//! Classify, compare and normalize triples.
//!
//! ```
//! use offload_kit_format::id::triple::{normalize, CanonicalForm, Triple};
//!
//! let t = Triple::parse("amdgcn-amd-amdhsa");
//! assert_eq!((t.arch.as_str(), t.os_kind()), ("amdgcn", Some("amdhsa")));
//! assert!(t.is_amdgcn() && !t.is_nvptx());
//! // An absent or `unknown` environment is the same triple; another OS is not.
//! assert!(t.is_compatible_with(&Triple::parse("amdgcn-amd-amdhsa-unknown")));
//! assert!(!t.is_compatible_with(&Triple::parse("amdgcn-amd-amdpal")));
//! // Triple::normalize of LLVM 22: components moved into place, missing ones `unknown`.
//! assert_eq!(normalize("x86_64-linux-gnu-", CanonicalForm::Four), "x86_64-unknown-linux-gnu");
//! ```

/// Classify an architecture name as LLVM's `parseArch` does; `None` is `UnknownArch`.
pub fn parse_arch(s: &str) -> Option<&'static str> {
    let a = match s {
        "i386" | "i486" | "i586" | "i686" => "x86",
        "amd64" | "x86_64" | "x86_64h" => "x86_64",
        "powerpc" | "powerpcspe" | "ppc" | "ppc32" => "ppc",
        "powerpcle" | "ppcle" | "ppc32le" => "ppcle",
        "powerpc64" | "ppu" | "ppc64" => "ppc64",
        "powerpc64le" | "ppc64le" => "ppc64le",
        "xscale" | "xscaleeb" => "arm",
        "aarch64" | "arm64" | "arm64e" => "aarch64",
        "aarch64_be" => "aarch64_be",
        "aarch64_32" | "arm64_32" => "aarch64_32",
        "arc" => "arc",
        "mips" | "mipseb" | "mipsallegrex" => "mips",
        "mipsel" | "mipsallegrexel" => "mipsel",
        "mips64" | "mips64eb" => "mips64",
        "mips64el" => "mips64el",
        "r600" => "r600",
        "amdgcn" => "amdgcn",
        "riscv32" => "riscv32",
        "riscv64" => "riscv64",
        "hexagon" => "hexagon",
        "s390x" | "systemz" => "systemz",
        "sparc" => "sparc",
        "sparcel" => "sparcel",
        "sparcv9" | "sparc64" => "sparcv9",
        "tce" => "tce",
        "xcore" => "xcore",
        "nvptx" => "nvptx",
        "nvptx64" => "nvptx64",
        "le32" => "le32",
        "le64" => "le64",
        "amdil" => "amdil",
        "amdil64" => "amdil64",
        "hsail" => "hsail",
        "hsail64" => "hsail64",
        "spir" => "spir",
        "spir64" => "spir64",
        "spirv32" => "spirv32",
        "spirv64" => "spirv64",
        "spirv" => "spirv",
        "bpf" | "bpfel" => "bpfel",
        "bpfeb" => "bpfeb",
        "lanai" => "lanai",
        "loongarch32" => "loongarch32",
        "loongarch64" => "loongarch64",
        "ve" => "ve",
        "wasm32" => "wasm32",
        "wasm64" => "wasm64",
        "csky" => "csky",
        "msp430" => "msp430",
        "avr" => "avr",
        "m68k" => "m68k",
        "xtensa" => "xtensa",
        "dxil" => "dxil",
        _ => {
            if s.starts_with("armv") || s.starts_with("thumbv") || s == "arm" || s == "thumb" {
                return Some(if s.starts_with("thumb") {
                    "thumb"
                } else {
                    "arm"
                });
            }
            if s.starts_with("armeb") || s.starts_with("thumbeb") {
                return Some("armeb");
            }
            if s.starts_with("dxilv") {
                return Some("dxil");
            }
            if let Some(v) = s.strip_prefix("spirv") {
                if v.starts_with("1.") {
                    return Some("spirv");
                }
            }
            return None;
        }
    };
    Some(a)
}

/// Classify a vendor name (`parseVendor`); `None` is `UnknownVendor`.
pub fn parse_vendor(s: &str) -> Option<&'static str> {
    Some(match s {
        "apple" => "apple",
        "pc" => "pc",
        "scei" => "scei",
        "sie" => "scei",
        "fsl" => "freescale",
        "ibm" => "ibm",
        "img" => "imagination",
        "mti" => "mipstechnologies",
        "nvidia" => "nvidia",
        "csr" => "csr",
        "amd" => "amd",
        "mesa" => "mesa",
        "suse" => "suse",
        "oe" => "openembedded",
        "intel" => "intel",
        "meta" => "meta",
        _ => return None,
    })
}

/// The name of the first `(prefix, name)` of `table` whose prefix starts
/// `s` (the `StringSwitch::StartsWith` chains of `parseOS` and
/// `parseEnvironment`).
fn by_prefix(table: &[(&str, &'static str)], s: &str) -> Option<&'static str> {
    table
        .iter()
        .find(|(p, _)| s.starts_with(p))
        .map(|(_, name)| *name)
}

/// Classify an OS name (`parseOS`, which matches by prefix); `None` is `UnknownOS`.
pub fn parse_os(s: &str) -> Option<&'static str> {
    const OSES: &[(&str, &str)] = &[
        ("amdhsa", "amdhsa"),
        ("amdpal", "amdpal"),
        ("mesa3d", "mesa3d"),
        ("cuda", "cuda"),
        ("nvcl", "nvcl"),
        ("linux", "linux"),
        ("darwin", "darwin"),
        ("dragonfly", "dragonfly"),
        ("freebsd", "freebsd"),
        ("fuchsia", "fuchsia"),
        ("ios", "ios"),
        ("kfreebsd", "kfreebsd"),
        ("lv2", "lv2"),
        ("macos", "macosx"),
        ("netbsd", "netbsd"),
        ("openbsd", "openbsd"),
        ("solaris", "solaris"),
        ("uefi", "uefi"),
        ("win32", "win32"),
        ("windows", "win32"),
        ("zos", "zos"),
        ("haiku", "haiku"),
        ("rtems", "rtems"),
        ("aix", "aix"),
        ("elfiamcu", "elfiamcu"),
        ("tvos", "tvos"),
        ("watchos", "watchos"),
        ("hermit", "hermit"),
        ("hurd", "hurd"),
        ("wasi", "wasi"),
        ("emscripten", "emscripten"),
        ("shadermodel", "shadermodel"),
        ("liteos", "liteos"),
        ("serenity", "serenity"),
        ("vulkan", "vulkan"),
        ("none", "none"),
    ];
    by_prefix(OSES, s)
}

/// Classify an environment name (`parseEnvironment`, prefix match); `None` is `UnknownEnvironment`.
pub fn parse_environment(s: &str) -> Option<&'static str> {
    const ENVS: &[(&str, &str)] = &[
        ("eabihf", "eabihf"),
        ("eabi", "eabi"),
        ("gnuabin32", "gnuabin32"),
        ("gnuabi64", "gnuabi64"),
        ("gnueabihf", "gnueabihf"),
        ("gnueabi", "gnueabi"),
        ("gnuf32", "gnuf32"),
        ("gnuf64", "gnuf64"),
        ("gnusf", "gnusf"),
        ("gnux32", "gnux32"),
        ("gnu_ilp32", "gnu_ilp32"),
        ("gnu", "gnu"),
        ("code16", "code16"),
        ("android", "android"),
        ("musl", "musl"),
        ("msvc", "msvc"),
        ("itanium", "itanium"),
        ("cygnus", "cygnus"),
        ("coreclr", "coreclr"),
        ("simulator", "simulator"),
        ("macabi", "macabi"),
        ("pixel", "pixel"),
        ("vertex", "vertex"),
        ("geometry", "geometry"),
        ("hull", "hull"),
        ("domain", "domain"),
        ("compute", "compute"),
        ("library", "library"),
        ("raygeneration", "raygeneration"),
        ("amplification", "amplification"),
        ("mesh", "mesh"),
        ("ohos", "ohos"),
        ("opencl", "opencl"),
        ("llvm", "llvm"),
        ("sycl", "sycl"),
    ];
    by_prefix(ENVS, s)
}

/// Classify an object-format suffix (`parseFormat`, suffix match).
pub fn parse_format(s: &str) -> Option<&'static str> {
    const FORMATS: &[&str] = &[
        "coff",
        "elf",
        "goff",
        "macho",
        "wasm",
        "xcoff",
        "dxcontainer",
        "spirv",
    ];
    FORMATS.iter().find(|f| s.ends_with(*f)).copied()
}

/// A triple split as `llvm::Triple(StringRef)` splits it: the first three
/// `-`-separated components, and everything after the third `-` as the
/// environment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Triple {
    /// Architecture name as written.
    pub arch: String,
    /// Vendor name as written.
    pub vendor: String,
    /// OS name as written.
    pub os: String,
    /// Environment name as written (may contain `-`).
    pub env: String,
    /// Number of components present in the text (1..=4); `Triple::str` keeps the text as given.
    text: String,
}

impl Triple {
    /// Parse like `llvm::Triple(const Twine &)`.
    pub fn parse(text: &str) -> Triple {
        let mut it = text.splitn(4, '-');
        let arch = it.next().unwrap_or("").to_string();
        let vendor = it.next().unwrap_or("").to_string();
        let os = it.next().unwrap_or("").to_string();
        let env = it.next().unwrap_or("").to_string();
        Triple {
            arch,
            vendor,
            os,
            env,
            text: text.to_string(),
        }
    }

    /// Build like the four-argument `llvm::Triple` constructor: the text is
    /// always `arch-vendor-os-env`, even when `env` is empty.
    pub fn from_parts(arch: &str, vendor: &str, os: &str, env: &str) -> Triple {
        let text = format!("{arch}-{vendor}-{os}-{env}");
        Triple::parse(&text)
    }

    /// The triple's text (`Triple::str`).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Classified architecture (`None`: unknown).
    pub fn arch_kind(&self) -> Option<&'static str> {
        parse_arch(&self.arch)
    }

    /// Classified OS.
    pub fn os_kind(&self) -> Option<&'static str> {
        parse_os(&self.os)
    }

    /// `Triple::isCompatibleWith` for the offload targets in use, as LLVM 16
    /// and later have it: the classified arch, vendor, OS, environment and
    /// object format agree (rule COMPAT-2).
    pub fn is_compatible_with(&self, other: &Triple) -> bool {
        self.is_compatible_with_in(other, 22)
    }

    /// [`Triple::is_compatible_with`] as LLVM `major` has it: 14 does not
    /// read `spirv` as an object format (15 does; observed, spec/archive.md AR-3).
    pub fn is_compatible_with_in(&self, other: &Triple, major: u32) -> bool {
        parse_arch(&self.arch) == parse_arch(&other.arch)
            && sub_arch(&self.arch) == sub_arch(&other.arch)
            && parse_vendor(&self.vendor) == parse_vendor(&other.vendor)
            && parse_os(&self.os) == parse_os(&other.os)
            && parse_environment(&self.env) == parse_environment(&other.env)
            && self.object_format(major) == other.object_format(major)
    }

    /// The object format LLVM's `Triple` constructor sets: `parseFormat` of
    /// the environment (suffixes in LLVM's order; `dxcontainer` is none,
    /// `spirv` one from 15, observed), else `getDefaultFormat` of the arch
    /// and OS. So `…-amdhsa-xyzelf` and `…-amdhsa` are both ELF.
    fn object_format(&self, major: u32) -> &'static str {
        const SUFFIXES: &[&str] = &["xcoff", "coff", "elf", "goff", "macho", "wasm", "spirv"];
        if let Some(f) = SUFFIXES
            .iter()
            .find(|f| self.env.ends_with(**f) && (major >= 15 || **f != "spirv"))
        {
            return f;
        }
        match (parse_arch(&self.arch), parse_os(&self.os)) {
            (Some("spirv" | "spirv32" | "spirv64"), _) => "spirv",
            (Some("wasm32" | "wasm64"), _) => "wasm",
            (Some("dxil"), _) => "dxcontainer",
            (_, Some("darwin" | "ios" | "macosx" | "tvos" | "watchos" | "xros" | "driverkit")) => {
                "macho"
            }
            (_, Some("win32")) => "coff",
            (_, Some("aix")) => "xcoff",
            (_, Some("zos")) => "goff",
            _ => "elf",
        }
    }

    /// Whether this is an AMDGPU triple (`amdgcn`).
    pub fn is_amdgcn(&self) -> bool {
        parse_arch(&self.arch) == Some("amdgcn")
    }

    /// Whether this is an AMDGPU triple of either spelling: `amdgcn`, or
    /// `amdgpu<subarch>` as LLVM main writes it ([`super::subarch`]).
    pub fn is_amdgpu(&self) -> bool {
        self.is_amdgcn() || super::subarch::Subarch::parse(&self.arch).is_some()
    }

    /// Whether this is an NVPTX triple.
    pub fn is_nvptx(&self) -> bool {
        matches!(parse_arch(&self.arch), Some("nvptx" | "nvptx64"))
    }
}

fn sub_arch(arch: &str) -> &str {
    // Sub-architectures matter only for ARM/SPIR-V versions; the text after
    // the base name is a fair proxy for the targets offloading uses.
    if arch.starts_with("arm") || arch.starts_with("thumb") || arch.starts_with("spirv1") {
        arch
    } else {
        ""
    }
}

/// How many components `normalize` produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CanonicalForm {
    /// Keep as many components as there are.
    Any,
    /// `arch-vendor-os`.
    Three,
    /// `arch-vendor-os-env`.
    Four,
}

/// Port of `llvm::Triple::normalize` (LLVM 22), for the components offload
/// IDs use. Components are moved to the position they classify as, empty
/// components become `unknown`, and the list is resized to `form`.
pub fn normalize(text: &str, form: CanonicalForm) -> String {
    let mut comps: Vec<String> = text.split('-').map(str::to_string).collect();
    let get = |c: &Vec<String>, i: usize| c.get(i).cloned();
    let mut found = [
        get(&comps, 0).is_some_and(|c| parse_arch(&c).is_some()),
        get(&comps, 1).is_some_and(|c| parse_vendor(&c).is_some()),
        get(&comps, 2).is_some_and(|c| os_valid(&c)),
        get(&comps, 3)
            .is_some_and(|c| parse_environment(&c).is_some() || parse_format(&c).is_some()),
    ];
    // parse_environment at position 3 first; LLVM only uses the format when
    // the environment is unknown (same result for the found flag).
    for pos in 0..4 {
        if found[pos] {
            continue;
        }
        let mut idx = 0;
        while idx < comps.len() {
            if idx < 4 && found[idx] {
                idx += 1;
                continue;
            }
            let comp = comps[idx].clone();
            let valid = match pos {
                0 => parse_arch(&comp).is_some(),
                1 => parse_vendor(&comp).is_some(),
                2 => os_valid(&comp),
                _ => parse_environment(&comp).is_some() || parse_format(&comp).is_some(),
            };
            if !valid {
                idx += 1;
                continue;
            }
            if pos < idx {
                let mut current = std::mem::take(&mut comps[idx]);
                let mut i = pos;
                while !current.is_empty() {
                    while i < 4 && found[i] {
                        i += 1;
                    }
                    if i >= comps.len() {
                        comps.push(String::new());
                    }
                    std::mem::swap(&mut current, &mut comps[i]);
                    i += 1;
                }
            } else if pos > idx {
                loop {
                    let mut current = String::new();
                    let mut i = idx;
                    while i < comps.len() {
                        std::mem::swap(&mut current, &mut comps[i]);
                        if current.is_empty() {
                            break;
                        }
                        i += 1;
                        while i < 4 && found[i] {
                            i += 1;
                        }
                    }
                    if !current.is_empty() {
                        comps.push(current);
                    }
                    idx += 1;
                    while idx < 4 && found[idx] {
                        idx += 1;
                    }
                    if idx >= pos {
                        break;
                    }
                }
            }
            found[pos] = true;
            break;
        }
    }
    if found[0]
        && !found[1]
        && !found[2]
        && found[3]
        && comps.get(1).map(String::as_str) == Some("none")
        && comps.get(2).is_some_and(|c| c.is_empty())
    {
        comps.swap(1, 2);
    }
    for c in comps.iter_mut() {
        if c.is_empty() {
            *c = "unknown".to_string();
        }
    }
    match form {
        CanonicalForm::Any => {}
        CanonicalForm::Three => comps.resize(3, "unknown".to_string()),
        CanonicalForm::Four => comps.resize(4, "unknown".to_string()),
    }
    comps.join("-")
}

fn os_valid(c: &str) -> bool {
    parse_os(c).is_some()
        || c.starts_with("cygwin")
        || c.starts_with("msys")
        || c.starts_with("mingw")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_vectors_from_llvm22() {
        // (input, expected) pairs observed with clang-offload-bundler 22.
        let four = [
            ("x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu"),
            ("x86_64-unknown-linux-", "x86_64-unknown-linux-unknown"),
            ("x86_64-linux-gnu-", "x86_64-unknown-linux-gnu"),
            ("nvptx64-nvidia-cuda-", "nvptx64-nvidia-cuda-unknown"),
            ("nvptx64-nvidia-cuda-sm_70", "nvptx64-nvidia-cuda-sm_70"),
            ("x86_64-pc-linux-gnu", "x86_64-pc-linux-gnu"),
        ];
        for (i, e) in four {
            assert_eq!(normalize(i, CanonicalForm::Four), e, "{i}");
        }
        assert_eq!(
            normalize("amdgcn-amd-amdhsa-", CanonicalForm::Three),
            "amdgcn-amd-amdhsa"
        );
        assert_eq!(
            normalize("amdgcn-amd-amdhsa-gnu", CanonicalForm::Three),
            "amdgcn-amd-amdhsa"
        );
    }

    #[test]
    fn compatibility_ignores_empty_env() {
        let a = Triple::parse("amdgcn-amd-amdhsa");
        let b = Triple::parse("amdgcn-amd-amdhsa-unknown");
        let c = Triple::parse("amdgcn-amd-amdhsa-");
        assert!(a.is_compatible_with(&b));
        assert!(a.is_compatible_with(&c));
        assert!(!a.is_compatible_with(&Triple::parse("amdgcn-amd-amdpal")));
    }
}
