//! NumPy's .npy (version 1.0) for little-endian f32 arrays: what `tile
//! --heights` and `points` write.
//!
//! The key decision: the header is padded so the data starts on a 64-byte
//! boundary, as NumPy itself writes it, and the samples follow in C order.

pub(crate) fn npy_f32(values: &[f32], (rows, columns): (usize, usize)) -> Vec<u8> {
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {columns}), }}");
    // magic (6) + version (2) + length (2) + header + newline: a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = Vec::with_capacity(10 + header.len() + 4 * values.len());
    bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    bytes
}
