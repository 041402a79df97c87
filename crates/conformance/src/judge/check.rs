//! Comparing an observation with an expectation, adjusted for the
//! adapter's release: rule failures, output facts, listings (and their
//! order), written IDs, compatibility, expected bundles, compressed
//! bundles and ELF sections.

use super::observe::{show, Facts, Observation};
use super::Ctx;
use crate::adapter::ListOrder;
use crate::bundle::{binary, ccob, object, text};
use crate::case::{
    BundleExpect, CompressedExpect, ElfFact, Expect, Fact, Located, LookupExpect, Op, PayloadSpec,
    SectionFact,
};
use crate::codec::{decode_base64, decode_hex, encode_hex};
use crate::host::elf::{self, Elf};
use crate::recipe::{Data, IdSpec};
use sha2::{Digest, Sha256};

/// Compare an observation with an expectation adjusted for the adapter's
/// release; `Err` holds a short diff.
pub(super) fn check(ctx: &Ctx<'_>, e: &Expect, obs: &Observation) -> Result<(), String> {
    if let Some(rule) = &e.fail {
        return check_failure(ctx, e, rule, obs);
    }
    let facts = match obs {
        Observation::Success(f) => f,
        other => return Err(format!("{}; expected success", other.summary())),
    };
    if let Some(want) = &e.lookup {
        return check_lookup(want, facts);
    }
    if let Some(want) = &e.kpack_lookup {
        let got = facts.kpack_answers.clone().unwrap_or_default();
        let want: Vec<(String, String)> = (want.iter())
            .map(|w| (w.request.clone(), w.answer.clone()))
            .collect();
        return match got == want {
            true => Ok(()),
            false => Err(format!("answered {got:?}; expected {want:?}")),
        };
    }
    if let Some(want) = &e.locate {
        return check_locate(ctx, want, facts);
    }
    if let Some(c) = e.compatible {
        return compare_value(&facts.compatible, &c, "no compatibility result", |got| {
            format!("compatible: {got}; expected {c}")
        });
    }
    if let Some(id) = &e.id {
        let want = id.resolve_text(ctx.release)?;
        return compare_value(&facts.id, &want, "no written ID", |got| {
            format!("written ID '{got}'; expected '{want}'")
        });
    }
    if let Some(list) = &e.list {
        let want: Vec<String> = list
            .iter()
            .map(|i| i.resolve_text(ctx.release))
            .collect::<Result<_, _>>()?;
        let got = facts.listing.clone().unwrap_or_default();
        return compare_listing(ctx, want, got);
    }
    if let Some(facts_want) = &e.outputs {
        if let (Some(got), true) = (&facts.listing, ctx.op == Op::Decompress) {
            // The implementation lists the decompressed bundle: compare
            // with the IDs of the bundle the expectation names.
            let want = match facts_want.first() {
                Some(f) => fact_bytes(ctx, f)?.ok_or(
                    "the expected output is not given as bytes; a listing cannot be compared",
                )?,
                None => return Err("decompress expects one output".into()),
            };
            let ids = bundle_ids_in(&ctx.case.args.file_type, &want)?;
            return compare_listing(ctx, ids, got.clone());
        }
        if facts_want.len() != facts.outputs.len() {
            return Err(format!(
                "{} outputs expected, the case declares {}",
                facts_want.len(),
                facts.outputs.len()
            ));
        }
        for (i, (f, got)) in facts_want.iter().zip(&facts.outputs).enumerate() {
            check_fact(ctx, f, got.as_deref()).map_err(|m| format!("output {i}: {m}"))?;
        }
        return Ok(());
    }
    if let Some(c) = &e.compressed {
        let got = facts
            .outputs
            .first()
            .cloned()
            .flatten()
            .ok_or("no compressed bundle was written")?;
        return check_compressed(ctx, c, &got);
    }
    if let Some(b) = &e.bundle {
        let want = expected_bundle(ctx, b)?;
        let got = facts
            .outputs
            .first()
            .cloned()
            .flatten()
            .ok_or("no output bundle was written")?;
        return if got == want {
            Ok(())
        } else if text::comment(&ctx.case.args.file_type).is_some() {
            let at = want
                .iter()
                .zip(&got)
                .position(|(a, b)| a != b)
                .unwrap_or(want.len().min(got.len()));
            Err(format!(
                "text bundle differs from byte 0x{at:x} ({} B, expected {} B): {} expected {}",
                got.len(),
                want.len(),
                show(&got[at..]),
                show(&want[at..])
            ))
        } else {
            Err(bundle_diff(&want, &got))
        };
    }
    Err("the expectation is empty".into())
}

/// The expectation that the input is refused under `rule` (`*`: any).
fn check_failure(ctx: &Ctx<'_>, e: &Expect, rule: &str, obs: &Observation) -> Result<(), String> {
    match obs {
        Observation::Failure {
            rules,
            message,
            outputs_left,
        } => {
            let anything = rule == "*" || ctx.adapter.failures_name_no_rule;
            if !anything && !rules.iter().any(|r| r == rule) {
                if rules.is_empty() {
                    return Err(format!(
                        "failed without naming a rule ('{message}'); expected a {rule} failure"
                    ));
                }
                return Err(format!(
                    "failed under [{}] ('{message}'); expected {rule}",
                    rules.join(", ")
                ));
            }
            if e.no_outputs && !outputs_left.is_empty() {
                return Err(format!(
                    "failed as expected but left output(s) {outputs_left:?} behind (CLI-5)"
                ));
            }
            Ok(())
        }
        other => Err(format!(
            "{}; expected a {} failure",
            other.summary(),
            if rule == "*" { "" } else { rule }
        )),
    }
}

/// Code object lookups: each request answered with one of the candidates
/// the spec allows.
fn check_lookup(want: &[LookupExpect], facts: &Facts) -> Result<(), String> {
    let got = facts.answers.clone().unwrap_or_default();
    for (i, w) in want.iter().enumerate() {
        let Some((r, o, s)) = got.get(i) else {
            return Err(format!("no answer for request {i} '{}'", w.request));
        };
        if r != &w.request {
            return Err(format!("answer {i} is for '{r}'; expected '{}'", w.request));
        }
        let ok = if w.candidates.is_empty() {
            *s == 0
        } else {
            w.candidates.contains(&(*o, *s))
        };
        if !ok {
            let c: Vec<String> = w
                .candidates
                .iter()
                .map(|(o, s)| format!("@{o}+{s}"))
                .collect();
            return Err(format!(
                "'{r}' answered @{o}+{s}; the spec allows {}",
                if c.is_empty() {
                    "none".to_string()
                } else {
                    c.join(" or ")
                }
            ));
        }
    }
    Ok(())
}

/// The code objects an implementation finds: the IDs, and offsets and
/// sizes where it prints them.
fn check_locate(ctx: &Ctx<'_>, want: &[Located], facts: &Facts) -> Result<(), String> {
    // What the implementation reports: offsets and sizes only if it
    // prints them.
    let bytes = ctx.adapter.locates_bytes();
    let mut want: Vec<crate::adapter::Found> = want
        .iter()
        .map(|l| crate::adapter::Found {
            id: l.id.clone(),
            at: bytes.then_some((l.offset, l.size)),
        })
        .collect();
    let mut got = facts.located.clone().unwrap_or_default();
    want.sort();
    got.sort();
    if want == got {
        Ok(())
    } else {
        let show = |v: &[crate::adapter::Found]| {
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        Err(format!(
            "found [{}]; expected [{}]",
            show(&got),
            show(&want)
        ))
    }
}

/// A single-valued fact (`got`: the value, the implementation's error, or
/// nothing) against `want`: `differs` describes a different value,
/// `missing` the absent one.
fn compare_value<T: PartialEq>(
    got: &Option<Result<T, String>>,
    want: &T,
    missing: &str,
    differs: impl FnOnce(&T) -> String,
) -> Result<(), String> {
    match got {
        Some(Ok(got)) if got == want => Ok(()),
        Some(Ok(got)) => Err(differs(got)),
        Some(Err(m)) => Err(m.clone()),
        None => Err(missing.into()),
    }
}

fn compare_listing(
    ctx: &Ctx<'_>,
    want_header: Vec<String>,
    got: Vec<String>,
) -> Result<(), String> {
    let mut ws = want_header.clone();
    let mut gs = got.clone();
    ws.sort();
    gs.sort();
    if ws != gs {
        return Err(format!(
            "listing [{}]; expected [{}]",
            got.join(", "),
            want_header.join(", ")
        ));
    }
    // Text bundles and object files have one natural order, which every
    // release uses (TXT-13, OBJ-9): only binary bundles are listed in
    // StringMap order.
    // A listing that repeats an ID (LLVM main's, BIN-10) is several
    // StringMap walks in a row: its lines are compared as a multiset.
    let repeats = ws.windows(2).any(|w| w[0] == w[1]);
    let order = match ctx.adapter.list_order {
        ListOrder::Stringmap if repeats => ListOrder::Set,
        ListOrder::Stringmap if file_ordered(ctx) => ListOrder::Header,
        o => o,
    };
    let (want, how) = match (order, ctx.release) {
        (ListOrder::Set, _) | (ListOrder::Stringmap, None) => return Ok(()),
        (ListOrder::Header, _) => (want_header.clone(), "header order".to_string()),
        (ListOrder::Stringmap, Some(r)) => {
            let keys: Vec<&str> = want_header.iter().map(String::as_str).collect();
            (
                r.stringmap_order(&keys)
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
                format!("LLVM {r} StringMap order"),
            )
        }
    };
    if want == got {
        Ok(())
    } else {
        Err(format!(
            "listing order [{}]; expected [{}] ({how})",
            got.join(", "),
            want.join(", ")
        ))
    }
}

fn check_fact(ctx: &Ctx<'_>, f: &Fact, got: Option<&[u8]>) -> Result<(), String> {
    if let Fact::Absent(_) = f {
        return match got {
            None => Ok(()),
            Some(b) => Err(format!("exists with {}; expected no file", show(b))),
        };
    }
    let Some(got) = got else {
        return Err("not written".into());
    };
    let want: Vec<u8> = match fact_bytes(ctx, f)? {
        Some(w) => w,
        None => match f {
            Fact::Sha256(h) => {
                let d = encode_hex(&Sha256::digest(got));
                return if d.eq_ignore_ascii_case(h) {
                    Ok(())
                } else {
                    Err(format!("sha256 {d}; expected {h} ({})", show(got)))
                };
            }
            Fact::Size(n) => {
                return if got.len() as u64 == *n {
                    Ok(())
                } else {
                    Err(format!("{} bytes; expected {n}", got.len()))
                }
            }
            Fact::Elf(e) => return check_elf(ctx, e, got),
            _ => unreachable!("fact_bytes names every other fact; Absent is handled above"),
        },
    };
    if got == want.as_slice() {
        Ok(())
    } else {
        Err(format!("{}; expected {}", show(got), show(&want)))
    }
}

/// The bytes a fact names exactly, if it does.
fn fact_bytes(ctx: &Ctx<'_>, f: &Fact) -> Result<Option<Vec<u8>>, String> {
    Ok(Some(match f {
        Fact::Utf8(s) => s.as_bytes().to_vec(),
        Fact::Hex(h) => decode_hex(h)?,
        Fact::Base64(b) => decode_base64(b)?,
        Fact::Zeros(n) => Data::Zeros(*n).bytes()?,
        Fact::Input(name) => input_bytes(ctx, name)?,
        _ => return Ok(None),
    }))
}

/// The bytes of the case's input `name`.
fn input_bytes(ctx: &Ctx<'_>, name: &str) -> Result<Vec<u8>, String> {
    ctx.inputs
        .get(name)
        .cloned()
        .flatten()
        .ok_or_else(|| format!("the case has no input '{name}'"))
}

/// The bytes of an expected payload.
fn payload_bytes(ctx: &Ctx<'_>, p: &PayloadSpec) -> Result<Vec<u8>, String> {
    Ok(match p {
        PayloadSpec::Utf8(s) => s.as_bytes().to_vec(),
        PayloadSpec::Hex(h) => decode_hex(h)?,
        PayloadSpec::Input(n) => input_bytes(ctx, n)?,
    })
}

/// The entry IDs of a bundle of `file_type` (text or binary), in file order.
fn bundle_ids_in(file_type: &str, data: &[u8]) -> Result<Vec<String>, String> {
    if let Some(c) = text::comment(file_type) {
        let t = text::parse_strict(&data, 0, c).map_err(|es| {
            format!(
                "the expected output is not a text bundle: {}",
                es.first().map(ToString::to_string).unwrap_or_default()
            )
        })?;
        return Ok(t.entries.iter().map(|e| e.id_str().into_owned()).collect());
    }
    match binary::scan(data, 0) {
        Some(s) => Ok(s.entries.iter().map(|e| e.id_str().into_owned()).collect()),
        None => Err("the expected output is not a binary bundle".into()),
    }
}

/// Whether a listing of this case's input comes in file order for every
/// release: a text type, or an object file read with `-type=o`/`a`.
fn file_ordered(ctx: &Ctx<'_>) -> bool {
    let t = ctx.case.args.file_type.as_str();
    if text::comment(t).is_some() {
        return true;
    }
    if t == "o" || t == "a" {
        return ctx.case.args.inputs.first().is_some_and(|n| {
            ctx.inputs
                .get(n)
                .and_then(Option::as_ref)
                .is_some_and(|b| object::is_object_file(b))
        });
    }
    false
}
/// A bundle of `file_type` (text or binary) holding `ids` with `payloads`.
pub fn build_bundle(
    file_type: &str,
    ids: &[Vec<u8>],
    payloads: &[Vec<u8>],
    align: u64,
) -> Result<Vec<u8>, String> {
    let pairs: Vec<(&[u8], &[u8])> = ids
        .iter()
        .zip(payloads)
        .map(|(i, p)| (i.as_slice(), p.as_slice()))
        .collect();
    match text::comment(file_type) {
        Some(c) => Ok(text::write_to_vec(&pairs, c)),
        None => binary::write_to_vec(&pairs, align).map_err(|e| format!("expected bundle: {e}")),
    }
}

fn check_compressed(ctx: &Ctx<'_>, c: &CompressedExpect, got: &[u8]) -> Result<(), String> {
    if !ccob::is_ccob(got) {
        return Err(format!("not a compressed bundle: {}", show(got)));
    }
    let h = ccob::parse_header(got, 0).map_err(|e| format!("compressed bundle: {e}"))?;
    if let Some(v) = c.version {
        if h.version != v {
            return Err(format!(
                "compressed bundle version {}; expected {v}",
                h.version
            ));
        }
    }
    if let Some(m) = &c.method {
        let have = match h.method() {
            Some(ccob::Method::Zlib) => "zlib",
            Some(ccob::Method::Zstd) => "zstd",
            None => "unknown",
        };
        if have != m {
            return Err(format!("compression method {have}; expected {m}"));
        }
    }
    let d = ccob::decompress_strict(got, 0)
        .map_err(|e| format!("the compressed bundle does not verify: {e}"))?;
    let want = match (&c.content, &c.bundle) {
        (Some(data), _) => data.bytes()?,
        (None, Some(b)) => expected_bundle(ctx, b)?,
        (None, None) => expected_bundle(ctx, &BundleExpect::default())?,
    };
    if d.data == want {
        Ok(())
    } else {
        Err(format!(
            "decompresses to {}; expected {}",
            show(&d.data),
            show(&want)
        ))
    }
}

fn check_elf(ctx: &Ctx<'_>, f: &ElfFact, got: &[u8]) -> Result<(), String> {
    let e = Elf::parse(got).map_err(|e| format!("not an ELF file ({e}): {}", show(got)))?;
    let names: Vec<String> = e
        .sections
        .iter()
        .skip(1)
        .map(|s| s.name_str().into_owned())
        .collect();
    let mut want = Vec::new();
    for s in &f.sections {
        want.push(match s {
            SectionFact::Name(n) => n.clone(),
            SectionFact::Bundle(b) => format!(
                "{}{}",
                object::SECTION_PREFIX,
                b.bundle.resolve_text(ctx.release)?
            ),
        });
    }
    if names != want {
        return Err(format!(
            "ELF sections [{}]; expected [{}]",
            names.join(", "),
            want.join(", ")
        ));
    }
    for (s, sec) in f.sections.iter().zip(e.sections.iter().skip(1)) {
        let SectionFact::Bundle(b) = s else {
            continue;
        };
        let name = sec.name_str();
        if sec.sh_type != elf::SHT_PROGBITS || sec.flags != elf::SHF_EXCLUDE || sec.align != 1 {
            return Err(format!(
                "section {name}: type {}, flags 0x{:x}, alignment {}; expected SHT_PROGBITS, SHF_EXCLUDE, 1",
                sec.sh_type, sec.flags, sec.align
            ));
        }
        if let Some(p) = &b.payload {
            let want = payload_bytes(ctx, p)?;
            let have = sec
                .data(got)
                .ok_or_else(|| format!("section {name}: contents outside the file"))?;
            if have != want.as_slice() {
                return Err(format!(
                    "section {name} holds {}; expected {}",
                    show(have),
                    show(&want)
                ));
            }
        }
    }
    Ok(())
}

fn expected_bundle(ctx: &Ctx<'_>, b: &BundleExpect) -> Result<Vec<u8>, String> {
    let args = &ctx.case.args;
    let align = b.align.or(args.bundle_align).unwrap_or(1);
    let entries: Vec<(IdSpec, PayloadSpec)> = match &b.entries {
        Some(e) => e
            .iter()
            .map(|e| (e.id.clone(), e.payload.clone()))
            .collect(),
        None => args
            .targets
            .iter()
            .zip(&args.inputs)
            .map(|(t, i)| {
                (
                    IdSpec::Written { written: t.clone() },
                    PayloadSpec::Input(i.clone()),
                )
            })
            .collect(),
    };
    let mut ids = Vec::new();
    let mut payloads = Vec::new();
    for (id, p) in entries {
        ids.push(id.resolve(ctx.release)?);
        payloads.push(payload_bytes(ctx, &p)?);
    }
    build_bundle(&args.file_type, &ids, &payloads, align)
}

fn bundle_ids(b: &[u8]) -> String {
    match binary::scan(b, 0) {
        Some(s) => {
            let ids: Vec<String> = s
                .entries
                .iter()
                .map(|e| format!("{}@0x{:x}+{}", e.id_str(), e.offset, e.size))
                .collect();
            format!("[{}]", ids.join(", "))
        }
        None => "not a bundle".into(),
    }
}

fn bundle_diff(want: &[u8], got: &[u8]) -> String {
    let first = want
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(got.len()));
    format!(
        "bundle differs from byte 0x{first:x} ({} B, expected {} B): entries {} expected {}",
        got.len(),
        want.len(),
        bundle_ids(got),
        bundle_ids(want)
    )
}
