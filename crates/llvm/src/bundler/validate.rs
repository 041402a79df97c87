//! The command-line checks ([`Job::validate`]), one step per group of
//! checks, run in the order the release makes them.

use super::{BundlerError, FileType, Job, Validated};
use crate::error::Error;
use crate::id::target_id;
use crate::id::triple::Triple;
use crate::profile::target_id::{format_only, llvm_parse_target_id};
use crate::profile::Release;
use crate::rules;
use std::collections::{BTreeMap, BTreeSet};

/// What [`Job::read_targets`] established about `-targets`.
struct Targets {
    /// Targets as the release writes them.
    written: Vec<String>,
    /// Number of host targets.
    host_num: usize,
    /// Index of the (last) host target.
    host_index: Option<usize>,
    /// Whether every target is of kind `hip` or `hipv4`.
    hip_only: bool,
}

impl Job {
    /// The checks of a bundling job whose payloads are in memory (no
    /// `-input`/`-output` files to count): at least one target, then the
    /// targets, their conflicts, the host count, the file type and the
    /// written IDs, in the order [`Job::validate`] makes them.
    pub fn validate_in_memory(&self) -> Result<Validated, BundlerError> {
        if self.targets.is_empty() {
            return Err(BundlerError::llvm(
                "for the --targets option: must be specified at least once!",
            ));
        }
        if self.file_type == "a" {
            return Err(BundlerError::llvm(
                "Archive files are only supported for unbundling",
            ));
        }
        self.validated_targets()
    }

    /// The command-line checks, in the order the release makes them.
    pub fn validate(&self) -> Result<Validated, BundlerError> {
        if self.unbundle && self.list {
            return Err(BundlerError::llvm(
                "-unbundle and -list cannot be used together",
            ));
        }
        if self.list {
            return self.validate_list();
        }
        self.check_required()?;
        self.check_input_archive_flag()?;
        self.check_mode()?;
        self.validated_targets()
    }

    /// The checks of `-targets` and `-type`, after those of the files.
    fn validated_targets(&self) -> Result<Validated, BundlerError> {
        let t = self.read_targets()?;
        self.check_conflicts(&t.written)?;
        self.check_host_count(&t)?;
        let ft = self.parse_file_type()?;
        if !self.unbundle {
            self.check_written_unique(&t.written)?;
        }
        Ok(Validated {
            targets: t.written,
            host_index: t.host_index,
            file_type: ft,
        })
    }

    /// The detail of a count mismatch (CLI-1, CLI-2).
    fn counts(&self, rule: crate::rules::Rule) -> Error {
        Error::rule(
            rule,
            format!(
                "{} inputs, {} outputs, {} targets",
                self.inputs.len(),
                self.outputs.len(),
                self.targets.len()
            ),
        )
    }

    /// `-type` as the release parses it, or its error.
    fn parse_file_type(&self) -> Result<FileType, BundlerError> {
        FileType::parse(&self.file_type, self.release).ok_or_else(|| {
            BundlerError::llvm(format!("'{}': invalid file type specified", self.file_type))
        })
    }

    /// `-list`: one input, no outputs, no targets, a known type.
    fn validate_list(&self) -> Result<Validated, BundlerError> {
        if self.inputs.len() != 1 {
            return Err(BundlerError::with(
                "only one input file supported for -list",
                Error::rule(rules::CLI_2, format!("{} inputs given", self.inputs.len())),
            ));
        }
        if !self.outputs.is_empty() {
            return Err(BundlerError::llvm("-outputs option is invalid for -list"));
        }
        if !self.targets.is_empty() {
            return Err(BundlerError::llvm("-targets option is invalid for -list"));
        }
        let ft = self.parse_file_type()?;
        Ok(Validated {
            targets: vec![],
            host_index: None,
            file_type: ft,
        })
    }

    /// Bundling and unbundling need `-outputs` and `-targets`.
    fn check_required(&self) -> Result<(), BundlerError> {
        if self.outputs.is_empty() {
            return Err(BundlerError::llvm(
                if self.release.quirks().bundler_plural_io_only {
                    "for the --outputs option: must be specified at least once!"
                } else {
                    "no output file specified!"
                },
            ));
        }
        if self.targets.is_empty() {
            return Err(BundlerError::llvm(
                "for the --targets option: must be specified at least once!",
            ));
        }
        Ok(())
    }

    /// `-check-input-archive` (19, 22) only when unbundling an archive.
    fn check_input_archive_flag(&self) -> Result<(), BundlerError> {
        if self.release.quirks().checks_input_archives && self.check_input_archive {
            if !self.unbundle {
                return Err(BundlerError::llvm(
                    "-check-input-archive cannot be used while bundling",
                ));
            }
            if self.file_type != "a" {
                return Err(BundlerError::llvm(
                    "-check-input-archive can only be used for unbundling archives (-type=a)",
                ));
            }
        }
        Ok(())
    }

    /// The checks of the mode: the counts of inputs, outputs and targets
    /// (CLI-1, CLI-2), and archives only for unbundling. Each mode takes
    /// one file on one side (the input when unbundling, the output when
    /// bundling) and one file per target on the other.
    fn check_mode(&self) -> Result<(), BundlerError> {
        if !self.unbundle && self.file_type == "a" {
            return Err(BundlerError::llvm(
                "Archive files are only supported for unbundling",
            ));
        }
        let inputs = (&self.inputs, "input");
        let outputs = (&self.outputs, "output");
        let (rule, mode, (one, one_side), (per_target, per_target_side)) = if self.unbundle {
            (rules::CLI_2, "unbundling", inputs, outputs)
        } else {
            (rules::CLI_1, "bundling", outputs, inputs)
        };
        if one.len() != 1 {
            return Err(BundlerError::with(
                format!("only one {one_side} file supported in {mode} mode"),
                self.counts(rule),
            ));
        }
        if per_target.len() != self.targets.len() {
            return Err(BundlerError::with(
                format!(
                    "number of {per_target_side} files and targets should match in {mode} mode"
                ),
                self.counts(rule),
            ));
        }
        Ok(())
    }

    /// Each target in turn: not given twice (CLI-3), valid for the release
    /// (ID-1 … ID-3), and how the release writes it.
    fn read_targets(&self) -> Result<Targets, BundlerError> {
        let r = self.release;
        let mut seen = BTreeSet::new();
        let mut t = Targets {
            written: Vec::new(),
            host_num: 0,
            host_index: None,
            hip_only: true,
        };
        for (i, target) in self.targets.iter().enumerate() {
            if !seen.insert(target.as_str()) {
                return Err(BundlerError::with(
                    "Duplicate targets are not allowed",
                    Error::rule(rules::CLI_3, format!("target '{target}' is given twice")),
                ));
            }
            let info = r.validate_target(target)?;
            if info.kind == "host" {
                t.host_num += 1;
                t.host_index = Some(i);
            }
            if info.kind != "hip" && info.kind != "hipv4" {
                t.hip_only = false;
            }
            t.written.push(r.written_id(target)?);
        }
        Ok(t)
    }

    /// 16 and later: no two targets with conflicting target IDs (COMPOSE-1).
    fn check_conflicts(&self, written: &[String]) -> Result<(), BundlerError> {
        let r = self.release;
        if r.quirks().checks_conflicting_targets {
            match conflicting_targets(r, &self.targets, written) {
                None => {}
                Some(TargetConflict::Pair(a, b)) => {
                    return Err(BundlerError::with(
                        format!("Cannot bundle inputs with conflicting targets: '{a}' and '{b}'"),
                        Error::rule(
                            rules::COMPOSE_1,
                            "one target leaves a feature Any that another sets",
                        ),
                    ));
                }
                Some(TargetConflict::Malformed(id)) => {
                    let rule = target_id::parse(&id).err().map_or(rules::TID_1, |e| e.rule);
                    return Err(BundlerError::with(
                        format!(
                            "target ID '{id}' fails LLVM's format check: LLVM {r} dereferences the empty result in getConflictTargetIDCombination here (undefined behaviour; Debian's build dies of SIGSEGV)"
                        ),
                        Error::rule(rule, format!("target ID '{id}'")),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Unbundling: at most one host target; bundling: exactly one, unless
    /// every target is HIP (CLI-3).
    fn check_host_count(&self, t: &Targets) -> Result<(), BundlerError> {
        let host_num = t.host_num;
        if (self.unbundle && host_num > 1) || (!self.unbundle && host_num != 1 && !t.hip_only) {
            return Err(BundlerError::with(
                format!("expecting exactly one host target but got {host_num}"),
                Error::rule(rules::CLI_3, "exactly one host target is needed"),
            ));
        }
        Ok(())
    }

    /// Bundling: no two targets written as the same ID (BIN-8).
    fn check_written_unique(&self, written: &[String]) -> Result<(), BundlerError> {
        let r = self.release;
        let uniq: BTreeSet<&String> = written.iter().collect();
        if uniq.len() != written.len() {
            return Err(BundlerError::with(
                "Duplicate targets are not allowed",
                Error::rule(
                    rules::BIN_8,
                    format!(
                        "two targets are written as the same ID under LLVM {r} ({written:?}); LLVM {r} writes a corrupt bundle here"
                    ),
                ),
            ));
        }
        Ok(())
    }
}

/// What the release's conflict check finds.
enum TargetConflict {
    /// Two targets (`kind-triple-targetID`) that conflict.
    Pair(String, String),
    /// A target ID LLVM's format-only parser rejects: the check dereferences
    /// the empty result (undefined behaviour).
    Malformed(String),
}

/// The targets' IDs grouped as the conflict check groups them: by
/// `kind-triple` (with the triple), each group's target IDs sorted, empty
/// ones left out. 19 and later read the IDs they write, the others the
/// targets as given.
fn target_groups(
    r: Release,
    raw: &[String],
    written: &[String],
) -> BTreeMap<String, (Triple, BTreeSet<String>)> {
    let mut groups: BTreeMap<String, (Triple, BTreeSet<String>)> = BTreeMap::new();
    for (t, w) in raw.iter().zip(written) {
        let Some(info) = r.target_info(if r.quirks().conflicts_of_written_ids {
            w
        } else {
            t
        }) else {
            continue;
        };
        if info.target_id.is_empty() {
            continue;
        }
        let key = format!("{}-{}", info.kind, info.triple.as_str());
        groups
            .entry(key)
            .or_insert_with(|| (info.triple.clone(), BTreeSet::new()))
            .1
            .insert(info.target_id.clone());
    }
    groups
}

/// The release's conflict check (`getConflictTargetIDCombination` per
/// `kind-triple`): the first target ID seen per processor (in sorted order)
/// is kept; a later one conflicts when it sets a feature the first leaves Any.
fn conflicting_targets(r: Release, raw: &[String], written: &[String]) -> Option<TargetConflict> {
    if r.quirks().main_target_conflicts {
        return main_conflict(raw, written);
    }
    for (key, (_, ids)) in target_groups(r, raw, written) {
        let mut first: BTreeMap<String, target_id::TargetId> = BTreeMap::new();
        for id in &ids {
            if format_only(id.as_bytes()).is_none() {
                return Some(TargetConflict::Malformed(id.clone()));
            }
            let Ok(parsed) = target_id::parse(id) else {
                continue;
            };
            match first.get(&parsed.processor) {
                None => {
                    first.insert(parsed.processor.clone(), parsed);
                }
                Some(f) => {
                    let fm = f.feature_map();
                    if parsed
                        .features
                        .iter()
                        .any(|(n, _)| !fm.contains_key(n.as_str()))
                    {
                        let a = format!("{key}-{}", original(f));
                        let b = format!("{key}-{id}");
                        return Some(TargetConflict::Pair(a, b));
                    }
                }
            }
        }
    }
    None
}

/// LLVM main's `getConflictTargetIDCombination` (`clang/lib/Basic/TargetID.cpp`
/// at llvm-project `0629daa018e3`), per `kind-triple` group in sorted
/// order: IDs that `llvm::AMDGPU::TargetID::parse` refuses (a triple that
/// is not amdgcn, an unknown processor, a feature the processor does not
/// have or a malformed one) are skipped; for each canonical processor the
/// first ID is kept, and a later one conflicts when it gives `xnack` or
/// `sramecc` where the first does not, or the other way round. Symmetric,
/// unlike the releases' check.
fn main_conflict(raw: &[String], written: &[String]) -> Option<TargetConflict> {
    for (key, (triple, ids)) in &target_groups(Release::Main, raw, written) {
        if triple.arch != "amdgcn" {
            continue;
        }
        let mut first: BTreeMap<String, (&str, bool, bool)> = BTreeMap::new();
        for id in ids {
            let Some((processor, parsed)) = llvm_parse_target_id(triple, id) else {
                continue;
            };
            let fm = parsed.feature_map();
            let cur = (
                id.as_str(),
                fm.contains_key("xnack"),
                fm.contains_key("sramecc"),
            );
            match first.get(&processor) {
                None => {
                    first.insert(processor, cur);
                }
                Some(&(prev, x, s)) if (x, s) != (cur.1, cur.2) => {
                    return Some(TargetConflict::Pair(
                        format!("{key}-{prev}"),
                        format!("{key}-{id}"),
                    ));
                }
                Some(_) => {}
            }
        }
    }
    None
}

fn original(t: &target_id::TargetId) -> String {
    let mut s = t.processor.clone();
    for (n, f) in &t.features {
        s.push(':');
        s.push_str(n);
        s.push(if *f == target_id::Feature::On {
            '+'
        } else {
            '-'
        });
    }
    s
}
