// offload-kit's own lit-style test of tools/lit-llvm (tests/llvm_diff.rs runs it
// against LLVM 19 and 22 and the drop-in): the runner's substitutions,
// FileCheck, `not`, pipes and a `-###` line, as LLVM's own test files use
// them.
// REQUIRES: x86-registered-target
// UNSUPPORTED: target={{.*}}-darwin{{.*}}

// RUN: %clang -O0 -target %itanium_abi_triple %s -c -o %t.o
// RUN: echo 'Content of device file 1' > %t.tgt1
// RUN: clang-offload-bundler -type=bc -targets=host-%itanium_abi_triple,openmp-x86_64-pc-linux-gnu \
// RUN:   -input=%t.tgt1 -input=%t.tgt1 -output=%t.bundle
// RUN: clang-offload-bundler -type=bc -input=%t.bundle -list | FileCheck %s --check-prefix=LIST
// LIST-DAG: host-
// LIST-DAG: openmp-x86_64-pc-linux-gnu

// RUN: not clang-offload-bundler -type=bc -input=%t.bundle.notexist -output=%t.x \
// RUN:   -targets=openmp-x86_64-pc-linux-gnu -unbundle 2>&1 | FileCheck %s -DMSG=%errc_ENOENT --check-prefix=ERR
// ERR: error: '{{.*}}notexist': [[MSG]]

// RUN: clang-offload-bundler --help | FileCheck %s --check-prefix=HELP
// HELP: -### {{.*}}- Print any external commands that are to be executed instead of actually executing them

// RUN: clang-offload-bundler -type=o -targets=host-%itanium_abi_triple,openmp-x86_64-pc-linux-gnu \
// RUN:   -input=%t.o -input=%t.tgt1 -output=%t.fat.o -### 2>&1 | FileCheck %s --check-prefix=CMD
// CMD: llvm-objcopy{{(.exe)?}}" "--add-section=__CLANG_OFFLOAD_BUNDLE__host-{{.*}}" "--set-section-flags=__CLANG_OFFLOAD_BUNDLE__host-{{.*}}=readonly,exclude" "--add-section=__CLANG_OFFLOAD_BUNDLE__openmp-x86_64-pc-linux-gnu{{-?}}={{.*}}tgt1"

int A = 0;
