//! `offload-kit generate`: write a corpus of generated containers (see
//! [`offload_kit_smith::generate`]), malformed ones with a JSON sidecar naming
//! the rule they break and where.

use crate::Settings;
use offload_kit_format::rules::{self, Rule};
use offload_kit_format::Error;
use offload_kit_io::output;
use offload_kit_llvm::Release;
use offload_kit_smith::generate::{generate, payloads_from_dir, Kind, Options, Payloads};
use std::path::{Path, PathBuf};

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
fn list_kinds() {
    for k in Kind::ALL {
        let rules: Vec<&str> = k.malformable().iter().map(|r| r.id).collect();
        outln!("{:<15} {}", k.name(), k.description());
        outln!("{:<15} --malformed: {}", "", rules.join(" "));
    }
}

/// `offload-kit generate`'s options.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The kind of file: binary, text, object, fatbin, ccob, offload-binary, archive or kpack
    /// (--list-kinds says what each is and which rules it can break)
    #[arg(long, required_unless_present = "list_kinds")]
    pub(crate) kind: Option<String>,
    /// How many files
    #[arg(long, default_value_t = 100)]
    pub(crate) count: u64,
    /// Seed of the first file; file n uses seed + n
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// Directory to write into
    #[arg(long, required_unless_present = "list_kinds")]
    pub(crate) out: Option<PathBuf>,
    /// Break this rule in every file (repeatable: cycled through; `all`: every rule the kind can break)
    #[arg(long)]
    pub(crate) malformed: Vec<String>,
    /// Comma-separated entry IDs to draw from (default: a built-in pool)
    #[arg(long = "target-ids", value_delimiter = ',')]
    pub(crate) target_ids: Vec<String>,
    /// Largest file in bytes
    #[arg(long = "max-size", default_value_t = 1 << 20)]
    pub(crate) max_size: usize,
    /// Carry these images (a directory of .hsaco, cubins, .so, SPIR-V): IDs are drawn from their targets (default: a minimal image each loader accepts for each entry's target)
    #[arg(long, conflicts_with = "random_payloads")]
    pub(crate) payloads: Option<PathBuf>,
    /// Carry random bytes instead of images (what generate wrote before images)
    #[arg(long = "random-payloads")]
    pub(crate) random_payloads: bool,
    /// Make only what this LLVM release's readers take: offload binaries of version 1 for
    /// 15-22 (2 and 3 are main's), compressed bundles of the versions it reads (none before
    /// 19); default: every version the spec has
    #[arg(long = "llvm-version")]
    pub(crate) llvm: Option<Release>,
    /// Print the kinds and the rules each can break
    #[arg(long = "list-kinds")]
    pub(crate) list_kinds: bool,
}

/// Run it: the exit status, or the errors that make it exit 1.
pub(crate) fn run(a: Args, settings: Settings) -> Result<i32, Vec<Error>> {
    if a.list_kinds {
        list_kinds();
        return Ok(0);
    }
    let req = Request {
        kind: a.kind.as_deref().unwrap_or_default(),
        count: a.count,
        seed: a.seed,
        out: a.out.as_deref().unwrap_or(Path::new(".")),
        malformed: &a.malformed,
        target_ids: a.target_ids.clone(),
        max_size: a.max_size,
        payloads: a.payloads.as_deref(),
        random_payloads: a.random_payloads,
        release: a.llvm,
        budget: settings.budget,
    };
    generate_files(&req)
}

/// What to generate: the options, defaults filled in.
struct Request<'a> {
    kind: &'a str,
    count: u64,
    seed: u64,
    out: &'a Path,
    malformed: &'a [String],
    target_ids: Vec<String>,
    max_size: usize,
    payloads: Option<&'a Path>,
    random_payloads: bool,
    release: Option<offload_kit_llvm::Release>,
    budget: offload_kit_llvm::budget::Budget,
}

/// Write the files `req` asks for; 0 on success.
fn generate_files(req: &Request<'_>) -> Result<i32, Vec<Error>> {
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
