#!/bin/bash
# Measure llvm-objdump/llvm-readobj --offloading (LLVM 22) and roc-obj-ls /
# roc-obj-extract (Debian hipcc 5.2) against offload-kit. See README.md.
# Env: OFFLOAD_KIT, COUNT (files per kind, default 30), SEED (default 1),
#      TOOL_TIMEOUT (seconds, default 10), WORK (scratch dir), CLANG.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OK=${OFFLOAD_KIT:-$HERE/../../target/release/offload-kit}
COUNT=${COUNT:-30}
SEED=${SEED:-1}
CLANG=${CLANG:-/usr/lib/llvm-22/bin/clang}
WORK=${WORK:-$(mktemp -d /tmp/offload-third-party.XXXXXX)}
C=$WORK/corpus
rm -rf "$C"; mkdir -p "$C"
for k in fatbin object binary ccob; do
  "$OK" generate --kind $k --count "$COUNT" --seed "$SEED" --out "$C/$k" >/dev/null
done
for k in fatbin object binary; do
  "$OK" generate --kind $k --count "$COUNT" --seed "$SEED" --out "$C/$k-malformed" --malformed all >/dev/null
done
# Real clang 22 HIP objects (plain and --offload-compress .hip_fatbin, -fgpu-rdc).
if [ -x "$CLANG" ]; then
  mkdir -p "$C/clang" "$WORK/src"
  cat > "$WORK/src/k.hip" <<'HIP'
typedef struct { unsigned x, y, z; } dim3_;
extern "C" int hipLaunchKernel(const void*, dim3_, dim3_, void**, unsigned long, void*);
extern "C" int __hipPushCallConfiguration(dim3_, dim3_, unsigned long, void*);
extern "C" int __hipPopCallConfiguration(dim3_*, dim3_*, unsigned long*, void*);
__attribute__((global)) void k(int *p) { p[0] = 42; }
HIP
  F="-x hip -nogpulib -nogpuinc --offload-arch=gfx906 --offload-arch=gfx90a -c $WORK/src/k.hip"
  "$CLANG" $F -o "$C/clang/hip.o"
  "$CLANG" $F --offload-compress -o "$C/clang/hip-compress.o"
  "$CLANG" $F -fgpu-rdc -o "$C/clang/hip-rdc.o"
fi
python3 "$HERE/measure.py" --ok "$OK" --corpus "$C" --work "$WORK" \
  --out "$HERE/results.md" --detail "$HERE/results.tsv"
echo "scratch: $WORK"
