"""FuzzBench fuzzer "offloadkit": libFuzzer whose mutations come from
offload-kit's structure-aware mutator (LLVMFuzzerCustomMutator calling
offloadkit_mutate; fuzz/harness/arms.h, -DOFFLOADKIT_MUTATOR). The build is
FuzzBench's libFuzzer build with the mutator object and its library added
to FUZZER_LIB (set here, after everything libFuzzer's build would set, so
nothing overwrites it), and the run is libFuzzer's: compared with the
"libfuzzer" fuzzer, only the mutator differs."""
import os

from fuzzers import utils
from fuzzers.libfuzzer import fuzzer as libfuzzer_fuzzer


def build():
    """The benchmark linked with libFuzzer, the mutator and its library."""
    cflags = ['-fsanitize=fuzzer-no-link']
    utils.append_flags('CFLAGS', cflags)
    utils.append_flags('CXXFLAGS', cflags)
    os.environ['CC'] = 'clang'
    os.environ['CXX'] = 'clang++'
    os.environ['FUZZER_LIB'] = ' '.join([
        '/usr/lib/libFuzzer.a', '/offload-kit/mutator.o',
        '/offload-kit/target/release/liboffloadkit.a',
        '-lzstd', '-lz', '-lpthread', '-ldl', '-lm'])
    utils.build_benchmark()


def fuzz(input_corpus, output_corpus, target_binary):
    """As FuzzBench's libFuzzer runs it."""
    libfuzzer_fuzzer.fuzz(input_corpus, output_corpus, target_binary)
