//! Summary statistics of timing samples, NVBench style.

use serde::Serialize;

/// Min / median / max / mean of a set of samples (milliseconds) and their noise.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub samples: usize,
    /// Smallest sample.
    pub min: f64,
    /// Median (mean of the two middle samples for an even count).
    pub median: f64,
    /// Largest sample.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Relative standard deviation in percent (sample std dev / mean * 100); 0 for < 2 samples.
    pub noise_pct: f64,
}

impl Summary {
    /// Summarises `samples`; all zero when empty.
    pub fn of(samples: &[f64]) -> Self {
        if samples.is_empty() {
            return Self::default();
        }
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            0.5 * (s[n / 2 - 1] + s[n / 2])
        };
        let mean = s.iter().sum::<f64>() / n as f64;
        let noise_pct = if n >= 2 && mean > 0.0 {
            let var = s.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
            100.0 * var.sqrt() / mean
        } else {
            0.0
        };
        Self {
            samples: n,
            min: s[0],
            median,
            max: s[n - 1],
            mean,
            noise_pct,
        }
    }
}

/// Median of `samples` (0 when empty).
pub fn median(samples: &[f64]) -> f64 {
    Summary::of(samples).median
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_and_even_medians() {
        let s = Summary::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.min, s.median, s.max), (1.0, 2.0, 3.0));
        assert_eq!(Summary::of(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
        assert_eq!(Summary::of(&[]).samples, 0);
    }

    #[test]
    fn noise_is_relative_std_dev() {
        let s = Summary::of(&[9.0, 11.0]);
        // std dev (n-1) = sqrt(2), mean 10.
        assert!((s.noise_pct - 100.0 * 2f64.sqrt() / 10.0).abs() < 1e-12);
        assert_eq!(Summary::of(&[5.0, 5.0, 5.0]).noise_pct, 0.0);
    }
}
