//! The law of a pack's synthesized detail as its header records it
//! (docs/planetpack.md, "Detail law"): the fields, their rules, and the
//! bfloat16 the relief cap is stored as.

#[cfg(feature = "write")]
use crate::error::PackError;
use crate::format::{MAX_FIRST_OCTAVE, at};

/// The law of a pack's synthesized detail past its height data depth,
/// measured from its own data when it was baked and recorded in its header
/// at the precision the header holds. What is recorded is the law: a bake
/// rounds what it measured before it uses it, so the bake's audit, the
/// viewer and a region patch all synthesize the same ground, and a patch,
/// which keeps the law, changes no detail beyond the tiles it rewrites.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct DetailLaw {
    /// The data's roughness exponent `H` in 64ths (19..=64), or `None` where
    /// the data gave none (the default gain).
    pub exponent_64ths: Option<u8>,
    /// The first octave's amplitude per metre of a data cell's twist,
    /// `0 < a <= 120`, as the header's f32 holds it.
    pub first_octave: f32,
    /// The largest twist (metres) a cell's amplitude follows, positive, as
    /// the header's bfloat16 holds it; `+inf` for no cap.
    pub twist_cap: f32,
}

impl DetailLaw {
    /// A law rounded to what the header records: the first octave to the
    /// nearest f32, the twist cap by [`DetailLaw::recorded_cap`].
    pub fn rounded(exponent_64ths: Option<u8>, first_octave: f64, twist_cap: f64) -> DetailLaw {
        DetailLaw { exponent_64ths, first_octave: first_octave as f32, twist_cap: DetailLaw::recorded_cap(twist_cap) }
    }

    /// A twist cap as the header records it: the nearest bfloat16, and no
    /// cap (`+inf`) for one that is not positive (every cell a plane: a cap
    /// of zero would cap all detail to nothing) or past bfloat16's range.
    pub fn recorded_cap(cap: f64) -> f32 {
        let rounded = bf16_value(bf16_bits(cap as f32));
        if rounded > 0.0 { rounded } else { f32::INFINITY }
    }

    /// [`DetailLaw::check`] before a law is written: a law that breaks a
    /// rule is never recorded.
    #[cfg(feature = "write")]
    pub(crate) fn check_to_record(&self) -> Result<(), PackError> {
        self.check()
            .map_err(|(field, _, reason)| PackError::BadSpec(format!("the detail law to record: {field} {reason}")))
    }

    /// The rules a recorded law obeys; the reason when it breaks one.
    pub fn check(&self) -> Result<(), (&'static str, usize, String)> {
        if let Some(k) = self.exponent_64ths
            && !(19..=64).contains(&k)
        {
            return Err(("detail_exponent", at::DETAIL_EXPONENT, format!("{k}/64 is outside 19/64..=64/64")));
        }
        if self.first_octave.is_nan() || self.first_octave <= 0.0 || self.first_octave > MAX_FIRST_OCTAVE {
            let reason = format!("{} must lie in 0 < a <= {MAX_FIRST_OCTAVE}", self.first_octave);
            return Err(("detail_first_octave", at::DETAIL_FIRST_OCTAVE, reason));
        }
        if self.twist_cap.is_nan() || self.twist_cap <= 0.0 {
            return Err(("detail_twist_cap", at::DETAIL_TWIST_CAP, format!("{} must be positive", self.twist_cap)));
        }
        Ok(())
    }
}

/// The bfloat16 nearest `v` (ties to even): the upper half of an f32.
pub(crate) fn bf16_bits(v: f32) -> u16 {
    let bits = v.to_bits();
    if v.is_nan() {
        return 0x7fc0;
    }
    // A finite value past bfloat16's largest rounds to +inf, no cap: a cap
    // that large caps nothing anyway.
    (bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16) as u16
}

pub(crate) fn bf16_value(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}
