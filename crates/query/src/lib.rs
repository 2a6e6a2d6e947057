//! gprox-query: the CPU backend's queries (collision, distance, CCD, ...), parallel with rayon.
