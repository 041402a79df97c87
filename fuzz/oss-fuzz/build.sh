#!/bin/bash -eu
# OSS-Fuzz build: every cargo-fuzz target of fuzz/, built with the builder's
# sanitizer flags, copied to $OUT with a seed corpus and a dictionary.
cd "$SRC/offload-kit/fuzz"
cargo fuzz build -O
bin=${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/release
for src in fuzz_targets/*.rs; do
  name=$(basename "${src%.rs}")
  cp "$bin/$name" "$OUT/"
  cp oss-fuzz/offload.dict "$OUT/$name.dict"
  # Seeds: the target's real LLVM artifacts, the malformed corpus that
  # crashes LLVM, and clang-built fat binaries.
  seeds=()
  [ -d "seeds/$name" ] && seeds+=(seeds/"$name"/*)
  seeds+=(../tests/data/malformed/* harness/seeds/*.fatbin harness/seeds/*.bundle)
  zip -jq "$OUT/${name}_seed_corpus.zip" "${seeds[@]}"
done
