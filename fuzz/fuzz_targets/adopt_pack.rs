//! Any bytes handed to the pack reader (checksums repaired for half of them): it must accept them or refuse them
//! with a typed error, and an accepted pack must read every tile (or refuse
//! it) without panicking. Tile address text and raw keys ride along, since
//! they are parsed from the same untrusted places.
#![no_main]

use libfuzzer_sys::fuzz_target;
use planet_terrain::pack::Pack;
use planet_terrain::testing::refresh_checksums;
use planet_terrain::{TileAddress, TileKey};

fuzz_target!(|data: &[u8]| {
    // An odd first byte asks for the checksums to be repaired first, so half
    // of the inputs reach the index rules and the payload decoder.
    let mut bytes = data.to_vec();
    if data.first().is_some_and(|b| b & 1 == 1) {
        bytes[0] = b'P';
        refresh_checksums(&mut bytes);
    }
    if let Ok(pack) = Pack::from_bytes(bytes) {
        for entry in pack.entries() {
            match entry {
                Ok(entry) => {
                    let _ = pack.decode(&entry);
                }
                Err(_) => break,
            }
        }
        let _ = pack.verify();
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = text.parse::<TileAddress>();
    }
    if data.len() >= 8 {
        let raw = u64::from_le_bytes(data[..8].try_into().expect("eight bytes"));
        if let Ok(key) = TileKey::from_raw(raw) {
            assert_eq!(key.address().key(), key);
        }
    }
});
