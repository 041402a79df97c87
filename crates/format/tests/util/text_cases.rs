//! Text bundles made by hand, and a source that records the windows read.
//! Included by crates/format/tests and by the root crate's tests; each
//! uses part of it.
#![allow(dead_code)]

// What the including file imports and defines (its constants, its
// fixtures), shared with it.
use super::*;

pub const HOST: &[u8] = b"host-x86_64-unknown-linux-gnu-";

pub const GFX906: &[u8] = b"hip-amdgcn-amd-amdhsa--gfx906";

pub const GFX90A: &[u8] = b"hip-amdgcn-amd-amdhsa--gfx90a:xnack+";

pub fn good() -> Vec<u8> {
    text::write_to_vec(
        &[
            (HOST, b"host line 1\nhost line 2\n"),
            (GFX906, b"dev no newline"),
        ],
        "#",
    )
}

pub fn start(c: &str, id: &[u8]) -> Vec<u8> {
    let mut v = text::start_marker(c);
    v.extend_from_slice(id);
    v.push(b'\n');
    v
}

pub fn end(c: &str, id: &[u8]) -> Vec<u8> {
    let mut v = text::end_marker(c);
    v.extend_from_slice(id);
    v.push(b'\n');
    v
}

pub fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

pub fn ids(es: &[TextEntry]) -> Vec<&[u8]> {
    es.iter().map(|e| &e.id[..]).collect()
}

pub fn contents<'a>(d: &'a [u8], es: &[TextEntry]) -> Vec<&'a [u8]> {
    es.iter().map(|e| e.payload(d).unwrap()).collect()
}

pub fn id_pool() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(HOST.to_vec()),
        Just(GFX906.to_vec()),
        Just(GFX90A.to_vec()),
        Just(b"openmp-nvptx64-nvidia-cuda--sm_70".to_vec()),
        Just(b"host-x86_64-pc-linux-gnu".to_vec()),
        Just(b"bogus".to_vec()),
        Just(b"".to_vec()),
        Just(b"host-x86_64-unknown-linux-gnu-\r".to_vec()),
    ]
}

pub fn content() -> impl Strategy<Value = Vec<u8>> {
    let tok = prop_oneof![
        Just(b"\n".to_vec()),
        Just(b"# ".to_vec()),
        Just(b"// ".to_vec()),
        Just(b"; ".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"__CLANG_OFFLOAD_BUNDLE____START__ ".to_vec()),
        Just(b"__CLANG_OFFLOAD_BUNDLE____END__ ".to_vec()),
        Just(HOST.to_vec()),
        prop::collection::vec(any::<u8>(), 0..6),
    ];
    prop::collection::vec(tok, 0..12).prop_map(|v| v.concat())
}

pub fn entries() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
    prop::collection::vec((id_pool(), content()), 0..5)
}

pub fn comment_s() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("#"), Just("//"), Just(";")]
}

/// A source whose windows are copies, recording each and how many are
/// held at once: the windowed readers must read through windows of at most
/// the chunk size, one at a time, and find exactly what the slice readers
/// find (the CLI maps each window separately, so that scanning a multi-GB
/// text bundle keeps about one window resident).
pub struct Recorder {
    pub data: Vec<u8>,
    pub chunk: u64,
    pub windows: std::cell::RefCell<Vec<(u64, u64)>>,
    pub live: std::rc::Rc<std::cell::Cell<usize>>,
    pub max_live: std::rc::Rc<std::cell::Cell<usize>>,
}

pub struct Held {
    pub bytes: Vec<u8>,
    pub live: std::rc::Rc<std::cell::Cell<usize>>,
}

impl std::ops::Deref for Held {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.live.set(self.live.get() - 1);
    }
}

impl Recorder {
    pub fn new(d: &[u8], chunk: u64) -> Recorder {
        Recorder {
            data: d.to_vec(),
            chunk,
            windows: Default::default(),
            live: Default::default(),
            max_live: Default::default(),
        }
    }

    /// `Ok` when no window read was longer than `max_window` and at most
    /// one was held at a time.
    pub fn held_within(&self, max_window: u64) -> Result<(), TestCaseError> {
        let windows = self.windows.borrow();
        prop_assert!(
            windows.iter().all(|w| w.1 <= max_window),
            "a window over {} bytes: {:?}",
            max_window,
            windows.iter().max_by_key(|w| w.1)
        );
        prop_assert!(
            self.max_live.get() <= 1,
            "{} windows held at once",
            self.max_live.get()
        );
        Ok(())
    }
}

impl Source for Recorder {
    fn bytes(&self) -> &[u8] {
        &self.data
    }
    fn window(&self, offset: u64, len: u64) -> Option<Window<'_>> {
        self.windows.borrow_mut().push((offset, len));
        let bytes = self
            .data
            .get(offset as usize..(offset + len) as usize)?
            .to_vec();
        self.live.set(self.live.get() + 1);
        self.max_live.set(self.max_live.get().max(self.live.get()));
        Some(Window::Held(Box::new(Held {
            bytes,
            live: self.live.clone(),
        })))
    }
    fn read_at(&self, _: u64, _: &mut [u8]) -> bool {
        panic!("the text readers read through windows only")
    }
    fn window_size(&self) -> u64 {
        self.chunk
    }
}

/// Marker-rich text: START and END lines (whole, cut, without their
/// "\n"), IDs, newlines, CRs and other bytes, in any order.
pub fn marker_rich(c: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let tok = prop_oneof![
        id_pool().prop_map(move |id| start(c, &id)),
        id_pool().prop_map(move |id| end(c, &id)),
        id_pool().prop_map(move |id| start(c, &id)[1..].to_vec()),
        Just(text::start_marker(c)),
        Just(text::end_marker(c)),
        id_pool(),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        prop::collection::vec(any::<u8>(), 0..8),
        prop::collection::vec(Just(b'x'), 0..200),
    ];
    prop::collection::vec(tok, 0..24).prop_map(|v| v.concat())
}

pub fn rich_case() -> impl Strategy<Value = (&'static str, Vec<u8>)> {
    comment_s().prop_flat_map(|c| (Just(c), marker_rich(c)))
}
