//! The C ABI's memory budget is `OFFLOAD_KIT_MAX_MEMORY` as it is at each
//! call: a variable that is not a size is refused (`OFFLOADKIT_EBADARG`),
//! as the CLI and Python refuse it. A test binary of its own: it sets the
//! process's environment.

#![allow(unsafe_code)] // calling the C ABI

use offloadkit::{offloadkit_validate, OFFLOADKIT_EBADARG};
use std::os::raw::c_char;

fn validate(data: &[u8]) -> i32 {
    let mut rule = [0 as c_char; 16];
    let mut offset = 0u64;
    // SAFETY: `data` is readable, `rule` holds 16 writable bytes, `offset`
    // is a writable u64.
    unsafe {
        offloadkit_validate(
            data.as_ptr(),
            data.len(),
            rule.as_mut_ptr(),
            rule.len(),
            &mut offset,
        )
    }
}

#[test]
fn a_budget_variable_that_is_not_a_size_is_refused() {
    let cut = b"CCOB\x03\x00";
    std::env::remove_var("OFFLOAD_KIT_MAX_MEMORY");
    assert_eq!(validate(cut), 1, "a cut compressed bundle does not conform");
    std::env::set_var("OFFLOAD_KIT_MAX_MEMORY", "lots");
    assert_eq!(validate(cut), OFFLOADKIT_EBADARG);
    std::env::set_var("OFFLOAD_KIT_MAX_MEMORY", "64M");
    assert_eq!(validate(cut), 1);
}
