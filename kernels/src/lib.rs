//! gprox-cuda: the CUDA kernels, their launchers on cudarc, and the host emulator.
