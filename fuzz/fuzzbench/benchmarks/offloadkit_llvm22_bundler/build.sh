#!/bin/bash -eu
L=/usr/lib/llvm-22
cd $WORK && ar x $L/lib/libclangDriver.a OffloadBundler.cpp.o
cd $SRC/offload-kit/fuzz/harness
$CXX $CXXFLAGS -std=c++17 -fno-rtti -I $L/include -DREADER_BUNDLER -c llvm22.cpp -o $WORK/llvm22.o
# The runner image has no LLVM: the two shared libraries go beside the target.
mkdir -p $OUT/lib && cp -L $L/lib/libclang-cpp.so.22.1 $L/lib/libLLVM.so.22.1 $OUT/lib/
$CXX $CXXFLAGS $WORK/llvm22.o $WORK/OffloadBundler.cpp.o $FUZZER_LIB -L $L/lib \
  -l:libclang-cpp.so.22.1 -lLLVM-22 '-Wl,-rpath,$ORIGIN/lib' -o $OUT/llvm22_bundler
mkdir -p $WORK/seeds && cp seeds/*.bundle seeds/*.fatbin seeds-omptarget/*.offbin $WORK/seeds/
zip -jq $OUT/llvm22_bundler_seed_corpus.zip $WORK/seeds/*
