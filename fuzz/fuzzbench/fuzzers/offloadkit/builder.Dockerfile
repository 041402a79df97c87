# FuzzBench fuzzer "offloadkit": libFuzzer with offload-kit's structure-aware
# mutator (offloadkit_mutate, the documented default arm of tools/fuzz-eval).
# The mutator is a static library of offload-kit's C ABI, built here once.
ARG parent_image
FROM $parent_image
RUN apt-get update && apt-get install -y curl pkg-config libzstd-dev zlib1g-dev && \
    curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
RUN git clone --depth 1 https://github.com/offload-kit/offload-kit /offload-kit && \
    cd /offload-kit && $HOME/.cargo/bin/cargo build --release -p offload-kit-capi --lib && \
    printf '#define OFFLOADKIT_MUTATOR\n#include "arms.h"\n' > /offload-kit/mutator.c && \
    clang -c -O2 -I include -I fuzz/harness mutator.c -o /offload-kit/mutator.o
