//! The byte encodings of the case format (hex and standard base64) and its
//! serde helpers.
//!
//! # Example
//!
//! Hex and base64 both ways.
//!
//! ```
//! use offload_kit_conformance::codec::{decode_base64, decode_hex, encode_base64, encode_hex};
//!
//! assert_eq!(decode_hex("10ff 10ad").unwrap(), [0x10, 0xff, 0x10, 0xad]); // whitespace ignored
//! assert_eq!(encode_hex(b"\x10\xff"), "10ff");
//! assert!(decode_hex("abc").is_err()); // odd number of digits
//! assert_eq!(encode_base64(b"CCOB"), "Q0NPQg==");
//! assert_eq!(decode_base64("Q0NPQg").unwrap(), b"CCOB"); // padding optional
//! ```

/// Decode hex digits, ignoring whitespace.
pub fn decode_hex(h: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = h.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if digits.len() % 2 != 0 {
        return Err(format!("odd number of hex digits in '{h}'"));
    }
    digits
        .chunks(2)
        .map(|p| {
            let s = std::str::from_utf8(p).map_err(|e| e.to_string())?;
            u8::from_str_radix(s, 16).map_err(|_| format!("bad hex '{s}'"))
        })
        .collect()
}

/// Encode bytes as lowercase hex.
pub fn encode_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Decode standard base64 (padding optional, whitespace ignored).
pub fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        if c.is_ascii_whitespace() || c == b'=' {
            continue;
        }
        let v = B64
            .iter()
            .position(|&x| x == c)
            .ok_or_else(|| format!("bad base64 character '{}'", c as char))? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// Encode standard base64 with padding.
pub fn encode_base64(b: &[u8]) -> String {
    let mut s = String::new();
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                s.push(B64[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// `skip_serializing_if` for flags that are off by default.
pub(super) fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip() {
        for s in [&b""[..], b"a", b"ab", b"abc", b"abcd", b"\x00\xff\x10"] {
            assert_eq!(decode_base64(&encode_base64(s)).unwrap(), s);
        }
        assert_eq!(encode_base64(b"foobar"), "Zm9vYmFy");
    }
}
