//! Double-double arithmetic (about 106 significant bits) for the precision
//! reference. It exists so the f32 vertex path is checked against a direct,
//! naive evaluation carried at far higher precision, not against a second
//! copy of its own rearranged formula.

use std::ops::{Add, Div, Mul, Neg, Sub};

use glam::DVec3;

/// `hi + lo` with `|lo| <= ulp(hi) / 2`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dd {
    pub hi: f64,
    pub lo: f64,
}

fn two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    let bb = s - a;
    Dd { hi: s, lo: (a - (s - bb)) + (b - bb) }
}

fn quick_two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    Dd { hi: s, lo: b - (s - a) }
}

fn two_prod(a: f64, b: f64) -> Dd {
    let p = a * b;
    Dd { hi: p, lo: a.mul_add(b, -p) }
}

impl Dd {
    pub const fn from_f64(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    pub fn to_f64(self) -> f64 {
        self.hi + self.lo
    }

    pub fn sqrt(self) -> Dd {
        if self.hi <= 0.0 {
            return Dd::from_f64(0.0);
        }
        let s = Dd::from_f64(self.hi.sqrt());
        // One Newton step doubles the 53 correct bits.
        s + (self - s * s) / (s * Dd::from_f64(2.0))
    }
}

impl Add for Dd {
    type Output = Dd;
    fn add(self, y: Dd) -> Dd {
        let s = two_sum(self.hi, y.hi);
        let t = two_sum(self.lo, y.lo);
        let s = quick_two_sum(s.hi, s.lo + t.hi);
        quick_two_sum(s.hi, s.lo + t.lo)
    }
}

impl Neg for Dd {
    type Output = Dd;
    fn neg(self) -> Dd {
        Dd { hi: -self.hi, lo: -self.lo }
    }
}

impl Sub for Dd {
    type Output = Dd;
    fn sub(self, y: Dd) -> Dd {
        self + (-y)
    }
}

impl Mul for Dd {
    type Output = Dd;
    fn mul(self, y: Dd) -> Dd {
        let p = two_prod(self.hi, y.hi);
        quick_two_sum(p.hi, p.lo + (self.hi * y.lo + self.lo * y.hi))
    }
}

impl Div for Dd {
    type Output = Dd;
    fn div(self, y: Dd) -> Dd {
        let q1 = self.hi / y.hi;
        let r = self - y * Dd::from_f64(q1);
        let q2 = r.hi / y.hi;
        let r = r - y * Dd::from_f64(q2);
        let q3 = r.hi / y.hi;
        quick_two_sum(q1, q2) + Dd::from_f64(q3)
    }
}

/// A 3-vector of [`Dd`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dd3(pub [Dd; 3]);

impl Dd3 {
    pub fn from_dvec3(v: DVec3) -> Dd3 {
        Dd3([Dd::from_f64(v.x), Dd::from_f64(v.y), Dd::from_f64(v.z)])
    }

    pub fn to_dvec3(self) -> DVec3 {
        DVec3::new(self.0[0].to_f64(), self.0[1].to_f64(), self.0[2].to_f64())
    }

    fn zip(self, o: Dd3, f: impl Fn(Dd, Dd) -> Dd) -> Dd3 {
        Dd3([f(self.0[0], o.0[0]), f(self.0[1], o.0[1]), f(self.0[2], o.0[2])])
    }

    pub fn add(self, o: Dd3) -> Dd3 {
        self.zip(o, |a, b| a + b)
    }

    pub fn sub(self, o: Dd3) -> Dd3 {
        self.zip(o, |a, b| a - b)
    }

    /// Componentwise product.
    pub fn mul(self, o: Dd3) -> Dd3 {
        self.zip(o, |a, b| a * b)
    }

    /// Componentwise quotient.
    pub fn div(self, o: Dd3) -> Dd3 {
        self.zip(o, |a, b| a / b)
    }

    pub fn scale(self, k: Dd) -> Dd3 {
        Dd3(self.0.map(|a| a * k))
    }

    pub fn length(self) -> Dd {
        let [x, y, z] = self.0;
        (x * x + y * y + z * z).sqrt()
    }

    pub fn normalize(self) -> Dd3 {
        let inv = Dd::from_f64(1.0) / self.length();
        self.scale(inv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_what_f64_rounds_away() {
        let big = Dd::from_f64(6.4e6);
        let tiny = Dd::from_f64(1e-12);
        let back = (big + tiny) - big;
        assert_eq!(back.to_f64(), 1e-12);
        let third = Dd::from_f64(1.0) / Dd::from_f64(3.0);
        let one = third * Dd::from_f64(3.0);
        assert!((one - Dd::from_f64(1.0)).to_f64().abs() < 1e-31);
        let root = Dd::from_f64(2.0).sqrt();
        assert!((root * root - Dd::from_f64(2.0)).to_f64().abs() < 1e-31);
    }
}
