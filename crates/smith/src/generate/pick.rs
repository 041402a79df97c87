//! What entries hold: IDs from a pool (or the user's), payloads.

use super::{image, strict_id, Cx, GenerateError, Payload, Payloads, Rng};

/// Device IDs as LLVM 19 and 22 write them, one per processor so no two
/// entries of a bundle compose badly (COMPOSE-1).
const DEVICE_POOL: &[&str] = &[
    "hip-amdgcn-amd-amdhsa--gfx906",
    "hip-amdgcn-amd-amdhsa--gfx908:xnack+",
    "hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc-:xnack+",
    "hipv4-amdgcn-amd-amdhsa--gfx1030",
    "hip-amdgcn-amd-amdhsa--gfx1100",
    "openmp-amdgcn-amd-amdhsa--gfx942",
    "hipv4-amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
    "openmp-nvptx64-nvidia-cuda--sm_70",
    "openmp-nvptx64-nvidia-cuda--sm_80",
    "hip-spirv64-amd-amdhsa--amdgcnspirv",
];

/// Host IDs as LLVM 19 and 22 write them.
const HOST_POOL: &[&str] = &[
    "host-x86_64-unknown-linux-gnu-",
    "host-aarch64-unknown-linux-gnu-",
    "host-powerpc64le-unknown-linux-gnu-",
];

/// The IDs a run draws from: devices, each with the processor that keeps
/// two of them apart, and hosts.
pub(crate) struct Ids {
    devices: Vec<(String, String)>,
    hosts: Vec<String>,
}

impl Ids {
    /// The user's IDs (checked), or the built-in pools.
    pub(crate) fn new(user: &[String]) -> Result<Ids, GenerateError> {
        let given: Vec<&str> = if user.is_empty() {
            DEVICE_POOL.iter().chain(HOST_POOL).copied().collect()
        } else {
            user.iter().map(String::as_str).collect()
        };
        let mut ids = Ids {
            devices: Vec::new(),
            hosts: Vec::new(),
        };
        for id in given {
            let parsed = strict_id(id).map_err(|reason| GenerateError::BadTargetId {
                id: id.to_string(),
                reason,
            })?;
            if parsed.kind == "host" {
                ids.hosts.push(id.to_string());
            } else {
                // An amdgpu<subarch> ID with no target ID is for its
                // subarch's processor (ID-7).
                let proc_ = match (&parsed.parsed_target_id, parsed.amdgpu_processor()) {
                    (None, Some(p)) => p,
                    (Some(t), _) => t.processor.clone(),
                    (None, None) => parsed.triple.as_str().to_string(),
                };
                ids.devices.push((id.to_string(), proc_));
            }
        }
        Ok(ids)
    }

    /// The built-in pools, parsed once: the generator and the mutator are
    /// called hundreds of thousands of times.
    pub(crate) fn builtin() -> &'static Ids {
        static IDS: std::sync::OnceLock<Ids> = std::sync::OnceLock::new();
        IDS.get_or_init(|| Ids::new(&[]).expect("the built-in ID pool is valid"))
    }

    /// 1 to `max` distinct device IDs, at most one per processor (none
    /// when the user gave only host IDs).
    pub(crate) fn devices(&self, rng: &mut Rng, max: usize) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut procs: Vec<&str> = Vec::new();
        if self.devices.is_empty() {
            return out;
        }
        let want = 1 + rng.below(max.max(1));
        for _ in 0..want * 4 {
            if out.len() == want {
                break;
            }
            let (id, p) = rng.pick(&self.devices);
            if !procs.contains(&p.as_str()) {
                procs.push(p);
                out.push(id.clone());
            }
        }
        out
    }

    /// 1 to `max` distinct legacy `amdgcn` device IDs, each with its
    /// processor, at most one per processor (none when the pool has none).
    pub(crate) fn amdgcn_devices(&self, rng: &mut Rng, max: usize) -> Vec<(String, String)> {
        let pool: Vec<&(String, String)> = self
            .devices
            .iter()
            .filter(|(id, _)| id.contains("-amdgcn-amd-amdhsa-"))
            .collect();
        let mut out: Vec<(String, String)> = Vec::new();
        if pool.is_empty() {
            return out;
        }
        let want = 1 + rng.below(max.max(1));
        for _ in 0..want * 4 {
            if out.len() == want {
                break;
            }
            let (id, p) = *rng.pick(&pool);
            if !out.iter().any(|(_, q)| q == p) {
                out.push((id.clone(), p.clone()));
            }
        }
        out
    }

    /// A host ID, if any is available.
    pub(crate) fn host(&self, rng: &mut Rng) -> Option<String> {
        (!self.hosts.is_empty()).then(|| rng.pick(&self.hosts).clone())
    }

    /// A host ID for a container that must have one (a host object's host
    /// section): the pool's, or the built-in pool's first when the user's
    /// payloads or IDs name no host (the host section carries no image).
    pub(crate) fn host_or_builtin(&self, rng: &mut Rng) -> String {
        self.host(rng).unwrap_or_else(|| HOST_POOL[0].to_string())
    }

    /// A second host ID, different from `first`.
    pub(crate) fn other_host(&self, first: &str) -> Option<String> {
        self.hosts
            .iter()
            .map(String::as_str)
            .chain(HOST_POOL.iter().copied())
            .find(|h| *h != first)
            .map(str::to_string)
    }

    /// Every ID of the pool.
    pub(crate) fn all(&self) -> impl Iterator<Item = &str> {
        self.devices
            .iter()
            .map(|d| d.0.as_str())
            .chain(self.hosts.iter().map(String::as_str))
    }

    /// Device IDs and, with probability `host_pct`, a host ID in front.
    pub(crate) fn entries(&self, rng: &mut Rng, max: usize, host_pct: usize) -> Vec<String> {
        let mut ids = Vec::new();
        if rng.chance(host_pct) || self.devices.is_empty() {
            ids.extend(self.host(rng));
        }
        ids.extend(self.devices(rng, max));
        ids
    }
}

/// (triple, target ID) of a bundle entry ID, what an image must match.
fn image_key(id: &str) -> Option<(String, String)> {
    let p = strict_id(id).ok()?;
    Some((p.triple.as_str().to_string(), p.target_id))
}

/// The given payloads whose target is `id`'s.
fn given_for<'p>(given: &'p [Payload], id: &str) -> Vec<&'p Payload> {
    let key = image_key(id);
    given
        .iter()
        .filter(|p| key.is_some() && image_key(&p.id) == key)
        .collect()
}

/// Every ID of the pool can carry a payload of the chosen sort.
pub(crate) fn check_payloads(ids: &Ids, payloads: &Payloads) -> Result<(), GenerateError> {
    for id in ids.all() {
        let no = |reason: String| GenerateError::NoImage {
            id: id.to_string(),
            reason,
        };
        match payloads {
            Payloads::Random => {}
            Payloads::Loadable => {
                let (triple, arch) = image_key(id).ok_or_else(|| no("not a valid ID".into()))?;
                image::target_of(&triple, &arch).map_err(|e| no(e.0))?;
            }
            Payloads::Given(given) if given.is_empty() => {
                return Err(no("no payloads were given".into()))
            }
            Payloads::Given(given) => {
                if given_for(given, id).is_empty() {
                    let have: Vec<&str> = given.iter().map(|p| p.id.as_str()).collect();
                    return Err(no(format!(
                        "none of the given images is for its target; they are for {}",
                        have.join(", ")
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The payload of the entry `id`: an image for its target, one of the
/// user's, or random bytes (also for IDs a malformed file breaks).
pub(crate) fn payload_for(cx: &mut Cx<'_>, id: &str) -> Vec<u8> {
    match cx.payloads {
        Payloads::Random => payload(cx.rng, cx.small),
        Payloads::Given(given) => match given_for(given, id).as_slice() {
            [] => payload(cx.rng, cx.small),
            fits => cx.rng.pick(fits).bytes.clone(),
        },
        Payloads::Loadable => {
            match image_key(id).and_then(|(t, a)| image::target_of(&t, &a).ok()) {
                Some(target) => image::write(target, cx.rng),
                None => payload(cx.rng, cx.small),
            }
        }
    }
}

/// A payload for an archive member: an image, or with [`Payloads::Random`]
/// bytes no LLVM takes for an object file ([`inert_payload`]).
pub(crate) fn member_payload_for(cx: &mut Cx<'_>, id: &str) -> Vec<u8> {
    match cx.payloads {
        Payloads::Random => inert_payload(cx.rng, cx.small),
        _ => payload_for(cx, id),
    }
}

/// A payload of random bytes that is no ELF image, never empty
/// (an empty last payload is laid out differently by LLVM 14/16 and 19/22).
pub(crate) fn payload(rng: &mut Rng, small: bool) -> Vec<u8> {
    let len = if small {
        1 + rng.below(16)
    } else {
        let cap = if rng.chance(20) { 2048 } else { 256 };
        1 + rng.below(cap)
    };
    let mut p = rng.bytes(len);
    if p.starts_with(b"\x7fELF") {
        // An ELF header makes a payload an image, which must conform
        // (CO-2 … CO-5): random bytes never begin like one.
        p[0] = 0;
    }
    p
}

/// First bytes by which LLVM's `identify_magic` (llvm/lib/BinaryFormat/
/// Magic.cpp, 14-22) may take a file for an object it then parses: ELF,
/// COFF machine types, Mach-O, bitcode, archives, offload binaries,
/// XCOFF, GOFF, wasm, DXContainer, TAPI, PE, MSF.
const OBJECT_MAGIC_FIRST: &[u8] = &[
    0x00, 0x01, 0x03, 0x10, 0x2d, 0x3c, 0x21, 0x41, 0x42, 0x44, 0x4c, 0x4d, 0x50, 0x64, 0x66, 0x68,
    0x7f, 0x83, 0x84, 0x90, 0xc4, 0xca, 0xce, 0xcf, 0xde, 0xf0, 0xfe,
];

/// A payload no LLVM release takes for an object file: archive members.
/// LLVM writes each unbundled member into an archive with a symbol table,
/// parsing members that look like objects: a short "ELF" is refused
/// ("the size (56) is smaller than an ELF header (64)"), so such a payload
/// would make the generated archive invalid for LLVM though valid by spec.
pub(crate) fn inert_payload(rng: &mut Rng, small: bool) -> Vec<u8> {
    let mut p = payload(rng, small);
    if OBJECT_MAGIC_FIRST.contains(&p[0]) {
        // 0xa0-0xaf begin no magic.
        p[0] = 0xa0 | (p[0] & 0x0f);
    }
    p
}

/// Printable text lines for a text bundle's content.
pub(crate) fn text_content(rng: &mut Rng, small: bool, comment: &str) -> Vec<u8> {
    let lines = if small { 1 } else { 1 + rng.below(6) };
    let words = [
        "kernel", "void", "int", "x", "=", "0", "+", "1", ";", "ret", "define",
    ];
    let mut out = Vec::new();
    for _ in 0..lines {
        if rng.chance(20) {
            out.extend_from_slice(comment.as_bytes());
            out.push(b' ');
        }
        for _ in 0..1 + rng.below(6) {
            out.extend_from_slice(rng.pick(&words).as_bytes());
            out.push(b' ');
        }
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::generate::{generate, Kind, Options};
    use crate::inspect::code_object::CodeObject;
    use crate::inspect::inspect;

    /// LLVM main's `amdgpu<subarch>` IDs (spec/bundle-id.md ID-7) given as
    /// the pool: the bundles validate strictly and each entry holds a code
    /// object for its subarch's processor.
    #[test]
    fn amdgpu_subarch_pools() {
        let ids = [
            "host-x86_64-unknown-linux-gnu-",
            "hipv4-amdgpu9.42-amd-amdhsa--",
            "hipv4-amdgpu9.4-amd-amdhsa--",
            "hip-amdgpu12.00-amd-amdhsa--gfx1200",
        ];
        let opts = Options {
            target_ids: ids.iter().map(|s| s.to_string()).collect(),
            ..Options::default()
        };
        for seed in 0..20 {
            let g = generate(Kind::Binary, seed, &opts).unwrap();
            let report = inspect(&g.bytes).unwrap();
            for e in &report.entries {
                let id = crate::id::BundleEntryId::parse_strict(&e.entry.id).unwrap();
                let Some(want) = id.amdgpu_processor() else {
                    continue;
                };
                let CodeObject::Amdgpu(o) = &e.object else {
                    panic!("seed {seed}: {} holds no AMDGPU code object", e.entry.id);
                };
                assert_eq!(
                    o.processor,
                    Some(want.as_str()),
                    "seed {seed}: {}",
                    e.entry.id
                );
            }
        }
    }
}
