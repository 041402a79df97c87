//! `offload-kit generate`: write a corpus of generated containers (see
//! [`offload_kit_smith::generate`]), malformed ones with a JSON sidecar naming
//! the rule they break and where.

use offload_kit_format::rules::{self, Rule};
use offload_kit_format::Error;
use offload_kit_io::output;
use offload_kit_smith::generate::{generate, payloads_from_dir, Kind, Options, Payloads};
use std::path::Path;

/// The file extension of a kind's files.
fn extension(kind: Kind) -> &'static str {
    match kind {
        Kind::Binary => "bundle",
        Kind::Text => "txt",
        Kind::Object | Kind::Fatbin | Kind::Kpack => "o",
        Kind::Ccob => "ccob",
        Kind::OffloadBinary => "offbin",
        Kind::Archive => "a",
    }
}

/// Print every kind, with the rules it can break.
pub fn list_kinds() {
    for k in Kind::ALL {
        let rules: Vec<&str> = k.malformable().iter().map(|r| r.id).collect();
        outln!("{:<15} {}", k.name(), k.description());
        outln!("{:<15} --malformed: {}", "", rules.join(" "));
    }
}

/// What to generate.
pub struct Request<'a> {
    /// The kind.
    pub kind: &'a str,
    /// How many files.
    pub count: u64,
    /// The first file's seed; file `n` uses `seed + n`.
    pub seed: u64,
    /// The directory to write into (created if missing).
    pub out: &'a Path,
    /// Rule IDs to break, cycled through; `all` for every rule the kind can break.
    pub malformed: &'a [String],
    /// Entry IDs to draw from.
    pub target_ids: Vec<String>,
    /// The largest file.
    pub max_size: usize,
    /// A directory of the user's images to carry.
    pub payloads: Option<&'a Path>,
    /// Carry random bytes instead of images.
    pub random_payloads: bool,
    /// Make only what this release reads.
    pub release: Option<offload_kit_llvm::Release>,
    /// How much of the user's images may be held (CLI-6).
    pub budget: offload_kit_llvm::budget::Budget,
}

/// Run `generate`; 0 on success.
pub fn run(req: &Request<'_>) -> Result<i32, Vec<Error>> {
    let kind = Kind::from_name(req.kind).ok_or_else(|| {
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        vec![Error::other(format!(
            "unknown kind '{}'; kinds: {}",
            req.kind,
            names.join(", ")
        ))]
    })?;
    let mut cycle: Vec<Rule> = Vec::new();
    for m in req.malformed {
        if m == "all" {
            cycle.extend_from_slice(kind.malformable());
            continue;
        }
        let r = rules::by_id(m).ok_or_else(|| vec![Error::other(format!("unknown rule '{m}'"))])?;
        if !kind.malformable().contains(r) {
            let can: Vec<&str> = kind.malformable().iter().map(|r| r.id).collect();
            return Err(vec![Error::other(format!(
                "kind {kind} cannot break {m}; it can break: {}",
                can.join(" ")
            ))]);
        }
        cycle.push(*r);
    }
    let payloads = match (req.payloads, req.random_payloads) {
        (Some(dir), _) => Payloads::Given(
            payloads_from_dir(dir, req.max_size, req.budget.bytes())
                .map_err(|e| vec![Error::other(e.to_string())])?,
        ),
        (None, true) => Payloads::Random,
        (None, false) => Payloads::Loadable,
    };
    // One set of options for every file: the payloads are held once.
    let mut opts = Options {
        target_ids: req.target_ids.clone(),
        max_size: req.max_size,
        malformed: None,
        payloads,
        release: req.release,
    };
    // Refuse an unusable pool before anything is written.
    offload_kit_smith::generate::check_options(&opts)
        .map_err(|e| vec![Error::other(e.to_string())])?;
    // Held to the end: a run that fails takes back the directories it made.
    let _out_dir = crate::create_out_dir(req.out)?;
    let mut malformed = 0u64;
    for n in 0..req.count {
        let seed = req.seed.wrapping_add(n);
        let rule = (!cycle.is_empty()).then(|| cycle[(n % cycle.len() as u64) as usize]);
        opts.malformed = rule;
        let g = generate(kind, seed, &opts).map_err(|e| vec![Error::other(e.to_string())])?;
        let stem = match rule {
            Some(r) => format!("{kind}-{}-{seed:016x}", r.id),
            None => format!("{kind}-{seed:016x}"),
        };
        let file = format!("{stem}.{}", extension(kind));
        output::write_in_dir(req.out, &file, &g.bytes).map_err(|e| vec![e])?;
        // A kpack split's archives, named as its host's search path finds them.
        for (name, bytes) in &g.companions {
            output::write_in_dir(req.out, name, bytes).map_err(|e| vec![e])?;
        }
        // Every file gets a sidecar: valid ones say so (rule null), and
        // the seed is given as the file name spells it too.
        let (rule_id, offset, description) = match &g.violation {
            Some(v) => {
                malformed += 1;
                (
                    Some(v.rule.id),
                    Some(v.offset),
                    format!("{}; {}", v.description, g.description),
                )
            }
            None => (None, None, g.description.clone()),
        };
        let sidecar = serde_json::json!({
            "file": file,
            "valid": rule_id.is_none(),
            "rule": rule_id,
            "offset": offset,
            "kind": kind.name(),
            "seed": seed,
            "seed_hex": format!("{seed:016x}"),
            "llvm_version": req.release.map(|r| r.to_string()),
            "description": description,
        });
        let text = serde_json::to_string_pretty(&sidecar).expect("serialisable") + "\n";
        output::write_in_dir(req.out, &format!("{file}.json"), text.as_bytes())
            .map_err(|e| vec![e])?;
    }
    outln!(
        "wrote {} {kind} files ({malformed} malformed), each with a .json sidecar, to {}",
        req.count,
        req.out.display()
    );
    Ok(0)
}
