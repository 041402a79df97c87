"""FuzzBench fuzzer "offloadkit": libFuzzer whose mutations come from
offload-kit's structure-aware mutator (LLVMFuzzerCustomMutator calling
offloadkit_mutate; fuzz/harness/arms.h, -DOFFLOADKIT_MUTATOR). Everything
else is FuzzBench's libFuzzer integration, so a comparison against its
"libfuzzer" fuzzer changes only the mutator."""
import os

from fuzzers.libfuzzer import fuzzer as libfuzzer_fuzzer


def build():
    """The benchmark linked with libFuzzer, the mutator and its library."""
    os.environ['FUZZER_LIB'] = ' '.join([
        '-fsanitize=fuzzer', '/offload-kit/mutator.o',
        '/offload-kit/target/release/liboffloadkit.a',
        '-lzstd', '-lz', '-lpthread', '-ldl', '-lm'])
    libfuzzer_fuzzer.build()


def fuzz(input_corpus, output_corpus, target_binary):
    """As FuzzBench's libFuzzer runs it."""
    libfuzzer_fuzzer.fuzz(input_corpus, output_corpus, target_binary)
