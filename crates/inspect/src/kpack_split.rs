//! A fat binary split into ROCm kpack archives and a HIPK host, and
//! archives joined back into bundles (spec/kpack.md), as ROCm's
//! `split_artifacts` files them: `offload-kit convert --to kpack` and
//! `--to bundle`, Python's `split_kpack` and `join_kpack`. Each output is
//! streamed into a writer the front end gives (the CLI's temporary files,
//! a byte vector), so a split library of any size takes one code object's
//! memory at a time.

use crate::budget::Budget;
use crate::hipk::{Bytes, Open};
use offload_kit_format::binary::{self, Layout};
use offload_kit_format::host::elf::{hipk, Elf};
use offload_kit_format::id::BundleEntryId;
use offload_kit_format::kpack::{self, Archive, HostRef, Storage};
use offload_kit_format::{rules, Error};
use offload_kit_llvm::detect;
use std::borrow::Cow;
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

/// How to split a fat binary.
pub struct SplitOptions<'a> {
    /// The input's file name: the rewritten host's name, the default
    /// kernel name, and up to its first `.` the default prefix.
    pub name: &'a str,
    /// The kernel name the archives file code objects under
    /// (`<kernel>#<index>`), as the host's `.rocm_kpack_ref` names it.
    pub kernel: Option<&'a str>,
    /// Archives are named `<prefix>_<target ID>.kpack`.
    pub prefix: Option<&'a str>,
    /// Code objects stored plain, or zstd per kernel.
    pub storage: Storage,
    /// How much a decoded code object may take (CLI-6).
    pub budget: Budget,
}

/// One archive of a split: its file name, its target ID and the code
/// objects it files.
pub struct SplitArchive {
    /// `<prefix>_<target ID>.kpack`.
    pub name: String,
    /// The target ID of every code object in it.
    pub arch: String,
    /// (key, listing entry): the key an archive files a code object
    /// under, and the entry read when the archive is written (never all
    /// at once).
    kernels: Vec<(String, usize)>,
}

impl SplitArchive {
    /// How many code objects it files (one per key).
    pub fn count(&self) -> usize {
        self.kernels.len()
    }
}

/// A split, planned: what each file will hold. [`Split::write_archive`]
/// and [`Split::host`] make the files.
pub struct Split<'d> {
    data: &'d [u8],
    listing: detect::Listing,
    archives: Vec<SplitArchive>,
    /// The host rewritten to find the archives (HIPK-3), for a shared
    /// object or executable with HIP wrappers.
    host: Option<(String, HostRef)>,
    /// The archives' group name (the prefix).
    group: String,
    storage: Storage,
    budget: Budget,
}

/// The rewritten host of a split (HIPK-3).
pub struct SplitHost {
    /// Its file name (the input's).
    pub name: String,
    /// What its `.rocm_kpack_ref` says.
    pub reference: HostRef,
    /// The host's bytes.
    pub bytes: Vec<u8>,
}

/// Plan the split of `data`: the code objects of its device entries, one
/// archive per target ID, each filed under `<kernel>#<index>` (the
/// runtime's key). For a host (a shared object or executable with HIP
/// wrappers) the index is that of the wrapper registering the code
/// object's bundle, and the host is rewritten to find them (HIPK-3); for
/// anything else the index is the bundle's number.
pub fn split<'d>(data: &'d [u8], opts: &SplitOptions<'_>) -> Result<Split<'d>, Vec<Error>> {
    let listing = crate::validate(&data, opts.budget).map_err(Vec::from)?;
    let kernel = opts.kernel.unwrap_or(opts.name).to_string();
    let stem = opts.name.split('.').next().unwrap_or("kpack");
    let group = opts.prefix.unwrap_or(stem).to_string();
    let wrappers = host_wrappers(data).map_err(|e| vec![e])?;
    // A wrapper registers the fat binary it points at: one pointing inside
    // a bundle would find nothing after the split (KERNEL_NOT_FOUND).
    for w in wrappers.iter().flatten() {
        let at = usize::try_from(w.target_offset).unwrap_or(usize::MAX);
        let starts = |m: &[u8]| data.get(at..).is_some_and(|d| d.starts_with(m));
        if !starts(offload_kit_format::raw::bundle::MAGIC)
            && !starts(offload_kit_format::raw::ccob::MAGIC)
        {
            return Err(vec![Error::at(
                rules::HIPK_3,
                w.target_offset,
                format!(
                    "wrapper {} points at 0x{:x}, which starts no bundle: the split would leave it without code objects",
                    w.index, w.target_offset
                ),
            )]);
        }
    }
    // Per target ID, its (kernel key, code object)s, in listing order.
    let mut archives: Vec<SplitArchive> = Vec::new();
    for (entry, e) in listing.entries.iter().enumerate() {
        let Ok(id) = BundleEntryId::parse_strict(&e.id) else {
            continue;
        };
        let Some(arch) = id
            .parsed_target_id
            .as_ref()
            .map(|_| id.target_id.clone())
            .filter(|_| id.triple.is_amdgpu() || id.triple.arch == "amdgcn")
        else {
            continue;
        };
        let indices = match &wrappers {
            Some(ws) => wrappers_of(ws, e.ccob_offset.unwrap_or(e.offset)),
            None => vec![e.bundle as u64],
        };
        if indices.is_empty() {
            return Err(vec![Error::at(
                rules::HIPK_3,
                e.offset,
                format!("no wrapper registers the bundle of entry '{}'", e.id),
            )]);
        }
        let slot = match archives.iter().position(|a| a.arch == arch) {
            Some(i) => i,
            None => {
                archives.push(SplitArchive {
                    name: format!("{group}_{arch}.kpack"),
                    arch,
                    kernels: Vec::new(),
                });
                archives.len() - 1
            }
        };
        // Filed under each wrapper registering the bundle (a runtime asks
        // with any of their indices).
        for index in indices {
            let key = kpack::lookup_key(&kernel, index);
            archives[slot].kernels.push((key, entry));
        }
    }
    if archives.is_empty() {
        return Err(vec![Error::other(
            "no AMDGPU code object to split (a fat binary's device entries go to kpack archives)",
        )]);
    }
    let host = wrappers.is_some().then(|| {
        let reference = HostRef {
            search_paths: vec![format!("{group}_@GFXARCH@.kpack")],
            kernel_name: kernel,
        };
        (opts.name.to_string(), reference)
    });
    Ok(Split {
        data,
        listing,
        archives,
        host,
        group,
        storage: opts.storage,
        budget: opts.budget,
    })
}

impl Split<'_> {
    /// The archives, in the order their targets first appear.
    pub fn archives(&self) -> &[SplitArchive] {
        &self.archives
    }

    /// Write archive `i` into `out`, reading each code object as it is
    /// written (consecutive keys filing one code object, as wrappers
    /// sharing a bundle do, read it once). The caller checks what was
    /// written ([`crate::validate_kpack`]): [`Split::files`] does.
    pub fn write_archive<W: Write + Seek>(&self, i: usize, out: W) -> Result<W, Vec<Error>> {
        let io = |e: std::io::Error| vec![Error::from(e)];
        let a = (self.archives.get(i))
            .ok_or_else(|| vec![Error::other(format!("the split has no archive {i}"))])?;
        let mut w = kpack::Writer::new(out, self.storage, a.kernels.len()).map_err(io)?;
        let mut last: Option<(usize, Cow<'_, [u8]>)> = None;
        for (key, entry) in &a.kernels {
            if last.as_ref().is_none_or(|(e, _)| e != entry) {
                drop(last.take()); // the previous code object goes before the next is read
                let code = detect::payload(self.data, &self.listing.entries[*entry], self.budget);
                last = Some((*entry, code.map_err(|e| vec![e])?));
            }
            let bytes = last.as_ref().map_or(&[][..], |(_, c)| c.as_ref());
            w.add(key, &a.arch, bytes).map_err(io)?;
        }
        drop(last);
        w.finish(&self.group, &a.arch).map_err(io)
    }

    /// The host rewritten to find the archives (HIPK-3), if the input is
    /// one (a shared object or executable with HIP wrappers).
    pub fn host(&self) -> Option<Result<SplitHost, Vec<Error>>> {
        let (name, reference) = self.host.as_ref()?;
        Some(
            hipk::rewrite(self.data, reference)
                .map(|bytes| SplitHost {
                    name: name.clone(),
                    reference: reference.clone(),
                    bytes,
                })
                .map_err(|e| vec![e]),
        )
    }

    /// Every file of the split in memory: each archive (checked: it must
    /// pass the strict check, KPAK-1 … 5) by name, then the host if there
    /// is one. Together they may hold at most the budget (CLI-6).
    pub fn files(&self) -> Result<Vec<(String, Vec<u8>)>, Vec<Error>> {
        // The code objects' sizes first: archives are made whole in memory,
        // and many compressed bundles may each decode to near the budget.
        let claimed = (self.archives.iter())
            .flat_map(|a| {
                let mut entries: Vec<usize> = a.kernels.iter().map(|(_, e)| *e).collect();
                entries.dedup();
                entries
            })
            .map(|e| self.listing.entries[e].size)
            .fold(0u64, u64::saturating_add);
        self.within(claimed)?;
        let mut out = Vec::new();
        let mut held = 0u64;
        for (i, a) in self.archives.iter().enumerate() {
            let bytes = self
                .write_archive(i, std::io::Cursor::new(Vec::new()))?
                .into_inner();
            crate::validate_kpack(&bytes, self.budget).map_err(Vec::from)?;
            held = held.saturating_add(bytes.len() as u64);
            self.within(held)?;
            out.push((a.name.clone(), bytes));
        }
        if let Some(host) = self.host() {
            let host = host?;
            self.within(held.saturating_add(host.bytes.len() as u64))?;
            out.push((host.name, host.bytes));
        }
        Ok(out)
    }

    fn within(&self, held: u64) -> Result<(), Vec<Error>> {
        let room = self.budget.bytes();
        match held > room {
            true => Err(vec![Error::rule(
                rules::CLI_6,
                format!("the split's files hold over {room} bytes, the memory budget"),
            )]),
            false => Ok(()),
        }
    }
}

/// The wrappers of `data` if it is a HIP host to rewrite (an executable or
/// shared object with a `.hipFatBinSegment`); `None` for other inputs.
fn host_wrappers(data: &[u8]) -> Result<Option<Vec<hipk::Wrapper>>, Error> {
    let Ok(elf) = Elf::parse(data) else {
        return Ok(None);
    };
    if !matches!(elf.e_type, 2 | 3) || elf.section_by_name(kpack::WRAPPER_SECTION).is_none() {
        return Ok(None);
    }
    hipk::wrappers(data).map(Some)
}

/// The indices of the wrappers registering the bundle that holds file
/// position `at`: those whose fat binary starts last at or before it.
fn wrappers_of(wrappers: &[hipk::Wrapper], at: u64) -> Vec<u64> {
    let start = (wrappers.iter())
        .map(|w| w.target_offset)
        .filter(|&t| t <= at)
        .max();
    (wrappers.iter())
        .filter(|w| Some(w.target_offset) == start)
        .map(|w| w.index)
        .collect()
}

/// A kpack archive joined into a binary bundle (alignment 4096, as clang
/// writes `.hip_fatbin` bundles) of an empty host entry and one
/// `hipv4-amdgcn-amd-amdhsa--<arch>` entry per code object, the code
/// objects byte for byte as the archive holds them; and how many code
/// objects it holds. The archive is checked first (KPAK-1 … 5); the code
/// objects and the bundle take half the budget each.
pub fn join_archive(data: &[u8], budget: Budget) -> Result<(Vec<u8>, usize), Vec<Error>> {
    let a = crate::validate_kpack(data, budget).map_err(Vec::from)?;
    // Counted over every code object, not per frame (a 50 KB archive of
    // frames claiming 128 MiB each once took 1.6 GB).
    let room = budget.bytes() / 2;
    let mut held = 0u64;
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> =
        vec![(b"host-x86_64-unknown-linux-gnu-".to_vec(), Vec::new())];
    for k in &a.kernels {
        let id = format!("hipv4-amdgcn-amd-amdhsa--{}", k.arch).into_bytes();
        if entries.iter().any(|(i, _)| *i == id) {
            return Err(vec![Error::other(format!(
                "two code objects for {} (kernels filed under several names): one bundle holds one per target",
                k.arch
            ))]);
        }
        if held.saturating_add(k.original_size) > room {
            return Err(vec![Error::rule(
                rules::CLI_6,
                format!(
                    "the code objects up to '{}' {} hold over {room} bytes, half the memory budget (--max-memory)",
                    k.name.escape_debug(),
                    k.arch.escape_debug()
                ),
            )]);
        }
        let code =
            (a.code_object(data, k, room - held + kpack::ZSTD_WINDOW)).map_err(|e| vec![e])?;
        held += code.len() as u64;
        entries.push((id, code.into_owned()));
    }
    let refs: Vec<(&[u8], &[u8])> = (entries.iter())
        .map(|(i, c)| (i.as_slice(), c.as_slice()))
        .collect();
    let bundle = binary::write_to_vec(&refs, 4096).map_err(|e| vec![e])?;
    Ok((bundle, entries.len() - 1))
}

/// A HIPK host made whole again, planned: the host's bytes around the
/// fat binaries, and each wrapper's bundle laid out from the archives'
/// sizes. [`JoinedHost::write`] streams it one code object at a time.
pub struct JoinedHost {
    host: hipk::Relinked,
    bundles: Vec<HostBundle>,
    /// The archives read: path, bytes, table.
    archives: Vec<(PathBuf, Bytes, Archive)>,
    budget: Budget,
}

/// A wrapper's bundle: where it starts in the payload, its layout, and
/// (archive, kernel) of each device entry.
type HostBundle = (u64, Layout, Vec<(usize, usize)>);

/// What [`JoinedHost::write`] wrote.
pub struct Joined {
    /// Bundles (one per wrapper).
    pub bundles: usize,
    /// Code objects in all.
    pub code_objects: usize,
    /// Archives read.
    pub archives: usize,
}

/// Plan the join of the HIPK host at `path` (bytes `data`, reference `r`):
/// each wrapper registers a bundle of its code objects from every archive
/// its search paths name (`given` in their place; opened with `open`, each
/// checked), an empty host entry then one `hipv4-amdgcn-amd-amdhsa--<arch>`
/// entry per architecture, in archive order (HIPK-3).
pub fn join_host(
    path: &Path,
    data: &[u8],
    r: &HostRef,
    given: Option<&[PathBuf]>,
    (open, budget): (Open<'_>, Budget),
) -> Result<JoinedHost, Vec<Error>> {
    let wrappers = hipk::split_wrappers(data).map_err(|e| vec![e])?;
    let mut archives = Vec::new();
    for p in crate::hipk::archives(path, r, given) {
        let input = open(&p).map_err(|e| vec![e])?;
        let a = crate::validate_kpack((*input).as_ref(), budget).map_err(Vec::from)?;
        archives.push((p, input, a));
    }
    let host_id: &[u8] = match Elf::parse(data).map(|e| e.machine) {
        Ok(183) => b"host-aarch64-unknown-linux-gnu-",
        _ => b"host-x86_64-unknown-linux-gnu-",
    };
    let (mut bundles, mut targets, mut payload_len) = (Vec::new(), Vec::new(), 0u64);
    for w in &wrappers {
        let key = kpack::lookup_key(&r.kernel_name, w.index);
        let mut ids: Vec<Vec<u8>> = Vec::new();
        let mut sources = Vec::new();
        let mut sized: Vec<u64> = Vec::new();
        for (ai, (_, _, a)) in archives.iter().enumerate() {
            for (ki, k) in a.kernels.iter().enumerate().filter(|(_, k)| k.name == key) {
                let id = format!("hipv4-amdgcn-amd-amdhsa--{}", k.arch).into_bytes();
                if ids.contains(&id) {
                    return Err(vec![Error::other(format!(
                        "a second code object for {} under '{key}'",
                        k.arch
                    ))]);
                }
                ids.push(id);
                sources.push((ai, ki));
                sized.push(k.original_size);
            }
        }
        if sources.is_empty() {
            return Err(vec![Error::at(
                rules::HIPK_2,
                0,
                format!("no archive of {} holds '{key}'", archives.len()),
            )]);
        }
        let mut entries: Vec<(&[u8], u64)> = vec![(host_id, 0)];
        entries.extend(ids.iter().map(Vec::as_slice).zip(sized));
        let layout = binary::layout(&entries, 4096).map_err(|e| vec![e])?;
        let at = payload_len.next_multiple_of(hipk::FATBIN_ALIGN);
        payload_len = at.checked_add(layout.total).ok_or_else(|| {
            vec![Error::rule(
                rules::BIN_11,
                "the fat binaries exceed 2^64 bytes",
            )]
        })?;
        targets.push(at);
        bundles.push((at, layout, sources));
    }
    let host = hipk::restore_layout(data, payload_len, &targets).map_err(|e| vec![e])?;
    Ok(JoinedHost {
        host,
        bundles,
        archives,
        budget,
    })
}

impl JoinedHost {
    /// The archives it reads, in order.
    pub fn archives(&self) -> impl Iterator<Item = &Path> {
        self.archives.iter().map(|(p, ..)| p.as_path())
    }

    /// How many bytes [`JoinedHost::write`] writes.
    pub fn size(&self) -> u64 {
        let ends = (self.host.head.len() + self.host.tail.len()) as u64;
        ends.saturating_add(self.host.payload_len)
    }

    /// Stream the whole host into `out`, one code object at a time.
    pub fn write<W: Write>(&self, out: &mut W) -> Result<Joined, Vec<Error>> {
        let io = |e: std::io::Error| vec![Error::from(e)];
        let limit = self.budget.bytes();
        out.write_all(&self.host.head).map_err(io)?;
        let (mut pos, mut objects) = (0u64, 0);
        // A code object that cannot be read stops the copy; its error, not
        // the I/O error that carries it out of the writer, is the answer.
        let mut failed: Option<Error> = None;
        for (at, layout, sources) in &self.bundles {
            binary::write_zeros(out, at - pos).map_err(io)?;
            let written = layout.write(out, |i, w| {
                if i == 0 {
                    return Ok(());
                }
                let (ai, ki) = sources[i - 1];
                let (_, input, a) = &self.archives[ai];
                match a.code_object((**input).as_ref(), &a.kernels[ki], limit) {
                    Ok(code) => w.write_all(&code),
                    Err(e) => {
                        failed = Some(e);
                        Err(std::io::Error::other("code object"))
                    }
                }
            });
            if let Some(e) = failed.take() {
                return Err(vec![e]);
            }
            written.map_err(io)?;
            objects += sources.len();
            pos = at + layout.total;
        }
        out.write_all(&self.host.tail).map_err(io)?;
        Ok(Joined {
            bundles: self.bundles.len(),
            code_objects: objects,
            archives: self.archives.len(),
        })
    }
}
