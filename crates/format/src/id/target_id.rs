//! Target IDs: `<processor> ( ":" <feature> ( "+" | "-" ) )*` (spec TID-1..4).
//!
//! The grammar is a `nom` parser; the processor/feature tables and the
//! compatibility rule (COMPAT-3) follow `clang/lib/Basic/TargetID.cpp`.
//!
//! # Example
//!
//! Parse a target ID, spell it canonically, compare features.
//!
//! ```
//! use offload_kit_format::id::target_id::{self, features_compatible, Feature};
//! use offload_kit_format::id::triple::Triple;
//!
//! let t = target_id::parse("gfx90a:xnack+:sramecc-").unwrap();
//! assert_eq!(t.processor, "gfx90a");
//! assert_eq!(t.features[0], ("xnack".to_string(), Feature::On));
//! assert_eq!(t.canonical(&Triple::parse("amdgcn-amd-amdhsa")), "gfx90a:sramecc-:xnack+"); // TID-4
//! // COMPAT-3: code leaving the features Any runs on the target, not the reverse.
//! let any = target_id::parse("gfx90a").unwrap();
//! assert!(features_compatible(&any, &t) && !features_compatible(&t, &any));
//! // TID-2: a feature given twice, reported at its position.
//! let err = target_id::parse("gfx90a:xnack+:xnack-").unwrap_err();
//! assert_eq!((err.rule.id, err.pos), ("TID-2", 13));
//! ```

use super::processor;
use super::triple::Triple;
use crate::rules::{self, Rule};
use nom::bytes::complete::take_while1;
use nom::character::complete::{char, one_of};
use nom::combinator::{all_consuming, recognize};
use nom::multi::many0;
use nom::sequence::preceded;
use nom::{IResult, Parser};
use std::collections::BTreeMap;

/// The setting of one target feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Feature {
    /// `+`
    On,
    /// `-`
    Off,
}

/// A parsed target ID.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetId {
    /// The processor as written.
    pub processor: String,
    /// Features in the order written.
    pub features: Vec<(String, Feature)>,
}

/// A grammar or table violation in a target ID: rule and byte position within the ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetIdError {
    /// The violated rule.
    pub rule: Rule,
    /// Byte position inside the target ID text.
    pub pos: usize,
    /// Explanation.
    pub message: String,
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.'
}

fn processor_name(i: &str) -> IResult<&str, &str> {
    recognize(take_while1(|c: char| is_name_char(c) || c == '-')).parse(i)
}

fn feature(i: &str) -> IResult<&str, (&str, char)> {
    preceded(char(':'), (take_while1(is_name_char), one_of("+-"))).parse(i)
}

/// Parse the documented grammar (TID-1) and the at-most-once rule (TID-2).
pub fn parse(text: &str) -> Result<TargetId, TargetIdError> {
    let res = all_consuming((processor_name, many0(feature))).parse(text);
    let (proc_, feats) = match res {
        Ok((_, v)) => v,
        Err(e) => {
            let rest = match e {
                nom::Err::Error(e) | nom::Err::Failure(e) => e.input,
                nom::Err::Incomplete(_) => "",
            };
            let pos = text.len() - rest.len();
            return Err(TargetIdError {
                rule: rules::TID_1,
                pos,
                message: format!(
                    "target ID '{text}' does not match <processor> (':' <feature> ('+'|'-'))* at character {pos}"
                ),
            });
        }
    };
    let mut features: Vec<(String, Feature)> = Vec::new();
    for (name, sign) in feats {
        if features.iter().any(|(n, _)| n == name) {
            return Err(TargetIdError {
                rule: rules::TID_2,
                pos: text.rfind(&format!(":{name}")).unwrap_or(0),
                message: format!("target feature '{name}' appears more than once in '{text}'"),
            });
        }
        features.push((
            name.to_string(),
            if sign == '+' {
                Feature::On
            } else {
                Feature::Off
            },
        ));
    }
    Ok(TargetId {
        processor: proc_.to_string(),
        features,
    })
}

impl TargetId {
    /// Check the processor and features against the tables for `triple` (TID-3);
    /// returns the canonical processor name.
    pub fn check(&self, triple: &Triple) -> Result<String, TargetIdError> {
        let canon = canonical_processor(triple, &self.processor).ok_or_else(|| TargetIdError {
            rule: rules::TID_3,
            pos: 0,
            message: format!(
                "processor '{}' is not known for triple '{}'",
                self.processor,
                triple.as_str()
            ),
        })?;
        let allowed: &[&str] = if triple.is_amdgpu() {
            processor::amdgpu_features(&canon)
        } else {
            &[]
        };
        for (name, _) in &self.features {
            if !allowed.contains(&name.as_str()) {
                return Err(TargetIdError {
                    rule: rules::TID_3,
                    pos: 0,
                    message: format!(
                        "processor '{canon}' does not support target feature '{name}'"
                    ),
                });
            }
        }
        Ok(canon)
    }

    /// The canonical spelling (TID-4): primary processor, features sorted by name.
    pub fn canonical(&self, triple: &Triple) -> String {
        let proc_ =
            canonical_processor(triple, &self.processor).unwrap_or_else(|| self.processor.clone());
        let sorted: BTreeMap<&str, Feature> = self
            .features
            .iter()
            .map(|(n, f)| (n.as_str(), *f))
            .collect();
        let mut s = proc_;
        for (n, f) in sorted {
            s.push(':');
            s.push_str(n);
            s.push(if f == Feature::On { '+' } else { '-' });
        }
        s
    }

    /// Feature map, as `clang::parseTargetID` fills it.
    pub fn feature_map(&self) -> BTreeMap<&str, Feature> {
        self.features
            .iter()
            .map(|(n, f)| (n.as_str(), *f))
            .collect()
    }
}

/// `clang::getCanonicalProcessorName`: AMDGPU aliases map to primary names,
/// other targets keep the name; `None` when AMDGPU does not know it or the
/// name is empty.
pub fn canonical_processor(triple: &Triple, name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    if triple.is_amdgpu() {
        // LLVM main's subarch table names processors newer than 22's table.
        let of_subarch = super::subarch::Subarch::parse(&triple.arch)
            .and_then(|_| super::subarch::Subarch::of_processor(name))
            .and_then(super::subarch::Subarch::processor);
        processor::canonical_amdgpu(name)
            .or(of_subarch)
            .map(str::to_string)
    } else {
        Some(name.to_string())
    }
}

/// Feature compatibility (COMPAT-3): same processor; the code object has no
/// more features than the target and each one it sets is set the same way.
pub fn features_compatible(code_object: &TargetId, target: &TargetId) -> bool {
    let co = code_object.feature_map();
    let t = target.feature_map();
    if co.len() > t.len() {
        return false;
    }
    co.iter().all(|(n, f)| t.get(n) == Some(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        assert!(parse("gfx906").is_ok());
        assert!(parse("gfx90a:xnack+:sramecc-").is_ok());
        assert_eq!(parse("gfx906:xnack").unwrap_err().rule, rules::TID_1);
        assert_eq!(parse(":xnack+").unwrap_err().rule, rules::TID_1);
        assert_eq!(
            parse("gfx906:xnack+:xnack-").unwrap_err().rule,
            rules::TID_2
        );
        assert!(parse("gfx9-4-generic:xnack+").is_ok());
    }

    #[test]
    fn canonical_sorts_and_resolves_aliases() {
        let t = Triple::parse("amdgcn-amd-amdhsa");
        let id = parse("gfx90a:xnack+:sramecc-").unwrap();
        assert_eq!(id.canonical(&t), "gfx90a:sramecc-:xnack+");
        assert_eq!(parse("fiji").unwrap().canonical(&t), "gfx803");
    }

    #[test]
    fn table_checks() {
        let t = Triple::parse("amdgcn-amd-amdhsa");
        assert_eq!(
            parse("gfx1030:xnack+").unwrap().check(&t).unwrap_err().rule,
            rules::TID_3
        );
        assert_eq!(
            parse("gfx999").unwrap().check(&t).unwrap_err().rule,
            rules::TID_3
        );
        assert!(parse("gfx908:sramecc+").unwrap().check(&t).is_ok());
    }
}
