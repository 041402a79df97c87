#!/bin/bash -eu
# OSS-Fuzz build: every cargo-fuzz target of fuzz/, built with the builder's
# sanitizer flags, copied to $OUT with a seed corpus and a dictionary; then
# the C ABI's harness with libFuzzer's mutator and with offload-kit's.
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
# The C harness of offload-kit's C ABI (fuzz/harness/capi.c: every answer
# checked against what the header promises), twice, the mutator the only
# change: `capi` with libFuzzer's own, `capi_offloadkit` with offload-kit's
# structure-aware one (LLVMFuzzerCustomMutator from fuzz/harness/arms.h),
# which is how a loader's own OSS-Fuzz project would use it. Both link the
# instrumented liboffloadkit.a of fuzz/harness/build-capi-lib.
cd "$SRC/offload-kit"
lib=$(fuzz/harness/build-capi-lib "${OFFLOADKIT_CAPI_TARGET_DIR:-$WORK/capi}")
native=$(fuzz/harness/build-capi-lib --native-libs)
$CC $CFLAGS -I include -c fuzz/harness/capi.c -o "$WORK/capi.o"
printf '#define OFFLOADKIT_MUTATOR\n#include "arms.h"\n' > "$WORK/mutator.c"
$CC $CFLAGS -I include -I fuzz/harness -c "$WORK/mutator.c" -o "$WORK/mutator.o"
# shellcheck disable=SC2086  # LIB_FUZZING_ENGINE and native are lists of flags
$CXX $CXXFLAGS "$WORK/capi.o" $LIB_FUZZING_ENGINE "$lib" $native -o "$OUT/capi"
# shellcheck disable=SC2086
$CXX $CXXFLAGS "$WORK/capi.o" "$WORK/mutator.o" $LIB_FUZZING_ENGINE "$lib" $native -o "$OUT/capi_offloadkit"
for name in capi capi_offloadkit; do
  cp fuzz/oss-fuzz/offload.dict "$OUT/$name.dict"
  zip -jq "$OUT/${name}_seed_corpus.zip" fuzz/harness/seeds/*.fatbin fuzz/harness/seeds/*.bundle tests/data/malformed/*
done
