//! Parameter rectangles of surfaces.

/// A parameter rectangle `[u0, u1] x [v0, v1]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamRect {
    /// Start in u.
    pub u0: f64,
    /// End in u.
    pub u1: f64,
    /// Start in v.
    pub v0: f64,
    /// End in v.
    pub v1: f64,
}

impl ParamRect {
    /// The rectangle `[u0, u1] x [v0, v1]`.
    pub fn new(u0: f64, u1: f64, v0: f64, v1: f64) -> Self {
        Self { u0, u1, v0, v1 }
    }

    /// Mid-point `(u, v)`.
    pub fn mid(&self) -> (f64, f64) {
        (0.5 * (self.u0 + self.u1), 0.5 * (self.v0 + self.v1))
    }

    /// The four corners in the order 00, 10, 01, 11.
    pub fn corners(&self) -> [(f64, f64); 4] {
        [
            (self.u0, self.v0),
            (self.u1, self.v0),
            (self.u0, self.v1),
            (self.u1, self.v1),
        ]
    }

    /// Halves at the mid-parameter of u (`along_u`) or of v.
    pub fn halves(&self, along_u: bool) -> [Self; 2] {
        let (um, vm) = self.mid();
        if along_u {
            [
                Self::new(self.u0, um, self.v0, self.v1),
                Self::new(um, self.u1, self.v0, self.v1),
            ]
        } else {
            [
                Self::new(self.u0, self.u1, self.v0, vm),
                Self::new(self.u0, self.u1, vm, self.v1),
            ]
        }
    }

    /// Splits at parameter `t` of u (`along_u`) or of v.
    pub fn split_at(&self, along_u: bool, t: f64) -> [Self; 2] {
        if along_u {
            [
                Self::new(self.u0, t, self.v0, self.v1),
                Self::new(t, self.u1, self.v0, self.v1),
            ]
        } else {
            [
                Self::new(self.u0, self.u1, self.v0, t),
                Self::new(self.u0, self.u1, t, self.v1),
            ]
        }
    }

    /// Whether `(u, v)` lies in the closed rectangle.
    pub fn contains(&self, u: f64, v: f64) -> bool {
        u >= self.u0 && u <= self.u1 && v >= self.v0 && v <= self.v1
    }
}
