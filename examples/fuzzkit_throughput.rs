//! Throughput of the loader-fuzzing kit, for the README's figures (a
//! benchmark, not a test): generated valid binary bundles per second (at
//! most 4 entries, in memory), mutations per second on a generated 4-entry
//! bundle and on each file given as an argument, and validations per
//! second of a 4-entry bundle (the container and the images in it). Valid
//! files carry images by default; the same figures with random payloads
//! (`Payloads::Random`) follow.
//!
//! `cargo run --release --example fuzzkit_throughput [FILE...]`

use offload_kit::detect;
use offload_kit::generate::{generate, Kind, Options, Payloads};
use offload_kit::inspect;
use offload_kit::mutate::mutate;
use std::time::{Duration, Instant};

/// Calls of `f` per second over about `secs` seconds.
fn rate(secs: f64, mut f: impl FnMut(u64)) -> f64 {
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < Duration::from_secs_f64(secs) {
        for _ in 0..100 {
            f(n);
            n += 1;
        }
    }
    n as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    for (what, payloads) in [
        ("images", Payloads::Loadable),
        ("random bytes", Payloads::Random),
    ] {
        println!("payloads: {what}");
        let opts = Options {
            payloads,
            ..Options::default()
        };
        figures(&opts);
    }
}

fn figures(opts: &Options) {
    let g = rate(2.0, |s| {
        std::hint::black_box(generate(Kind::Binary, s, opts).unwrap());
    });
    println!("generate binary (valid, <= 4 entries): {g:>10.0} files/s");
    // A 4-entry bundle: the first seed that gives one.
    let four = (0..)
        .map(|s| generate(Kind::Binary, s, opts).unwrap().bytes)
        .find(|b| detect::list(&b.as_slice(), None).unwrap().entries.len() == 4)
        .unwrap();
    let m = rate(2.0, |s| {
        std::hint::black_box(mutate(&four, 1 << 16, s));
    });
    println!(
        "mutate 4-entry bundle ({} bytes):     {m:>10.0} mutations/s",
        four.len()
    );
    let v = rate(2.0, |_| {
        std::hint::black_box(inspect::validate(&four.as_slice(), Default::default()).unwrap());
    });
    println!("validate 4-entry bundle:               {v:>10.0} validations/s");
    if opts.payloads == Payloads::Random {
        return;
    }
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).unwrap();
        let m = rate(2.0, |s| {
            std::hint::black_box(mutate(&data, data.len().max(1 << 16), s));
        });
        println!(
            "mutate {path} ({} bytes): {m:>10.0} mutations/s",
            data.len()
        );
    }
}
