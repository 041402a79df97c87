//! Text bundles of every text type, and one violation per rule of
//! `text-bundle.md` that bytes can break.

use super::{binary, pick, Cx, Draft, Violation};
use crate::rules::{self, Rule};

/// Rules a text bundle can break one at a time.
pub(super) const RULES: &[Rule] = &[
    rules::TXT_3,
    rules::TXT_5,
    rules::TXT_6,
    rules::TXT_7,
    rules::TXT_8,
    rules::TXT_9,
    rules::TXT_10,
    rules::TXT_11,
    rules::TXT_12,
    rules::ID_1,
    rules::ID_2,
    rules::TID_1,
    rules::TID_2,
    rules::TID_3,
];

/// Text types (TXT-1); their comment strings come from the text reader.
const TYPES: &[&str] = &["i", "ii", "cui", "hipi", "d", "s", "ll"];

const START: &str = " __CLANG_OFFLOAD_BUNDLE____START__ ";
const END: &str = " __CLANG_OFFLOAD_BUNDLE____END__ ";

/// Where one entry's lines landed.
struct Lines {
    /// The `\n` opening the START line.
    start: usize,
    /// The ID in the START line.
    start_id: usize,
    /// The `\n` ending the START line.
    start_nl: usize,
    /// The ID in the END line.
    end_id: usize,
    /// One past the END line.
    after: usize,
}

/// Serialise as LLVM writes (TXT-2); `end_ids[i]` is the ID the END line
/// names, `None` to leave the END line out.
fn write(
    c: &str,
    entries: &[(Vec<u8>, Vec<u8>)],
    end_ids: &[Option<Vec<u8>>],
    cr_after_start: Option<usize>,
) -> (Vec<u8>, Vec<Lines>) {
    let mut out = Vec::new();
    let mut lines = Vec::new();
    for (i, ((id, content), end_id)) in entries.iter().zip(end_ids).enumerate() {
        let start = out.len();
        out.push(b'\n');
        out.extend_from_slice(c.as_bytes());
        out.extend_from_slice(START.as_bytes());
        let start_id = out.len();
        out.extend_from_slice(id);
        if cr_after_start == Some(i) {
            out.push(b'\r');
        }
        let start_nl = out.len();
        out.push(b'\n');
        out.extend_from_slice(content);
        let mut end_id_at = out.len();
        if let Some(eid) = end_id {
            out.push(b'\n');
            out.extend_from_slice(c.as_bytes());
            out.extend_from_slice(END.as_bytes());
            end_id_at = out.len();
            out.extend_from_slice(eid);
            // The END line repeats the START line's ID, CR included.
            if cr_after_start == Some(i) {
                out.push(b'\r');
            }
            out.push(b'\n');
        }
        lines.push(Lines {
            start,
            start_id,
            start_nl,
            end_id: end_id_at,
            after: out.len(),
        });
    }
    (out, lines)
}

/// One text bundle, valid or breaking `rule`.
pub(super) fn build(mut cx: Cx<'_>, rule: Option<Rule>) -> Option<Draft> {
    let ty = *cx.rng.pick(TYPES);
    let c = crate::bundle::text::comment(ty).expect("a text type");
    let max = if cx.small { 2 } else { 4 };
    let ids = cx.ids.entries(cx.rng, max, 70);
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = ids
        .into_iter()
        .map(|id| (id.into_bytes(), pick::text_content(cx.rng, cx.small, c)))
        .collect();
    let n = entries.len();
    let description = format!(
        "text bundle, type {ty} (comment '{c}'), {}",
        binary::describe(&entries, 1)
    );
    let mut end_ids: Vec<Option<Vec<u8>>> =
        entries.iter().map(|(id, _)| Some(id.clone())).collect();
    let i = cx.rng.below(n);
    let draft = |bytes: Vec<u8>, v: Option<Violation>| {
        Some(Draft {
            bytes,
            description: description.clone(),
            violation: v,
        })
    };
    let Some(rule) = rule else {
        let (bytes, _) = write(c, &entries, &end_ids, None);
        return draft(bytes, None);
    };
    let v = |at: usize, what: String| Some(Violation::new(rule, at as u64, what));
    match rule {
        rules::ID_1 | rules::ID_2 | rules::TID_1 | rules::TID_2 | rules::TID_3 => {
            let (id, pos, what) = binary::bad_id(&mut cx, rule)?;
            entries[i].0 = id.clone().into_bytes();
            end_ids[i] = Some(id.into_bytes());
            let (bytes, l) = write(c, &entries, &end_ids, None);
            draft(bytes, v(l[i].start_id + pos, format!("entry {i}: {what}")))
        }
        rules::TXT_12 => {
            let j = i + 1;
            let dup = (
                entries[i].0.clone(),
                pick::text_content(cx.rng, cx.small, c),
            );
            entries.insert(j, dup);
            end_ids.insert(j, Some(entries[i].0.clone()));
            let (bytes, l) = write(c, &entries, &end_ids, None);
            draft(
                bytes,
                v(l[j].start_id, format!("entry {j} repeats entry {i}'s ID")),
            )
        }
        rules::TXT_8 => {
            let other = if entries[i].0.starts_with(b"hip-") {
                b"openmp-nvptx64-nvidia-cuda--sm_75".to_vec()
            } else {
                b"hip-amdgcn-amd-amdhsa--gfx906".to_vec()
            };
            end_ids[i] = Some(other);
            let (bytes, l) = write(c, &entries, &end_ids, None);
            draft(
                bytes,
                v(
                    l[i].end_id,
                    format!("entry {i}'s END line names another ID"),
                ),
            )
        }
        rules::TXT_7 => {
            end_ids[n - 1] = None;
            let (bytes, l) = write(c, &entries, &end_ids, None);
            draft(
                bytes,
                v(l[n - 1].start + 1, format!("entry {}: no END line", n - 1)),
            )
        }
        rules::TXT_6 => {
            let (bytes, l) = write(c, &entries, &end_ids, Some(i));
            draft(
                bytes,
                v(
                    l[i].start_nl - 1,
                    format!("entry {i}: START line ends with CR LF"),
                ),
            )
        }
        rules::TXT_11 => {
            let (mut bytes, l) = write(c, &entries, &end_ids, None);
            let at = l[n - 1].after;
            bytes.extend_from_slice(b"trailing text\n");
            draft(bytes, v(at, "text after the last END line".into()))
        }
        rules::TXT_5 => {
            entries[i].0.clear();
            end_ids[i] = Some(Vec::new());
            let (bytes, l) = write(c, &entries, &end_ids, None);
            draft(bytes, v(l[i].start_id, format!("entry {i}'s ID is empty")))
        }
        rules::TXT_9 | rules::TXT_10 => {
            // A marker line inside entry i's content, after its text.
            let text_len = entries[i].1.len();
            let (marker, other) = match rule {
                rules::TXT_9 => (START, "hip-amdgcn-amd-amdhsa--gfx1030"),
                _ => (END, "openmp-nvptx64-nvidia-cuda--sm_75"),
            };
            if entries.iter().any(|(id, _)| id == other.as_bytes()) {
                return None;
            }
            let inner = format!("{c}{marker}{other}\nmore {c} text\n");
            entries[i].1.extend_from_slice(inner.as_bytes());
            let (bytes, l) = write(c, &entries, &end_ids, None);
            let at = l[i].start_nl + 1 + text_len;
            let what = match rule {
                rules::TXT_9 => "a START line",
                _ => "an END line",
            };
            draft(bytes, v(at, format!("entry {i}'s content holds {what}")))
        }
        rules::TXT_3 => {
            let (body, _) = write(c, &entries, &end_ids, None);
            let mut bytes = format!("{c} a comment before the bundle\n").into_bytes();
            bytes.extend_from_slice(&body);
            draft(bytes, v(0, "text before the first START line".into()))
        }
        _ => None,
    }
}
