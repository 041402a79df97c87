#!/bin/bash -eu
# The harness file is built as is; arms.h adds nothing without an arm's
# define, so the fuzzer's FUZZER_LIB decides the mutator.
cd $SRC/offload-kit/fuzz/harness
$CC $CFLAGS -c planted.c -o $WORK/planted.o
$CXX $CXXFLAGS $WORK/planted.o $FUZZER_LIB -o $OUT/planted
mkdir -p $WORK/seeds && cp seeds/*.bundle seeds/*.fatbin seeds-omptarget/*.offbin $WORK/seeds/
zip -jq $OUT/planted_seed_corpus.zip $WORK/seeds/*
