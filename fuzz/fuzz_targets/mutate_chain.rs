#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| offload_kit::fuzzing::mutate_chain(data));
