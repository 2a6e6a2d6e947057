//! One-byte quantisation of error values: `value_k = base * r^k`, `r = 10^(-7/255)`, so
//! `value_255 = base * 1e-7` (paper §3). Quantisation rounds *up*: the stored level never
//! under-estimates the value.

/// The ratio `r = 10^(-7/255)` between consecutive levels.
pub fn ratio() -> f64 {
    10f64.powf(-7.0 / 255.0)
}

/// The value of level `k` for a given base: `base * 10^(-7 k / 255)`.
#[inline]
pub fn dequantise(k: u8, base: f64) -> f64 {
    base * levels()[usize::from(k)]
}

/// `10^(-7 k / 255)` for every level `k`, computed once (`powf` per call dominated the
/// Coons-level bounds).
fn levels() -> &'static [f64; 256] {
    static LEVELS: std::sync::OnceLock<[f64; 256]> = std::sync::OnceLock::new();
    LEVELS.get_or_init(|| std::array::from_fn(|k| 10f64.powf(-7.0 * k as f64 / 255.0)))
}

/// The largest level `k` with `dequantise(k, base) >= value`, or `None` when `value > base`
/// (or is not a finite non-negative number), i.e. when no level bounds it.
pub fn quantise(value: f64, base: f64) -> Option<u8> {
    if !(value.is_finite() && value >= 0.0 && value <= base && base > 0.0) {
        return None;
    }
    if value <= dequantise(255, base) {
        return Some(255);
    }
    let guess = ((value / base).log10() * (-255.0 / 7.0))
        .floor()
        .clamp(0.0, 255.0) as i32;
    let mut k = guess;
    while k > 0 && dequantise(k as u8, base) < value {
        k -= 1;
    }
    while k < 255 && dequantise((k + 1) as u8, base) >= value {
        k += 1;
    }
    Some(k as u8)
}
