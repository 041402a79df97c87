//! The generator's promise, one trial per (kind, rule): every seed gives a
//! file, the same seed the same file, a valid file passes the strict reader
//! (`validate`: the containers and the images in them, CO-2 … CO-5) and a
//! malformed one makes it report exactly the labelled rule at the
//! labelled offset. The generator checks its own drafts; these trials make
//! sure no seed falls through (a `NoFit` is a failure) and re-check the
//! label independently of the generator's own check.

use libtest_mimic::{Arguments, Failed, Trial};
use offload_kit::generate::{generate, Kind, Options};
use offload_kit::inspect;
use offload_kit::rules::Rule;

const SEEDS: u64 = 60;

fn trial(kind: Kind, rule: Option<Rule>) -> Result<(), Failed> {
    let opts = Options {
        malformed: rule,
        ..Options::default()
    };
    let mut distinct = std::collections::HashSet::new();
    for seed in 0..SEEDS {
        let g = generate(kind, seed, &opts).map_err(|e| format!("seed {seed}: {e}"))?;
        let again = generate(kind, seed, &opts).map_err(|e| format!("seed {seed}: {e}"))?;
        if g != again {
            return Err(format!("seed {seed}: two runs differ").into());
        }
        distinct.insert(g.bytes.clone());
        let res = inspect::validate(&g.bytes.as_slice(), Default::default());
        match (rule, &g.violation, res) {
            (None, None, Ok(_)) => {}
            (Some(r), Some(v), Err(es)) if v.rule == r => {
                if !es.iter().all(|e| e.rule_id() == Some(r.id)) {
                    return Err(format!("seed {seed}: other rules reported too: {es}").into());
                }
                // No violation before it: offloadkit_validate reports the
                // lowest offset.
                if es.iter().filter_map(|e| e.offset()).min() != Some(v.offset) {
                    return Err(format!(
                        "seed {seed}: {} not reported first at {}: {es}",
                        r.id, v.offset
                    )
                    .into());
                }
            }
            (_, v, res) => {
                return Err(
                    format!("seed {seed}: label {v:?}, strict reader {:?}", res.err()).into(),
                )
            }
        }
    }
    // A generator that ignores its seed would pass everything above.
    // BIN-3 has one form: the bare header with a zero count.
    let one_form = rule.is_some_and(|r| r.id == "BIN-3");
    if !one_form && distinct.len() < (SEEDS as usize) / 2 {
        return Err(format!("only {} distinct files from {SEEDS} seeds", distinct.len()).into());
    }
    Ok(())
}

/// `Options::release`: every valid file of every kind is one the release
/// reads (offload binary and CCOB versions, in the container and inside
/// `.hip_fatbin` sections and archive members); a kind it reads none of
/// is refused.
fn for_release(release: offload_kit::Release) -> Result<(), Failed> {
    let opts = Options {
        release: Some(release),
        ..Options::default()
    };
    for kind in Kind::ALL {
        for seed in 0..SEEDS {
            let g = match generate(kind, seed, &opts) {
                Ok(g) => g,
                Err(e) => match kind {
                    Kind::Ccob if release.ccob_versions_read().is_empty() => break,
                    Kind::OffloadBinary if release.offload_binary_versions_read().is_empty() => {
                        break
                    }
                    _ => return Err(format!("{kind} seed {seed}: {e}").into()),
                },
            };
            if let Err(es) = inspect::validate(&g.bytes.as_slice(), Default::default()) {
                return Err(format!("{kind} seed {seed}: invalid: {es}").into());
            }
            // Every CCOB header and offload binary header in the file.
            let b = &g.bytes;
            for at in memchr::memmem::find_iter(b, b"CCOB") {
                if let Some(v) = b.get(at + 4..at + 6) {
                    let v = u16::from_le_bytes([v[0], v[1]]);
                    if !release.ccob_versions_read().contains(&v) {
                        return Err(format!("{kind} seed {seed}: CCOB v{v} at {at}").into());
                    }
                }
            }
            for at in memchr::memmem::find_iter(b, &[0x10, 0xff, 0x10, 0xad]) {
                if let Some(v) = b.get(at + 4..at + 8) {
                    let v = u32::from_le_bytes(v.try_into().expect("4 bytes"));
                    if !release.offload_binary_versions_read().contains(&v) {
                        return Err(
                            format!("{kind} seed {seed}: offload binary v{v} at {at}").into()
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for release in offload_kit::Release::MODELLED {
        trials.push(Trial::test(format!("release/{release}"), move || {
            for_release(release)
        }));
    }
    for kind in Kind::ALL {
        trials.push(Trial::test(format!("{kind}/valid"), move || {
            trial(kind, None)
        }));
        for &rule in kind.malformable() {
            trials.push(Trial::test(format!("{kind}/{}", rule.id), move || {
                trial(kind, Some(rule))
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
