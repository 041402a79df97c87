//! Two runs side by side, as test262.fyi and wpt.fyi show them: the cases
//! whose outcome changed ([`report::changes`]), the pass score of each
//! implementation per spec chapter before and after, and per rule how many
//! outcomes became a pass and how many stopped being one. The same
//! comparison serves two runs (`--compare OLD.json`: a new LLVM release, a
//! new offload-kit, a new ROCm) and two implementations of one run
//! (`--compare-impls A,B`). [`History`] follows the scores over any number
//! of runs (`--history A.json,B.json,...`).
//!
//! # Example
//!
//! ```
//! use offload_kit_conformance::compare::Comparison;
//! use offload_kit_conformance::{Role, Status, Verdict};
//!
//! let v = |case: &str, status| Verdict { case: case.into(), implementation: "llvm".into(),
//!     status, underlying: None, detail: String::new(), observed: String::new(), note: None,
//!     bug: None, commands: vec![], seconds: 0.0, role: Role::Reference };
//! let old = [v("a", Status::Pass), v("b", Status::Differs)];
//! let new = [v("a", Status::Differs), v("b", Status::Differs)];
//! let c = Comparison::of_runs("since old.json", &[], &old, &new);
//! assert_eq!(c.changes.len(), 1);
//! assert_eq!(c.before[&("llvm".to_string(), "other".to_string())], (1, 2));
//! assert_eq!(c.after[&("llvm".to_string(), "other".to_string())], (0, 2));
//! assert!(c.text().contains("llvm other: 1/2 → 0/2 (-1)"));
//! ```

use super::case::Case;
use super::judge::{Status, Verdict};
use super::report::{self, Change};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// Cases passed and cases run (not `n/a`), per (implementation, chapter).
pub type Scores = BTreeMap<(String, String), (usize, usize)>;

/// One changed score: (implementation, chapter), passed and run before,
/// passed and run after, the difference in cases passed.
pub type ScoreRow<'c> = (&'c (String, String), (usize, usize), (usize, usize), i64);

/// Two runs, or two implementations, compared.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// What is compared, in words.
    pub title: String,
    /// The (case, implementation) outcomes that changed.
    pub changes: Vec<Change>,
    /// The scores before.
    pub before: Scores,
    /// The scores after.
    pub after: Scores,
    /// Per rule: outcomes that became a pass, outcomes that stopped being one.
    pub rules: BTreeMap<String, (usize, usize)>,
}

/// The chapter of each case of `cases` (its first rule's); a case the
/// corpus no longer has counts under `other`.
fn chapters(cases: &[Case]) -> HashMap<&str, &'static str> {
    (cases.iter())
        .map(|c| {
            let ch = (c.rules.first())
                .and_then(|r| crate::rules::by_id(r))
                .map_or("other", |r| r.chapter);
            (c.id.as_str(), ch)
        })
        .collect()
}

/// The pass score of each implementation per chapter.
pub fn scores(cases: &[Case], verdicts: &[Verdict]) -> Scores {
    let chapter = chapters(cases);
    let mut s = Scores::new();
    for v in verdicts
        .iter()
        .filter(|v| v.status != Status::NotApplicable)
    {
        let ch = chapter.get(v.case.as_str()).copied().unwrap_or("other");
        let e = s
            .entry((v.implementation.clone(), ch.to_string()))
            .or_default();
        e.0 += usize::from(v.status == Status::Pass);
        e.1 += 1;
    }
    s
}

/// Per rule of the changed cases: how many outcomes became a pass and how
/// many stopped being one.
fn rule_changes(cases: &[Case], changes: &[Change]) -> BTreeMap<String, (usize, usize)> {
    let rules: HashMap<&str, &[String]> = cases
        .iter()
        .map(|c| (c.id.as_str(), c.rules.as_slice()))
        .collect();
    let pass = Status::Pass.label();
    let mut out: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    // A case one run did not run (`-`) neither passed nor failed there.
    for c in changes.iter().filter(|c| c.before != "-" && c.after != "-") {
        let (fixed, broke) = (
            c.after == pass && c.before != pass,
            c.before == pass && c.after != pass,
        );
        for r in rules.get(c.case.as_str()).copied().unwrap_or_default() {
            let e = out.entry(r.clone()).or_default();
            e.0 += usize::from(fixed);
            e.1 += usize::from(broke);
        }
    }
    out
}

/// Whether `name` is a user's build named by default (`llvm-<major>-user`,
/// as [`crate::user_llvm`] names it).
pub fn default_user_name(name: &str) -> bool {
    (name.strip_prefix("llvm-"))
        .and_then(|r| r.strip_suffix("-user"))
        .is_some_and(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()))
}

/// The user's builds (named by default) among `verdicts`' implementations.
fn user_builds(verdicts: &[Verdict]) -> Vec<&str> {
    let mut names: Vec<&str> = (verdicts.iter())
        .map(|v| v.implementation.as_str())
        .filter(|n| default_user_name(n))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// `verdicts` with implementation `from` renamed `to`.
fn renamed(verdicts: &[Verdict], from: &str, to: &str) -> Vec<Verdict> {
    (verdicts.iter())
        .map(|v| Verdict {
            implementation: if v.implementation == from {
                to.to_string()
            } else {
                v.implementation.clone()
            },
            ..v.clone()
        })
        .collect()
}

impl Comparison {
    /// Two runs' results (`old` from an earlier `--json` report). Columns
    /// pair by name; a user's build on each side (`llvm-19-user` then
    /// `llvm-22-user`) pairs with the other, by role: a release manager
    /// compares their build before and after, not two columns that each
    /// ran once.
    pub fn of_runs(title: &str, cases: &[Case], old: &[Verdict], new: &[Verdict]) -> Comparison {
        let (o, n) = (user_builds(old), user_builds(new));
        let (title, old) = match (&o[..], &n[..]) {
            ([a], [b]) if a != b => (
                format!("{title} (the user's build {a} paired with {b})"),
                renamed(old, a, b),
            ),
            _ => (title.to_string(), old.to_vec()),
        };
        let changes = report::changes(&old, new);
        Comparison {
            title,
            rules: rule_changes(cases, &changes),
            changes,
            before: scores(cases, &old),
            after: scores(cases, new),
        }
    }

    /// Implementations `a` and `b` of one run, as if `b` were a later run
    /// of `a` (both scored under the name `a → b`).
    pub fn of_impls(cases: &[Case], verdicts: &[Verdict], a: &str, b: &str) -> Comparison {
        let pick = |name: &str| -> Vec<Verdict> {
            (verdicts.iter())
                .filter(|v| v.implementation == name)
                .map(|v| Verdict {
                    implementation: format!("{a} → {b}"),
                    ..v.clone()
                })
                .collect()
        };
        let title = format!("Outcomes that differ between {a} and {b}");
        Comparison::of_runs(&title, cases, &pick(a), &pick(b))
    }

    /// The (implementation, chapter) rows whose score changed, with both
    /// scores and the difference in cases passed; implementations only one
    /// of the runs ran are left out.
    pub fn score_rows(&self) -> Vec<ScoreRow<'_>> {
        let ran = |s: &Scores, imp: &str| s.keys().any(|(i, _)| i == imp);
        let mut keys: Vec<&(String, String)> =
            self.before.keys().chain(self.after.keys()).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .filter(|(imp, _)| ran(&self.before, imp) && ran(&self.after, imp))
            .filter_map(|k| {
                let b = self.before.get(k).copied().unwrap_or_default();
                let a = self.after.get(k).copied().unwrap_or_default();
                (a != b).then(|| (k, b, a, a.0 as i64 - b.0 as i64))
            })
            .collect()
    }

    /// The comparison as text: the changed cases, then the scores and
    /// rules that moved.
    pub fn text(&self) -> String {
        let mut s = report::changes_text(&self.title, &self.changes);
        let rows = self.score_rows();
        if !rows.is_empty() {
            let _ = writeln!(
                s,
                "== pass score per implementation and chapter: {} changed ==",
                rows.len()
            );
            for ((imp, ch), b, a, d) in rows {
                let _ = writeln!(s, "  {imp} {ch}: {}/{} → {}/{} ({d:+})", b.0, b.1, a.0, a.1);
            }
        }
        let moved: Vec<_> = self.rules.iter().filter(|(_, (f, b))| f + b > 0).collect();
        if !moved.is_empty() {
            let _ = writeln!(
                s,
                "== rules: {} with outcomes that became or stopped being a pass ==",
                moved.len()
            );
            for (r, (f, b)) in moved {
                let _ = writeln!(s, "  {r}: +{f} pass, -{b} pass");
            }
        }
        s
    }
}

/// The pass score of each implementation per chapter over several runs,
/// oldest first (test262.fyi's graph, as a table).
///
/// ```
/// use offload_kit_conformance::compare::History;
/// use offload_kit_conformance::{Role, Status, Verdict};
///
/// let v = |status| vec![Verdict { case: "a".into(), implementation: "llvm".into(),
///     status, underlying: None, detail: String::new(), observed: String::new(), note: None,
///     bug: None, commands: vec![], seconds: 0.0, role: Role::Reference }];
/// let h = History::of_runs(&[], &[("r1".into(), v(Status::Differs)), ("r2".into(), v(Status::Pass))]);
/// assert_eq!(h.rows()[0].1, [Some((0, 1)), Some((1, 1))]);
/// assert!(h.text().contains("llvm other: 0/1 → 1/1"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    /// Each run's label (its results file, or `this run`), oldest first.
    pub runs: Vec<String>,
    /// Each run's scores, in the same order.
    pub scores: Vec<Scores>,
}

/// One (implementation, chapter) over the runs: passed and run in each
/// run that ran it.
pub type HistoryRow<'h> = (&'h (String, String), Vec<Option<(usize, usize)>>);

impl History {
    /// The scores of `runs` (label, verdicts), oldest first, each scored
    /// against today's corpus `cases`.
    /// A user's build named by default (`llvm-<major>-user`) is one row,
    /// `llvm-user`, when no run has two: the same build followed over
    /// releases.
    pub fn of_runs(cases: &[Case], runs: &[(String, Vec<Verdict>)]) -> History {
        let builds: Vec<Vec<&str>> = runs.iter().map(|(_, v)| user_builds(v)).collect();
        let one_row = builds.iter().all(|b| b.len() <= 1);
        History {
            runs: runs.iter().map(|(l, _)| l.clone()).collect(),
            scores: (runs.iter().zip(&builds))
                .map(|((_, v), b)| match (one_row, b.first()) {
                    (true, Some(name)) => scores(cases, &renamed(v, name, "llvm-user")),
                    _ => scores(cases, v),
                })
                .collect(),
        }
    }

    /// Every (implementation, chapter) any run scored, sorted, with its
    /// score in each run (`None` where that run did not run it).
    pub fn rows(&self) -> Vec<HistoryRow<'_>> {
        let mut keys: Vec<&(String, String)> = self.scores.iter().flat_map(|s| s.keys()).collect();
        keys.sort();
        keys.dedup();
        keys.into_iter()
            .map(|k| (k, self.scores.iter().map(|s| s.get(k).copied()).collect()))
            .collect()
    }

    /// The history as text: one line per (implementation, chapter), its
    /// scores from the oldest run to the newest (`-` where not run).
    pub fn text(&self) -> String {
        let mut s = format!(
            "== pass score per implementation and chapter over {} run(s): {} ==\n",
            self.runs.len(),
            self.runs.join(", ")
        );
        for ((imp, ch), cells) in self.rows() {
            let cells: Vec<String> = (cells.iter())
                .map(|c| c.map_or("-".into(), |(p, n)| format!("{p}/{n}")))
                .collect();
            let _ = writeln!(s, "  {imp} {ch}: {}", cells.join(" → "));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Role, Status};

    fn v(case: &str, imp: &str, status: Status) -> Verdict {
        Verdict::for_test(case, imp, status, Role::Reference)
    }

    /// A 19 build then a 22 build: the cases whose outcome changed, not
    /// every case twice as `pass → -` and `- → pass`.
    #[test]
    fn user_builds_pair_by_role() {
        let old = [
            v("a", "llvm-19-user", Status::Pass),
            v("b", "llvm-19-user", Status::Pass),
            v("a", "offload-kit", Status::Pass),
        ];
        let new = [
            v("a", "llvm-22-user", Status::Pass),
            v("b", "llvm-22-user", Status::Differs),
            v("a", "offload-kit", Status::Pass),
        ];
        let c = Comparison::of_runs("since old", &[], &old, &new);
        assert_eq!(c.changes.len(), 1, "{:?}", c.changes);
        assert_eq!(
            (
                c.changes[0].case.as_str(),
                c.changes[0].implementation.as_str()
            ),
            ("b", "llvm-22-user")
        );
        assert!(
            c.title.contains("llvm-19-user paired with llvm-22-user"),
            "{}",
            c.title
        );
        // Two builds on one side: nothing is guessed.
        let two = [
            v("a", "llvm-19-user", Status::Pass),
            v("a", "llvm-20-user", Status::Pass),
        ];
        assert_eq!(Comparison::of_runs("t", &[], &two, &new).changes.len(), 5);
        let h = History::of_runs(
            &[],
            &[("r1".into(), old.to_vec()), ("r2".into(), new.to_vec())],
        );
        assert!(
            h.text().contains("llvm-user other: 2/2 → 1/2"),
            "{}",
            h.text()
        );
    }
}
