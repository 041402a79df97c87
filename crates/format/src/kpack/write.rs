//! The writer of kpack archives: one layout ([`Writer`]), written as the
//! code objects come or into a `Vec` ([`write()`]).

use super::{Storage, DATA_START, MAGIC};
use rmpv::Value;

/// An archive of `kernels` (kernel name, arch, code object), laid out as
/// ROCm's tools write one: blobs from [`DATA_START`], then the TOC with its
/// keys in the order `pack_tree` and `split_artifacts` write them. A kernel
/// name listed twice for one arch is the caller's error, which [`super::parse`]
/// refuses (KPAK-5).
///
/// ```
/// use offload_kit_format::kpack::{self, Storage};
///
/// let kernels = [("lib/libk.so#0", "gfx906", &b"CODE-906"[..]), ("lib/libk.so#0", "gfx90a", b"CODE-90A")];
/// for storage in [Storage::Plain, Storage::Zstd(3)] {
///     let bytes = kpack::write(storage, "g", "gfx9", &kernels);
///     let a = kpack::parse(&bytes).unwrap();
///     let co = a.code_object(&bytes, &a.kernels[1], 1 << 28).unwrap();
///     assert_eq!(&*co, b"CODE-90A");
/// }
/// ```
pub fn write(
    storage: Storage,
    group: &str,
    family: &str,
    kernels: &[(&str, &str, &[u8])],
) -> Vec<u8> {
    let mut w = Writer::new(std::io::Cursor::new(Vec::new()), storage, kernels.len())
        .expect("writing to a Vec");
    for (name, arch, code) in kernels {
        w.add(name, arch, code).expect("writing to a Vec");
    }
    w.finish(group, family)
        .expect("writing to a Vec")
        .into_inner()
}

/// An archive written as its code objects come, in [`write()`]'s layout:
/// each is written (or compressed) when added and not held, so an archive
/// of any size takes one code object's memory. The header's TOC offset is
/// filled in by [`Writer::finish`], hence `Seek`.
pub struct Writer<W: std::io::Write + std::io::Seek> {
    out: W,
    storage: Storage,
    /// Where the next blob or frame goes.
    pos: u64,
    /// Kernels promised to [`Writer::new`] and added so far.
    count: usize,
    added: usize,
    /// `blobs` (plain storage): each blob's offset and size.
    blobs: Vec<Value>,
    /// The TOC: per kernel name, its (arch, entry)s, in first-seen order.
    toc: Vec<(String, Vec<(Value, Value)>)>,
    arches: Vec<String>,
}

impl<W: std::io::Write + std::io::Seek> Writer<W> {
    /// Start an archive of `count` code objects (zstd storage writes the
    /// frame count first) at the start of `out`.
    pub fn new(mut out: W, storage: Storage, count: usize) -> std::io::Result<Writer<W>> {
        let mut head = vec![0u8; DATA_START as usize];
        head[..4].copy_from_slice(MAGIC);
        head[4..8].copy_from_slice(&1u32.to_le_bytes());
        if let Storage::Zstd(_) = storage {
            let n = u32::try_from(count)
                .map_err(|_| std::io::Error::other("over 2^32 code objects in one archive"))?;
            head.extend(n.to_le_bytes());
        }
        out.write_all(&head)?;
        Ok(Writer {
            out,
            storage,
            pos: head.len() as u64,
            count,
            added: 0,
            blobs: Vec::new(),
            toc: Vec::new(),
            arches: Vec::new(),
        })
    }

    /// Add `code`, filed under kernel `name` for `arch` (a name listed
    /// twice for one arch is the caller's error, which [`super::parse`] refuses:
    /// KPAK-5).
    pub fn add(&mut self, name: &str, arch: &str, code: &[u8]) -> std::io::Result<()> {
        if self.added == self.count {
            return Err(std::io::Error::other(format!(
                "more than the {} code objects promised",
                self.count
            )));
        }
        match self.storage {
            Storage::Plain => {
                self.blobs.push(Value::Map(vec![
                    ("offset".into(), self.pos.into()),
                    ("size".into(), (code.len() as u64).into()),
                ]));
                self.out.write_all(code)?;
                self.pos += code.len() as u64;
            }
            Storage::Zstd(level) => {
                let frame = zstd::bulk::compress(code, level)?;
                let len = u32::try_from(frame.len())
                    .map_err(|_| std::io::Error::other("a zstd frame over 4 GiB"))?;
                self.out.write_all(&len.to_le_bytes())?;
                self.out.write_all(&frame)?;
                self.pos += 4 + frame.len() as u64;
            }
        }
        let entry = Value::Map(vec![
            ("ordinal".into(), (self.added as u64).into()),
            ("original_size".into(), (code.len() as u64).into()),
            ("type".into(), "hsaco".into()),
        ]);
        self.added += 1;
        match self.toc.iter_mut().find(|(n, _)| n == name) {
            Some((_, arches)) => arches.push((arch.into(), entry)),
            None => self
                .toc
                .push((name.to_string(), vec![(arch.into(), entry)])),
        }
        if !self.arches.iter().any(|a| a == arch) {
            self.arches.push(arch.to_string());
        }
        Ok(())
    }

    /// Write the TOC (group `group`, family `family`) and its offset in
    /// the header; the output back.
    pub fn finish(mut self, group: &str, family: &str) -> std::io::Result<W> {
        if self.added != self.count {
            return Err(std::io::Error::other(format!(
                "{} code objects added of the {} promised",
                self.added, self.count
            )));
        }
        let mut map: Vec<(Value, Value)> = Vec::new();
        match self.storage {
            Storage::Plain => {
                map.push(("blobs".into(), Value::Array(self.blobs)));
                map.push(("compression_scheme".into(), "none".into()));
            }
            Storage::Zstd(_) => map.push(("compression_scheme".into(), "zstd-per-kernel".into())),
        }
        map.push(("format_version".into(), 1u64.into()));
        map.push(("gfx_arch_family".into(), family.into()));
        let arches = self.arches.into_iter().map(Value::from).collect();
        map.push(("gfx_arches".into(), Value::Array(arches)));
        map.push(("group_name".into(), group.into()));
        if let Storage::Zstd(_) = self.storage {
            map.push(("zstd_offset".into(), DATA_START.into()));
            map.push(("zstd_size".into(), (self.pos - DATA_START).into()));
        }
        let toc = self.toc.into_iter().map(|(n, a)| (n.into(), Value::Map(a)));
        map.push(("toc".into(), Value::Map(toc.collect())));
        let mut toc_bytes = Vec::new();
        rmpv::encode::write_value(&mut toc_bytes, &Value::Map(map)).expect("writing to a Vec");
        self.out.write_all(&toc_bytes)?;
        self.out.seek(std::io::SeekFrom::Start(8))?;
        self.out.write_all(&self.pos.to_le_bytes())?;
        self.out.seek(std::io::SeekFrom::End(0))?;
        Ok(self.out)
    }
}

/// A `none` archive ([`write()`] with [`Storage::Plain`]).
pub fn write_plain(group: &str, family: &str, kernels: &[(&str, &str, &[u8])]) -> Vec<u8> {
    write(Storage::Plain, group, family, kernels)
}
